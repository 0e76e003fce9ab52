// One way every controller takes an action on the cluster: the action is planned as data (what,
// on which object, why, and the call that does it), then `act` runs it and records it through the
// ActionRecorder (Event, audit line, onto_actions_total), as done or as failed. Planning is pure,
// so the decisions are unit-tested from in-memory caches without running anything.
import type { KubeClient, ObjectRef } from "../../kube/index.js";
import { errorFields } from "../../runtime/index.js";
import type { ActionRecord, ActionRecorder, ActionVerb } from "./actions.js";

/** An action as recorded: the Event's and audit line's words. */
export interface ActionNote {
  verb: ActionVerb;
  target: ObjectRef;
  reason: string;
  message: string;
  warning?: boolean | undefined;
}

/** An action to take on the cluster. */
export interface ClusterAction extends ActionNote {
  /** Recorded instead of reason and message when it fails. */
  failure?: { reason: string; message: string };
  /** Names the object in the reconcile's list of errors, e.g. "prune Secret/x". */
  label: string;
  /** Does it; false when there was nothing to do (not recorded). */
  run(client: KubeClient): Promise<boolean>;
}

/** Who acts, for whom, in which reconcile. */
export interface ActionContext {
  client: KubeClient;
  recorder: ActionRecorder;
  actor: string;
  platform: ActionRecord["platform"];
  reconcileId: string;
}

export type ActOutcome = { ok: true; took: boolean } | { ok: false; error: string; cause: unknown };

/** Records `note` (done, or failed with `error`). */
export function record(ctx: ActionContext, note: ActionNote, error?: string): void {
  ctx.recorder.record({
    platform: ctx.platform,
    verb: note.verb,
    target: note.target,
    reason: note.reason,
    message: note.message,
    reconcileId: ctx.reconcileId,
    actor: ctx.actor,
    outcome: error === undefined ? "ok" : "error",
    error,
    warning: note.warning,
  });
}

/** Runs one action and records it; never throws (a failure is an outcome). */
export async function act(ctx: ActionContext, action: ClusterAction): Promise<ActOutcome> {
  try {
    const took = await action.run(ctx.client);
    if (took) record(ctx, action);
    return { ok: true, took };
  } catch (err) {
    const error = errorFields(err).error;
    record(ctx, { ...action, ...(action.failure ?? {}) }, error);
    return { ok: false, error, cause: err };
  }
}

/** What a list of actions did: how many took effect, and one line per failure. */
export interface ActResults {
  changed: number;
  errors: string[];
  /** The errors themselves, one per line of `errors` (what caused them, e.g. an unreachable server). */
  causes: unknown[];
}

/**
 * Runs `actions` one after the other (each is independent: a failure does not stop the rest).
 * `stop`, asked before each action, ends the run early (e.g. the platform was deleted meanwhile:
 * the rest would only write objects the garbage collector is removing).
 */
export async function actAll(
  ctx: ActionContext,
  actions: readonly ClusterAction[],
  stop?: () => boolean,
): Promise<ActResults> {
  const results: ActResults = { changed: 0, errors: [], causes: [] };
  for (const action of actions) {
    if (stop?.()) break;
    const outcome = await act(ctx, action);
    if (!outcome.ok) {
      results.errors.push(`${action.label}: ${outcome.error}`);
      results.causes.push(outcome.cause);
    } else if (outcome.took) results.changed++;
  }
  return results;
}
