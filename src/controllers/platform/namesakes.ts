// Objects of the names the platform renders that already exist and are not the platform's: a
// user's own Certificate or ConfigMap, or another platform's objects in a shared namespace. Applied
// with the operator's field manager and force, they would be taken over, given the platform as
// their owner and deleted with it; instead they are left as they are and named in a condition.
import { INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, REASON } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { objectId } from "./apply.js";
import { labelledFor, ownerIs } from "./prune.js";
import type { SpecProblem } from "./status.js";

export interface PlatformIdentity {
  name: string;
  uid: string;
}

/**
 * Whether the platform may apply over `live`: the platform owns it, or it is labelled as made by
 * this operator for a platform of this name (one retained from an earlier platform of the name, a
 * Secret kept by retentionPolicy, has lost its owner reference but not its labels).
 */
export function isPlatformObject(live: KubeObject, platform: PlatformIdentity): boolean {
  return ownerIs(live, platform.uid) || labelledFor(live, platform.name);
}

export interface Namesakes {
  /** objectId of each desired object whose name is taken. */
  ids: Set<string>;
  problems: SpecProblem[];
}

/** The desired objects whose live namesake is not the platform's, and the problem each makes. */
export function findNamesakes(
  desired: readonly RenderedObject[],
  live: (obj: RenderedObject) => KubeObject | undefined,
  platform: PlatformIdentity,
): Namesakes {
  const ids = new Set<string>();
  const problems: SpecProblem[] = [];
  for (const obj of desired) {
    const current = live(obj);
    if (!current || isPlatformObject(current, platform)) continue;
    const id = objectId(obj.kind, obj.metadata.name);
    ids.add(id);
    problems.push({
      field: id,
      reason: REASON.NameTaken,
      message: `exists and is not this platform's (no owner reference to it, no labels ${MANAGED_BY_LABEL}=${MANAGED_BY} and ${INSTANCE_LABEL}=${platform.name}): left as it is; delete or rename it for the platform to create its own`,
    });
  }
  return { ids, problems };
}
