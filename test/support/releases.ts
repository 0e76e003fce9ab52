// Release objects for tests: a test release is a YAML file of OntoRelease objects (test/releases/)
// that a test applies to the cluster before it starts an operator, or adds while one runs. The
// operator reads them like any user's release; nothing is injected into it.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { validateOntoRelease, type OntoRelease } from "../../src/api/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { BUILT_IN_RELEASES, catalogFrom, type ReleaseCatalog } from "../../src/release/index.js";

/** The OntoRelease objects of a YAML file; throws naming the field when one is invalid. */
export function readReleases(file: string): OntoRelease[] {
  const docs = parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null);
  return docs.map((doc, i) => {
    const issues = validateOntoRelease(doc);
    if (issues.length > 0)
      throw new Error(
        `${file} document ${i + 1}: ${issues.map((x) => `${x.path}: ${x.message}`).join("; ")}`,
      );
    return doc as OntoRelease;
  });
}

/** Applies every release of `file` (server-side apply, so applying it again changes nothing). */
export async function applyReleases(client: KubeClient, file: string): Promise<OntoRelease[]> {
  const releases = readReleases(file);
  for (const release of releases) await client.apply(release, { force: true });
  return releases;
}

export async function deleteReleases(client: KubeClient, names: string[]): Promise<void> {
  for (const name of names)
    await client
      .delete({ apiVersion: "onto.paas/v1alpha1", kind: "OntoRelease", name })
      .catch(() => undefined);
}

/** The catalog an operator builds from its built-in releases and `file` (for tests without a cluster). */
export function catalogWithFile(file: string): ReleaseCatalog {
  return catalogFrom(BUILT_IN_RELEASES, readReleases(file)).catalog;
}
