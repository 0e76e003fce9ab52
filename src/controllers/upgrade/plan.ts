// What an upgrade changes and whether it may start: the components whose image differs between
// the version each one runs and the target, in upgrade order (the planes of seed 3.2), and the
// guard rails on the path from the version the platform fully runs.
import type { ComponentInfo } from "../../api/index.js";
import { imageFor, isDowngrade, skippedMinors, type ReleaseCatalog } from "../../release/index.js";

/** The image `component` runs at `version` (the catalog's rule, with the spec's registry). */
export function imageAt(
  releases: ReleaseCatalog,
  component: string,
  version: string,
  registry: string,
): string {
  return imageFor(releases.releaseFor(version), component, registry);
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
  registry: string,
): string[] {
  return components
    .filter((c) => {
      const from = current.get(c.name) ?? target;
      return imageAt(releases, c.name, from, registry) !== imageAt(releases, c.name, target, registry);
    })
    .map((c) => c.name);
}

/** Why the path from `from` to `to` is refused unless forced; undefined: it is allowed. */
export function refusal(from: string, to: string): string | undefined {
  try {
    if (isDowngrade(from, to)) return `downgrade ${from} -> ${to}`;
    const skipped = skippedMinors(from, to);
    if (skipped.length > 0) return `skipped minor ${from} -> ${to} (skips ${skipped.join(", ")})`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return undefined;
}
