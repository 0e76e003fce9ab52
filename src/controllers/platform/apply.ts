// Apply, the stage after render: every desired object whose live copy is missing, behind the spec
// or changed by hand is applied (server-side, the operator's field manager), in waves by kind (the
// tenant's guard rails, then what pods use, then the workloads, then what acts on them; render's
// order within a wave), each wave's objects sent together as Helm does.
// The decision per object is drift.ts's applyNeed against the cached live object, so a reconcile
// that finds nothing to change plans nothing and sends nothing.
import { NAME_LABEL } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { applyWave, type RenderedObject } from "../../render/index.js";
import type { ClusterAction } from "../shared/act.js";
import { applyNeed } from "./drift.js";
import { applyOrReplace } from "./jobs.js";

export function objectId(kind: string | undefined, name: string | undefined): string {
  return `${kind ?? "?"}/${name ?? "?"}`;
}

/**
 * The applies `desired` needs; `live` finds an object's cached copy; `created` is told the server's
 * answer to each object created (own-creates.ts keeps it until the cache shows the object).
 */
export function planApply(
  desired: readonly RenderedObject[],
  live: (obj: RenderedObject) => KubeObject | undefined,
  created?: (obj: KubeObject) => void,
): ClusterAction[] {
  const actions: ClusterAction[] = [];
  // Array.prototype.sort is stable: render's order holds within a wave.
  const inWaves = desired.map((obj) => ({ obj, wave: applyWave(obj.kind) })).sort((a, b) => a.wave - b.wave);
  for (const { obj, wave } of inWaves) {
    const id = objectId(obj.kind, obj.metadata.name);
    const current = live(obj);
    const need = applyNeed(obj, current);
    if (!need.apply) continue;
    actions.push({
      verb: need.reason === "Missing" ? "create" : "update",
      target: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
      },
      reason: need.reason,
      message:
        need.reason === "Missing"
          ? `created ${id}`
          : need.reason === "Drift"
            ? `reverted manual change of ${id} at ${need.path ?? "?"}`
            : `updated ${id} to the spec`,
      // Creations share one Event per pass, counted by component; the rest keep their own.
      ...(need.reason === "Missing"
        ? { summary: { phrase: "created", group: obj.metadata.labels?.[NAME_LABEL] ?? "platform" } }
        : {}),
      failure: { reason: "ApplyFailed", message: `could not apply ${id}` },
      label: id,
      wave,
      run: async (client) => {
        const stored = await applyOrReplace(client, obj, current);
        if (need.reason === "Missing") created?.(stored);
        return true;
      },
    });
  }
  return actions;
}
