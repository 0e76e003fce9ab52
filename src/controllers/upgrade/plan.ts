// What an upgrade changes and whether it may start: the components whose image differs between
// the version each one runs and the target, in upgrade order (the planes of seed 3.2), and the
// target release's upgrade graph on the path from the version the platform fully runs.
import type { ComponentInfo, ResolvedSpec } from "../../api/index.js";
import {
  imageFor,
  upgradePath,
  type ImageSource,
  type PathDecision,
  type ReleaseCatalog,
} from "../../release/index.js";

/** Where a platform's images come from: its registry and its mirror. */
export function imageSource(spec: ResolvedSpec): ImageSource {
  return { registry: spec.global.imageRegistry, mirror: spec.global.imageMirror };
}

/** The image `component` runs at `version` (the catalog's rule, with the spec's registry and mirror). */
export function imageAt(
  releases: ReleaseCatalog,
  component: string,
  version: string,
  where: ImageSource,
): string {
  return imageFor(releases.releaseFor(version), component, where);
}

/**
 * The components to upgrade, in `components` order (COMPONENTS is upgrade order): those whose
 * image at `target` differs from the image of the version they run. The same rule as
 * release.changedComponents, per component, because after a failed or superseded upgrade not
 * every component runs the same version.
 */
export function planUpgrade(
  components: readonly ComponentInfo[],
  current: ReadonlyMap<string, string>,
  target: string,
  releases: ReleaseCatalog,
  where: ImageSource,
): string[] {
  return components
    .filter((c) => {
      const from = current.get(c.name) ?? target;
      return imageAt(releases, c.name, from, where) !== imageAt(releases, c.name, target, where);
    })
    .map((c) => c.name);
}

/** How the target's upgrade graph treats the path from `from` to `to` (Refused when `to` is unknown). */
export function pathFor(releases: ReleaseCatalog, from: string, to: string): PathDecision {
  const target = releases.find(to);
  if (!target) return { path: "Refused", message: `${from} -> ${to}: ${to} is not in the release catalog` };
  return upgradePath(target, from);
}

/** Why the target's upgrade graph stops `from` -> `to` (with or without force); undefined: it may start. */
export function pathRefusal(
  releases: ReleaseCatalog,
  from: string,
  to: string,
  forced: boolean,
): { message: string; forceHelps: boolean } | undefined {
  const p = pathFor(releases, from, to);
  if (p.path === "Allowed" || (p.path === "ForceRequired" && forced)) return undefined;
  return { message: p.message ?? `${from} -> ${to}`, forceHelps: p.path === "ForceRequired" };
}
