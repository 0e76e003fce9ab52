// Versions of the programs built here for the local images. Each Go version must match the
// requirement in its module under tools/images/; changing one changes the image's cache key.

/** Kubernetes' pause program, from k8s.io/kubernetes' build/pause (its Makefile's TAG). */
export const PAUSE_VERSION = "3.10.2";
/** tools/images/coredns/go.mod */
export const COREDNS_VERSION = "v1.15.0";
/** tools/images/minio/go.mod (the module has no release tags on the proxy: a pseudo-version). */
export const MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c";
/** tools/images/mc/go.mod */
export const MC_VERSION = "v0.0.0-20250313080218-cf909e1063a9";
/** tools/images/archive/go.mod: writes the image archives. */
export const GO_CONTAINERREGISTRY_VERSION = "v0.22.1";
/**
 * The versions of the test releases (samples/releases/local.yaml) whose platform services run the
 * stand-in: its images are tagged with them (a unit test checks the file names only images we build).
 */
export const TEST_RELEASE_VERSIONS = ["1.5.0-local.1", "1.5.0-local.2"] as const;
