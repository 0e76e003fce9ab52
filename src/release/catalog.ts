// The release catalog: which image every component runs in each platform version, looked up by
// version. A catalog is built from the product's releases (built in) and the OntoRelease objects
// of the cluster; catalogFrom decides which object is used for which version, and says why for
// every object (an object that shadows a built-in release without saying so is not used).
import semver from "semver";
import {
  IMAGE_ROLES,
  resolveRelease,
  type ImageRole,
  type OntoRelease,
  type ResolvedReleaseSpec,
} from "../api/index.js";
import { formatImage, mirroredImage } from "./image-ref.js";
import { PRODUCT_RELEASES } from "./product-releases.js";

export { INFRASTRUCTURE_IMAGES, PLATFORM_SERVICES } from "../api/index.js";
export type { InfrastructureImage, PlatformService } from "../api/index.js";

/** One platform version as the operator uses it. */
export interface Release extends ResolvedReleaseSpec {
  /** Built into the operator, or the OntoRelease object (by name) it comes from. */
  readonly source: { readonly kind: "built-in" } | { readonly kind: "object"; readonly name: string };
}

/** Where a platform pulls images from: its registry for the platform services, and an optional mirror for all. */
export interface ImageSource {
  /** spec.global.imageRegistry: the repository prefix of platform services without their own repository. */
  registry: string;
  /** spec.global.imageMirror: every image is pulled from here, keeping its repository path and tag/digest. */
  mirror?: string | undefined;
}

/** A version the catalog does not hold: the message names it and lists what it knows. */
export class UnknownReleaseError extends Error {
  constructor(
    readonly version: string,
    known: readonly string[],
    detail = "",
  ) {
    super(
      `spec.version: platform version "${version}" is not in the release catalog (neither built in nor an accepted OntoRelease object${detail ? `; ${detail}` : ""}; known: ${known.join(", ")})`,
    );
  }
}

/** Where the operator looks releases up. */
export interface ReleaseCatalog {
  /** The release of `version`; throws UnknownReleaseError. */
  releaseFor(version: string): Release;
  find(version: string): Release | undefined;
  /** Every version the catalog knows, oldest first (semver order). */
  readonly versions: readonly string[];
  /** Why a version is missing although objects name it (shadowing, conflicts), for the UnknownRelease message. */
  whyMissing?(version: string): string | undefined;
}

export function compareVersions(a: string, b: string): number {
  const x = semver.parse(a);
  const y = semver.parse(b);
  if (x && y) return semver.compare(x, y);
  return a.localeCompare(b);
}

/** A catalog of exactly `releases` (one per version; the later of two duplicates wins). */
export function catalogOf(
  releases: readonly Release[],
  missing: ReadonlyMap<string, string> = new Map(),
): ReleaseCatalog {
  const byVersion = new Map(releases.map((r) => [r.version, r]));
  const versions = [...byVersion.keys()].sort(compareVersions);
  return {
    versions,
    find: (version) => byVersion.get(version),
    releaseFor(version) {
      const found = byVersion.get(version);
      if (!found) throw new UnknownReleaseError(version, versions, missing.get(version));
      return found;
    },
    whyMissing: (version) => missing.get(version),
  };
}

export const BUILT_IN_RELEASES: readonly Release[] = PRODUCT_RELEASES.map((r) => ({
  ...r,
  source: { kind: "built-in" },
}));

export const PRODUCT_CATALOG: ReleaseCatalog = catalogOf(BUILT_IN_RELEASES);

/** Every platform version built into the operator, oldest first. */
export const KNOWN_VERSIONS: readonly string[] = PRODUCT_CATALOG.versions;

/** The built-in release of `version` (throws for a version the product does not ship). */
export function releaseFor(version: string): Release {
  return PRODUCT_CATALOG.releaseFor(version);
}

function isImageRole(name: string): name is ImageRole {
  return (IMAGE_ROLES as readonly string[]).includes(name);
}

/**
 * The image a component runs in a release. `name` is a component's Kubernetes name or an image
 * role (e.g. "minio-client" for the bucket Job). `where` is the platform's registry (a string) or
 * its registry and mirror.
 */
export function imageFor(release: Release, name: string, where: string | ImageSource): string {
  if (!isImageRole(name)) throw new Error(`release ${release.version}: no image for component "${name}"`);
  const source: ImageSource = typeof where === "string" ? { registry: where } : where;
  const image = release.images[name];
  const repository = image.repository ?? `${source.registry.replace(/\/+$/, "")}/${name}`;
  const ref = formatImage(repository, image);
  return source.mirror ? mirroredImage(ref, source.mirror) : ref;
}

/** Every name imageFor accepts as a component (infrastructure components and platform services). */
export const CATALOG_COMPONENTS: readonly string[] = IMAGE_ROLES.filter((r) => r !== "minio-client");

// ------------------------------------------------------------------ releases from the cluster

/**
 * Why an OntoRelease object is used (Added, MatchesBuiltIn, OverridesBuiltIn) or not
 * (ShadowsBuiltIn, Conflict, Invalid): its Accepted condition's reason, and the reason of the
 * Event recorded on the object when its verdict changes.
 */
