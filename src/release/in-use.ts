// The releases a platform needs right now: the one spec.version names, the one it fully runs
// (an upgrade plans from it), and those the last upgrade left components on. A platform that needs
// a release the catalog does not hold is left exactly as it is, with a condition naming the version.
import type { OntoPlatformStatus } from "../api/index.js";
import type { ReleaseCatalog } from "./catalog.js";

export function versionsInUse(specVersion: string, status: OntoPlatformStatus | undefined): string[] {
  const out = new Set([specVersion]);
  if (status?.version) out.add(status.version);
  const record = status?.upgrade;
  if (record && record.phase !== "Succeeded" && record.phase !== "Superseded") {
    const pinned = Object.entries(record.planned ?? {}).filter(
      ([name]) => !record.completedComponents.includes(name),
    );
    for (const [, version] of pinned) out.add(version);
    if (record.completedComponents.length > 0 || record.phase !== "Failed") out.add(record.to);
  }
  return [...out];
}

/** Why the platform cannot be reconciled with `catalog` (a version it needs is unknown), or undefined. */
export function unknownReleases(
  catalog: ReleaseCatalog,
  specVersion: string,
  status: OntoPlatformStatus | undefined,
): string | undefined {
  const missing = versionsInUse(specVersion, status).filter((v) => !catalog.find(v));
  if (missing.length === 0) return undefined;
  const what = missing.map((v) => {
    const why = catalog.whyMissing?.(v);
    return `"${v}"${v === specVersion ? " (spec.version)" : " (still run by some components)"}${why ? `: ${why}` : ""}`;
  });
  return `platform version ${what.join(", ")} not in the release catalog (neither built in nor an accepted OntoRelease object; known: ${catalog.versions.join(", ")}); nothing is changed until it is`;
}
