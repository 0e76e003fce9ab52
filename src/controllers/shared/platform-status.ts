// How every controller writes an OntoPlatform's status: through runtime's patchStatus (a merge
// patch of what changed, guarded by the resourceVersion it was computed from, computed again from
// a fresh read after a conflict). The reconciler, its upgrade write-ahead and the healer all write
// here, so two writers never overwrite each other's fields with what they read before.
import { PLATFORM_REF, boundedText, type OntoPlatform, type OntoPlatformStatus } from "../../api/index.js";
import type { KubeClient, KubeObject, ObjectRef } from "../../kube/index.js";
import { patchStatus } from "../../runtime/index.js";

export function platformRef(platform: OntoPlatform): ObjectRef {
  return { ...PLATFORM_REF, namespace: platform.metadata.namespace, name: platform.metadata.name };
}

/** Thrown by an update whose decision was made from a status that has changed since. */
export class StaleStatusError extends Error {
  constructor(what: string) {
    super(`${what} changed since it was read: deciding again`);
    this.name = "StaleStatusError";
  }
}

/**
 * Writes `update(status)` over what `platform` holds (or, after a conflict, over what the API server
 * holds then). Resolves to the platform as written, or undefined when nothing changed.
 */
export async function writePlatformStatus(
  client: KubeClient,
  platform: OntoPlatform,
  update: (current: OntoPlatformStatus) => OntoPlatformStatus,
): Promise<OntoPlatform | undefined> {
  const written = await patchStatus<OntoPlatformStatus, OntoPlatform & KubeObject>(
    client,
    platformRef(platform),
    { resourceVersion: platform.metadata.resourceVersion, status: platform.status },
    (current) => withBoundedMessages(update(current ?? {})),
  );
  return written;
}

/**
 * `status` with every condition, component and upgrade failure message within the schema's bound: a status the
 * API server refuses as a whole would leave the platform with the status it had before, however
 * wrong, so whichever writer produced a long message, it is cut here.
 */
export function withBoundedMessages(status: OntoPlatformStatus): OntoPlatformStatus {
  const conditions = status.conditions?.map((c) => ({ ...c, message: boundedText(c.message) }));
  const components = status.componentStatuses
    ? Object.fromEntries(
        Object.entries(status.componentStatuses).map(([name, state]) => [
          name,
          state.message === undefined ? state : { ...state, message: boundedText(state.message) },
        ]),
      )
    : undefined;
  const failure = status.upgrade?.failure;
  const upgrade =
    status.upgrade && failure
      ? { ...status.upgrade, failure: { ...failure, message: boundedText(failure.message) } }
      : status.upgrade;
  return {
    ...status,
    ...(upgrade ? { upgrade } : {}),
    ...(conditions ? { conditions } : {}),
    ...(components ? { componentStatuses: components } : {}),
  };
}
