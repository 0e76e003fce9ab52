// The test releases of samples/releases/local.yaml (OntoRelease objects naming the images the
// project builds itself): a test applies them to the cluster like any user's release; tests
// without a cluster read them into a catalog beside the built-in releases.
import { join } from "node:path";
import type { OntoRelease } from "../../src/api/index.js";
import type { ReleaseCatalog } from "../../src/release/index.js";
import { catalogWithFile, readReleases } from "./releases.js";

export const LOCAL_RELEASES_FILE = join(import.meta.dirname, "../../samples/releases/local.yaml");

/** The release objects of the file, in the file's order. */
export function localReleases(file = LOCAL_RELEASES_FILE): OntoRelease[] {
  return readReleases(file);
}

export const LOCAL_CATALOG: ReleaseCatalog = catalogWithFile(LOCAL_RELEASES_FILE);
