// Re-creating a StatefulSet whose desired spec changes a field the API server refuses to change
// (a larger claim template, another podManagementPolicy), keeping its pods: the StatefulSet is
// deleted with propagationPolicy Orphan, so the garbage collector only removes the pods' and
// ControllerRevisions' owner references, and once it is gone the desired StatefulSet is applied;
// its selector matches the same pods, so the StatefulSet controller adopts them and their
// ControllerRevision (the pod template did not change, so neither did its hash) and restarts
// nothing. PersistentVolumeClaims are never owned by the StatefulSet under retention Retain and
// are left alone either way.
//
// Safety: only a StatefulSet this platform created is deleted, only by its uid (a precondition),
// and only after the API server accepted the desired object in a dry-run create, so the delete
// is never followed by a create that cannot succeed. A pass interrupted between the delete and the
// create (the operator killed) leaves the pods and claims running without a StatefulSet, or a
// StatefulSet still terminating: the next pass finds it so and creates it.
import type { OntoPlatform } from "../../api/index.js";
import { type KubeClient, type KubeObject, type ObjectRef } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import type { ClusterAction } from "../shared/act.js";
import { isTerminating } from "../shared/kube-views.js";
import { objectId } from "./apply.js";
import { firstDifference } from "./drift.js";
import { ownedBy } from "./prune.js";

/**
 * The StatefulSet spec fields the API server refuses to update (apps/v1 validation lets only
 * replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
 * persistentVolumeClaimRetentionPolicy and minReadySeconds change).
 */
export const IMMUTABLE_STATEFULSET_FIELDS = [
  "selector",
  "serviceName",
  "podManagementPolicy",
  "volumeClaimTemplates",
] as const;

/** How long one pass waits for an orphan delete to finish before it leaves it to the next pass. */
const GONE_TIMEOUT_MS = 30_000;
const GONE_POLL_MS = 250;

type Spec = Record<string, unknown>;
const specOf = (obj: KubeObject | RenderedObject): Spec => (obj as { spec?: Spec }).spec ?? {};

/**
 * The immutable fields `desired` sets to another value than `live` has, as paths (e.g.
 * spec.volumeClaimTemplates[0].spec.resources.requests.storage). Fields the API server defaults
 * on the live object and desired leaves out are not differences.
 */
export function immutableChanges(desired: RenderedObject, live: KubeObject): string[] {
  const want = specOf(desired);
  const have = specOf(live);
  const changes: string[] = [];
  for (const field of IMMUTABLE_STATEFULSET_FIELDS) {
    if (want[field] === undefined) continue;
    const diff = firstDifference(want[field], have[field], `spec.${field}`);
    // A list of another length differs at the list itself.
    if (diff !== undefined) changes.push(diff);
  }
  return changes;
}

export interface Recreations {
  actions: ClusterAction[];
  /** The StatefulSets (objectId) these actions write: the apply stage leaves them alone. */
  ids: Set<string>;
}

/** The re-creations `desired` needs; `live` finds an object's cached copy. */
export function planRecreations(
  platform: OntoPlatform,
  desired: readonly RenderedObject[],
  live: (obj: RenderedObject) => KubeObject | undefined,
): Recreations {
  const actions: ClusterAction[] = [];
  const ids = new Set<string>();
  for (const obj of desired) {
    if (obj.kind !== "StatefulSet") continue;
    const current = live(obj);
    if (!current || !ownedBy(current, platform)) continue;
    const id = objectId(obj.kind, obj.metadata.name);
    const target: ObjectRef = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
    };
    if (isTerminating(current)) {
      ids.add(id);
      actions.push({
        verb: "create",
        target,
        reason: "Recreated",
        message: `re-created ${id} after its deletion finished; its pods were kept`,
        failure: { reason: "RecreateFailed", message: `could not re-create ${id}` },
        label: `re-create ${id}`,
        run: async (client) => {
          await waitUntilGone(client, target, current.metadata?.uid);
          await client.apply(obj, { force: true });
          return true;
        },
      });
      continue;
    }
    const changes = immutableChanges(obj, current);
    if (changes.length === 0) continue;
    ids.add(id);
    actions.push({
      verb: "create",
      target,
      reason: "Recreated",
      message: `re-created ${id} keeping its pods (deleted with orphan propagation, then created): the API server does not update ${changes.join(", ")}`,
      failure: {
        reason: "RecreateFailed",
        message: `could not re-create ${id} with a changed ${changes.join(", ")}`,
      },
      label: `re-create ${id}`,
      run: (client) => recreate(client, obj, current),
    });
  }
  return { actions, ids };
}

/** The name a dry-run create is checked under (the real name exists, so a create under it fails). */
function checkName(name: string): string {
  return `${name.slice(0, 240)}-recreate-check`;
}

async function recreate(client: KubeClient, desired: RenderedObject, cached: KubeObject): Promise<boolean> {
  const ref: ObjectRef = {
    apiVersion: desired.apiVersion,
    kind: desired.kind,
    namespace: desired.metadata.namespace,
    name: desired.metadata.name,
  };
  // The cache can lag behind a re-creation this operator just did: decide on the server's copy.
  const live = await client.getIfExists(ref);
  if (!live) {
    await client.apply(desired, { force: true });
    return true;
  }
  if (live.metadata?.uid !== cached.metadata?.uid && immutableChanges(desired, live).length === 0)
    return false;
  // Never delete what cannot be created again: the API server validates (and admits) the desired
  // object in a dry run first; a refusal throws here, before anything is deleted.
  await client.apply(
    { ...desired, metadata: { ...desired.metadata, name: checkName(desired.metadata.name) } },
    { force: true, dryRun: true },
  );
  const uid = live.metadata?.uid;
  await client.delete(ref, { propagationPolicy: "Orphan", ...(uid ? { preconditions: { uid } } : {}) });
  await waitUntilGone(client, ref, uid);
  await client.apply(desired, { force: true });
  return true;
}

/** Waits until the object with `uid` is gone (deleted, or replaced by another object). */
async function waitUntilGone(client: KubeClient, ref: ObjectRef, uid: string | undefined): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  for (;;) {
    const now = await client.getIfExists(ref);
    if (!now || now.metadata?.uid !== uid) return;
    if (Date.now() > deadline)
      throw new Error(
        `${ref.kind}/${ref.name} is still being deleted after ${GONE_TIMEOUT_MS / 1000} s (finalizers ${JSON.stringify(now.metadata?.finalizers ?? [])}); the next pass creates it`,
      );
    await new Promise((resolve) => setTimeout(resolve, GONE_POLL_MS));
  }
}