export const RELEASE_VERDICT_REASONS = [
  "Added",
  "MatchesBuiltIn",
  "OverridesBuiltIn",
  "ShadowsBuiltIn",
  "Conflict",
  "Invalid",
] as const;
export type ReleaseVerdictReason = (typeof RELEASE_VERDICT_REASONS)[number];

/** What the operator made of one OntoRelease object (its Accepted condition). */
export interface ReleaseVerdict {
  accepted: boolean;
  reason: ReleaseVerdictReason;
  message: string;
}

/** The parts of a release that make it what it is (no description, no override flag), in one key order. */
function substance(spec: ResolvedReleaseSpec): string {
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, sorted(v)]),
      );
    return value;
  };
  const { description: _d, overrideBuiltIn: _o, ...rest } = spec;
  delete (rest as { source?: unknown }).source; // a built-in Release carries where it comes from
  return JSON.stringify(sorted(rest));
}

/** What the API server's schema cannot check: the ranges of the upgrade graph must parse. */
function problems(spec: ResolvedReleaseSpec): string[] {
  const out: string[] = [];
  spec.upgradeFrom.forEach((rule, i) => {
    if (semver.validRange(rule.versions, { includePrerelease: true }) === null)
      out.push(`spec.upgradeFrom[${i}].versions: "${rule.versions}" is not a semantic version range`);
  });
  if (!semver.valid(spec.version)) out.push(`spec.version: "${spec.version}" is not a semantic version`);
  return out;
}

/**
 * The catalog of `builtIn` releases and the cluster's OntoRelease `objects`, and a verdict per
 * object name. A version not built in comes from its one object (two objects of one version: a
 * conflict, neither is used). A built-in version is replaced only by an object that sets
 * overrideBuiltIn (exactly one such object); an object that equals the built-in release (the
 * product's own objects) is accepted as matching it, and one that differs without the flag is
 * not used.
 */
export function catalogFrom(
  builtIn: readonly Release[],
  objects: readonly OntoRelease[],
): { catalog: ReleaseCatalog; verdicts: Map<string, ReleaseVerdict> } {
  const verdicts = new Map<string, ReleaseVerdict>();
  const missing = new Map<string, string>();
  const byVersion = new Map<string, { name: string; spec: ResolvedReleaseSpec }[]>();
  for (const obj of objects) {
    if (obj.metadata.deletionTimestamp) continue;
    const spec = resolveRelease(obj.spec);
    const bad = problems(spec);
    if (bad.length > 0) {
      verdicts.set(obj.metadata.name, { accepted: false, reason: "Invalid", message: bad.join("; ") });
      missing.set(spec.version, `OntoRelease ${obj.metadata.name} is invalid: ${bad.join("; ")}`);
      continue;
    }
    byVersion.set(spec.version, [...(byVersion.get(spec.version) ?? []), { name: obj.metadata.name, spec }]);
  }
  const releases = new Map<string, Release>(builtIn.map((r) => [r.version, r]));
  for (const [version, candidates] of byVersion) {
    const names = candidates.map((c) => c.name).sort();
    const builtInRelease = releases.get(version);
    if (!builtInRelease) {
      if (candidates.length === 1) {
        const only = candidates[0] as (typeof candidates)[number];
        releases.set(version, { ...only.spec, source: { kind: "object", name: only.name } });
        verdicts.set(only.name, {
          accepted: true,
          reason: "Added",
          message: `adds platform version ${version}`,
        });
      } else {
        const message = `OntoRelease objects ${names.join(", ")} all name version ${version}: none is used until only one does`;
        for (const c of candidates) verdicts.set(c.name, { accepted: false, reason: "Conflict", message });
        missing.set(version, message);
      }
      continue;
    }
    const overriding = candidates.filter((c) => c.spec.overrideBuiltIn);
    if (overriding.length > 1) {
      const message = `OntoRelease objects ${overriding.map((c) => c.name).join(", ")} all override the built-in ${version}: the built-in release is used until only one does`;
      for (const c of overriding) verdicts.set(c.name, { accepted: false, reason: "Conflict", message });
    } else if (overriding.length === 1) {
      const winner = overriding[0] as (typeof overriding)[number];
      releases.set(version, { ...winner.spec, source: { kind: "object", name: winner.name } });
      verdicts.set(winner.name, {
        accepted: true,
        reason: "OverridesBuiltIn",
        message: `replaces the operator's built-in release ${version} (overrideBuiltIn is true)`,
      });
    }
    const builtInSubstance = substance(builtInRelease);
    for (const c of candidates) {
      if (c.spec.overrideBuiltIn) continue;
      verdicts.set(
        c.name,
        substance(c.spec) === builtInSubstance
          ? {
              accepted: true,
              reason: "MatchesBuiltIn",
              message: `the same as the operator's built-in release ${version}`,
            }
          : {
              accepted: false,
              reason: "ShadowsBuiltIn",
              message: `differs from the operator's built-in release ${version}, which is used instead; set spec.overrideBuiltIn: true to replace it`,
            },
      );
    }
  }
  return { catalog: catalogOf([...releases.values()], missing), verdicts };
}
