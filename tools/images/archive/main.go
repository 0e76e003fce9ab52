// Command onto-image-archive turns a root filesystem tarball and an image configuration into a
// docker-archive tarball that `ctr images import` loads, without a container engine or a
// registry. The image formats are written by go-containerregistry; this program only wires
// its pieces together.
//
//	onto-image-archive -rootfs rootfs.tar -config config.json -ref onto.local/busybox:1.35 -out image.tar
//	onto-image-archive -base postgres.tar -rootfs extra.tar -config config.json -ref onto.local/postgres:15-2 -out image.tar
//
// With -base (a docker-archive this program wrote), the image is that image's layers plus the
// rootfs tarball as one more layer: a variant that shares every byte of its base but the new
// layer, so containerd stores and imports only that layer.
//
// config.json holds the image's run configuration in the OCI field names (Entrypoint, Cmd,
// Env, User, WorkingDir, ExposedPorts, Labels). The image digest is printed on stdout.
package main

import (
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	rootfs := flag.String("rootfs", "", "uncompressed tarball of the image's root filesystem")
	configPath := flag.String("config", "", "JSON file with the image's run configuration")
	ref := flag.String("ref", "", "image reference the archive is tagged with")
	out := flag.String("out", "", "path of the docker-archive tarball to write")
	base := flag.String("base", "", "docker-archive tarball of a base image (optional): the rootfs becomes a layer on top of it")
	flag.Parse()
	if *rootfs == "" || *configPath == "" || *ref == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	digest, err := build(*base, *rootfs, *configPath, *ref, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "onto-image-archive:", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

func build(base, rootfs, configPath, ref, out string) (string, error) {
	tag, err := name.NewTag(ref, name.WeakValidation)
	if err != nil {
		return "", fmt.Errorf("reference %q: %w", ref, err)
	}
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return "", err
	}
	var config v1.Config
	if err := json.Unmarshal(raw, &config); err != nil {
		return "", fmt.Errorf("%s: %w", configPath, err)
	}
	layer, err := tarball.LayerFromFile(rootfs, tarball.WithCompressionLevel(gzip.BestSpeed))
	if err != nil {
		return "", fmt.Errorf("layer from %s: %w", rootfs, err)
	}
	var start v1.Image = empty.Image
	if base != "" {
		// The archive holds one image; a nil tag takes it.
		if start, err = tarball.ImageFromPath(base, nil); err != nil {
			return "", fmt.Errorf("base image %s: %w", base, err)
		}
	}
	img, err := mutate.AppendLayers(start, layer)
	if err != nil {
		return "", err
	}
	file, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	file = file.DeepCopy()
	file.OS = "linux"
	file.Architecture = runtime.GOARCH
	file.Config = config
	// A fixed creation time: the same inputs give the same image digest.
	file.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	img, err = mutate.ConfigFile(img, file)
	if err != nil {
		return "", err
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return digest.String(), nil
}
