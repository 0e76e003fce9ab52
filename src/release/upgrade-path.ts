// Facts about moving a platform from one version to another, for the upgrade orchestrator:
// is it a downgrade, does it skip a minor version the catalog knows, which components change.
import semver from "semver";
import { CATALOG_COMPONENTS, KNOWN_VERSIONS, imageFor, releaseFor } from "./catalog.js";

function parse(version: string, field: string): semver.SemVer {
  const parsed = semver.parse(version);
  if (!parsed) throw new Error(`${field}: "${version}" is not a semantic version (e.g. 1.6.0)`);
  return parsed;
}

export function isDowngrade(from: string, to: string): boolean {
  return semver.lt(parse(to, "target version"), parse(from, "current version"));
}

/**
 * The minor lines (e.g. "1.5") the catalog knows that lie strictly between `from` and `to`.
 * Upgrading across one of them skips its migrations, so the orchestrator refuses it unless forced.
 */
export function skippedMinors(from: string, to: string): string[] {
  const a = parse(from, "current version");
  const b = parse(to, "target version");
  const [low, high] = semver.lte(a, b) ? [a, b] : [b, a];
  const key = (v: semver.SemVer): number => v.major * 1_000_000 + v.minor;
  const lines = new Set<string>();
  for (const known of KNOWN_VERSIONS) {
    const v = parse(known, "catalog version");
    if (key(v) > key(low) && key(v) < key(high)) lines.add(`${v.major}.${v.minor}`);
  }
  return [...lines].sort((x, y) => semver.compare(`${x}.0`, `${y}.0`));
}

export function skipsMinor(from: string, to: string): boolean {
  return skippedMinors(from, to).length > 0;
}

/**
 * Components whose image differs between two platform versions, in catalog order. Platform
 * services always change when the version does (their tag is the version).
 */
export function changedComponents(from: string, to: string, registry: string): string[] {
  const a = releaseFor(from);
  const b = releaseFor(to);
  return CATALOG_COMPONENTS.filter((name) => imageFor(a, name, registry) !== imageFor(b, name, registry));
}
