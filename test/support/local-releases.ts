// The test releases of samples/releases/local.yaml (OntoRelease documents) as the operator's
// release catalog: the product catalog plus these versions.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import {
  INFRASTRUCTURE_IMAGES,
  catalogWith,
  type InfrastructureImage,
  type Release,
  type ReleaseCatalog,
} from "../../src/release/index.js";

interface ReleaseDocument {
  kind: string;
  spec: { version: string; images: Record<string, { repository?: string; tag: string }> };
}

export const LOCAL_RELEASES_FILE = join(import.meta.dirname, "../../samples/releases/local.yaml");

export function localReleases(file = LOCAL_RELEASES_FILE): Release[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((doc) => {
    const release = doc.toJS() as ReleaseDocument;
    if (release.kind !== "OntoRelease") throw new Error(`${file}: a ${release.kind}, not an OntoRelease`);
    const images = {} as Record<InfrastructureImage, string>;
    for (const role of INFRASTRUCTURE_IMAGES) {
      const image = release.spec.images[role];
      if (!image?.repository) throw new Error(`${file}: ${release.spec.version} has no image for ${role}`);
      images[role] = `${image.repository}:${image.tag}`;
    }
    return { version: release.spec.version, infrastructure: images };
  });
}

export const LOCAL_CATALOG: ReleaseCatalog = catalogWith(localReleases());
