// Facts about moving a platform from one version to another, for the upgrade orchestrator and the
// CLI, all read from the releases themselves: the target's upgrade graph says whether the path is
// allowed, needs force, or is refused; the releases' points of no return say whether a downgrade
// would undo a step that cannot be undone; the images say which components change.
import semver from "semver";
import type { IrreversibleStep, UpgradePath, UpgradeRule } from "../api/index.js";
import {
  CATALOG_COMPONENTS,
  PRODUCT_CATALOG,
  imageFor,
  type ImageSource,
  type Release,
  type ReleaseCatalog,
} from "./catalog.js";

function parse(version: string, field: string): semver.SemVer {
  const parsed = semver.parse(version);
  if (!parsed) throw new Error(`${field}: "${version}" is not a semantic version (e.g. 1.6.0)`);
  return parsed;
}

export function isDowngrade(from: string, to: string): boolean {
  return semver.lt(parse(to, "target version"), parse(from, "current version"));
}

export interface PathDecision {
  path: UpgradePath;
  /** The rule of the target's upgradeFrom that decided; absent: no rule covers `from`. */
  rule?: UpgradeRule;
  /** Why, for a path that is not Allowed: "<from> -> <to>: <reason>". */
  message?: string;
}

/** How the target release's upgrade graph treats an upgrade from `from`: the first rule that covers it. */
export function upgradePath(target: Release, from: string): PathDecision {
  for (const rule of target.upgradeFrom) {
    if (!semver.satisfies(from, rule.versions, { includePrerelease: true })) continue;
    return rule.path === "Allowed"
      ? { path: "Allowed", rule }
      : { path: rule.path, rule, message: `${from} -> ${target.version}: ${rule.reason ?? rule.path}` };
  }
  return {
    path: "Refused",
    message: `${from} -> ${target.version}: release ${target.version} lists no upgrade path from ${from} (its spec.upgradeFrom covers ${target.upgradeFrom.map((r) => `"${r.versions}"`).join(", ")})`,
  };
}

/** A point of no return of one release. */
export interface PointOfNoReturn extends IrreversibleStep {
  /** The release that marks it. */
  version: string;
}

/**
 * The points of no return a downgrade from `from` to `to` would undo: those of every release
 * above `to` up to `from` (semver order) for the components in `components`. Conservative: a
 * release in between counts even if the platform went past it in one upgrade.
 */
export function pointsUndoneBy(
  catalog: ReleaseCatalog,
  from: string,
  to: string,
  components: readonly string[],
): PointOfNoReturn[] {
  if (!semver.valid(from) || !semver.valid(to) || !semver.lt(to, from)) return [];
  const out: PointOfNoReturn[] = [];
  for (const version of catalog.versions) {
    if (!semver.valid(version) || !semver.gt(version, to) || semver.gt(version, from)) continue;
    for (const step of catalog.find(version)?.irreversible ?? []) {
      if (components.includes(step.component)) out.push({ ...step, version });
    }
  }
  return out;
}

/**
 * Components whose image differs between two platform versions, in catalog order. Platform
 * services change whenever their tag does.
 */
export function changedComponents(
  from: string,
  to: string,
  where: string | ImageSource,
  catalog: ReleaseCatalog = PRODUCT_CATALOG,
): string[] {
  const a = catalog.releaseFor(from);
  const b = catalog.releaseFor(to);
  return CATALOG_COMPONENTS.filter((name) => imageFor(a, name, where) !== imageFor(b, name, where));
}
