// `onto images --version V [--registry MIRROR] [-f releases.yaml] [--from-cluster] [-o json]`:
// every image a platform of version V runs, one per line, for a mirror list (`skopeo sync`,
// `crane copy`). With --registry, each line is "SOURCE DESTINATION": the image and where the
// platform pulls it from once spec.global.imageMirror is that registry (the same rewrite the
// operator renders). Releases: the built-in ones, plus OntoRelease documents of -f files and,
// with --from-cluster, the cluster's objects, resolved by the operator's own rule.
import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import { parseAllDocuments } from "yaml";
import {
  IMAGE_ROLES,
  OntoPlatformSpecSchema,
  validateOntoRelease,
  type ImageRole,
  type OntoRelease,
} from "../../api/index.js";
import { BUILT_IN_RELEASES, catalogFrom, imageFor, type Release } from "../../release/index.js";
import { clusterReleases } from "../releases.js";
import { EnvironmentError, connect, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { structured } from "../output.js";

/** The platform's default spec.global.imageRegistry (where platform services are pulled from). */
const DEFAULT_REGISTRY = String(
  (OntoPlatformSpecSchema.properties.global.default as { imageRegistry: string }).imageRegistry,
);

export interface ImageLine {
  /** The image role: a component, or minio-client (the bucket Job). */
  component: ImageRole;
  image: string;
  /** Where a platform with spec.global.imageMirror = --registry pulls it from. */
  mirror?: string;
}

export interface ImageList {
  version: string;
  /** built-in, or the OntoRelease object the release comes from. */
  source: string;
  images: ImageLine[];
}

/** Every image of `release` (one per role), with its mirror name when `mirror` is given. */
export function releaseImages(release: Release, registry: string, mirror?: string): ImageList {
  return {
    version: release.version,
    source: release.source.kind === "built-in" ? "built-in" : `OntoRelease/${release.source.name}`,
    images: IMAGE_ROLES.map((component) => ({
      component,
      image: imageFor(release, component, { registry }),
      ...(mirror ? { mirror: imageFor(release, component, { registry, mirror }) } : {}),
    })),
  };
}

/** Text form: unique images, one per line; with a mirror, "SOURCE DESTINATION". */
export function formatImageList(list: ImageList): string {
  const lines = list.images.map((i) => (i.mirror ? `${i.image} ${i.mirror}` : i.image));
  return `${[...new Set(lines)].join("\n")}\n`;
}

/** The OntoRelease documents of a YAML file; throws naming the document and field of a bad one. */
export function releasesInFile(file: string): OntoRelease[] {
  let text: string;
  try {
    text = readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    throw new EnvironmentError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null)
    .map((doc, i) => {
      const issues = validateOntoRelease(doc);
      if (issues.length > 0)
        throw new EnvironmentError(
          `${file} document ${i + 1}: ${issues.map((x) => `${x.path}: ${x.message}`).join("; ")}`,
        );
      return doc as OntoRelease;
    });
}

interface ImagesFlags extends ConnectionFlags {
  version: string;
  registry?: string;
  imageRegistry: string;
  filename: string[];
  fromCluster?: boolean;
  output: "text" | "json" | "yaml";
}

export function imagesCommand(): Command {
  const command = new Command("images")
    .description(summaryOf("images"))
    .requiredOption(
      "--version <version>",
      "platform version (built in, or an OntoRelease from -f / the cluster)",
    )
    .option(
      "--registry <mirror>",
      "the mirror (spec.global.imageMirror): print each image with the name it has there",
    )
    .option(
      "--image-registry <registry>",
      "the platform's spec.global.imageRegistry (where platform services come from)",
      DEFAULT_REGISTRY,
    )
    .option(
      "-f, --filename <file>",
      "YAML file of OntoRelease documents to add (repeatable)",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option("--from-cluster", "also read the cluster's OntoRelease objects (kubeconfig flags)")
    .addOption(
      new Option("-o, --output <format>", "output format").choices(["text", "json", "yaml"]).default("text"),
    );
  return withConnectionFlags(command).action(async (flags: ImagesFlags) => {
    const objects = flags.filename.flatMap(releasesInFile);
    if (flags.fromCluster) {
      const { client } = connect(flags);
      try {
        objects.push(...(await clusterReleases(client)));
      } finally {
        await client.close();
      }
    }
    const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, objects);
    const release = catalog.find(flags.version);
    if (!release) {
      const why = catalog.whyMissing?.(flags.version);
      throw new EnvironmentError(
        `unknown platform version ${flags.version}${why ? ` (${why})` : ""}; known: ${catalog.versions.join(", ")}`,
      );
    }
    for (const o of objects) {
      const verdict = verdicts.get(o.metadata.name);
      if (verdict && !verdict.accepted && o.spec.version === flags.version)
        process.stderr.write(`OntoRelease ${o.metadata.name} not used: ${verdict.message}\n`);
    }
    const list = releaseImages(release, flags.imageRegistry, flags.registry);
    process.stdout.write(flags.output === "text" ? formatImageList(list) : structured(list, flags.output));
  });
}
