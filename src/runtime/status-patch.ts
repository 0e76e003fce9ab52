// The one way the operator writes an object's status: a JSON merge patch of what changed, guarded
// by the resourceVersion the change was computed from (optimistic lock). When someone else wrote
// in between, the API server answers Conflict; the object is read again and the change computed
// again from what it holds now, so no writer overwrites another's fields with what it read
// before. `update` may throw to refuse (its decision no longer holds for the fresh object): the
// reconcile then fails and is retried with backoff.
import { ConflictError, type KubeClient, type KubeObject, type ObjectRef } from "../kube/index.js";
import { mergePatchDiff } from "./merge-patch.js";

/** What a status writer read: the object's resourceVersion and status. */
export interface StatusRead<S> {
  resourceVersion?: string | undefined;
  status?: S | undefined;
}

export interface StatusPatchOptions {
  /** Writes tried in all (the first plus retries after a conflict). */
  attempts?: number;
}

/**
 * Writes `update(status)` as the new status of `ref`, computed from `read` and, after a conflict,
 * from a fresh read. Resolves to the object the API server returned, or undefined when the
 * update changes nothing (no request is sent then).
 */
export async function patchStatus<S extends object, T extends KubeObject & { status?: S }>(
  client: KubeClient,
  ref: ObjectRef,
  read: StatusRead<S>,
  update: (current: S | undefined) => S,
  opts: StatusPatchOptions = {},
): Promise<T | undefined> {
  const attempts = Math.max(1, opts.attempts ?? 3);
  let base = read;
  for (let attempt = 1; ; attempt++) {
    const patch = mergePatchDiff(base.status ?? {}, update(base.status));
    if (patch === undefined) return undefined;
    const lock = base.resourceVersion ? { metadata: { resourceVersion: base.resourceVersion } } : {};
    try {
      return await client.mergePatch<T>(ref, { ...lock, status: patch }, "status");
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= attempts) throw err;
    }
    const fresh = await client.get<T>(ref);
    base = { resourceVersion: fresh.metadata?.resourceVersion, status: fresh.status };
  }
}
