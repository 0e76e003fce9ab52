// One way every controller takes an action on the cluster: the action is planned as data (what,
// on which object, why, and the call that does it), then `act` runs it and records it through the
// ActionRecorder (Event, audit line, onto_actions_total), as done or as failed. Planning is pure,
// so the decisions are unit-tested from in-memory caches without running anything.
//
// Routine work is summarised in Events: the actions of a run that carry a `summary` (the creation
// of what is missing) get one Event for the run, "created 78 objects: postgres 9, redis 7, ...",
// instead of one each, so converging a platform does not cost an Event create per object (half of
// all requests before). Each still has its own audit line and metric. What a person must see one by
// one keeps its own Event: failures, reverted drift, spec and upgrade changes, prunes, healing.
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
  /**
   * Done actions of one actAll with the same summary share one Event: `phrase` is its verb
   * ("created"), `group` what the count is shown under (the component).
   */
  summary?: { phrase: string; group: string } | undefined;
}

/** An action to take on the cluster. */
export interface ClusterAction extends ActionNote {
  /** Recorded instead of reason and message when it fails. */
  failure?: { reason: string; message: string };
  /** Names the object in the reconcile's list of errors, e.g. "prune Secret/x". */
  label: string;
  /**
   * Actions next to each other with the same wave run together (up to WAVE_CONCURRENCY at once);
   * the next one starts when the whole wave has ended. Absent: alone, in turn.
   */
  wave?: number | undefined;
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

/** Records `note` (done, or failed with `error`); `summarized`: its Event is a summary's. */
export function record(ctx: ActionContext, note: ActionNote, error?: string, summarized = false): void {
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
    summarized,
  });
}

/**
 * Runs one action and records it; never throws (a failure is an outcome). `summarized`: a done
 * action's Event is left to the caller's summary (a failure always has its own).
 */
export async function act(
  ctx: ActionContext,
  action: ClusterAction,
  summarized = false,
): Promise<ActOutcome> {
  try {
    const took = await action.run(ctx.client);
    if (took) record(ctx, action, undefined, summarized);
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
 * Requests one wave keeps in flight: the API server here accepts about twice as many writes per
 * second at 4–16 in flight as at one (bench `ceiling`), and a pass of one platform should not take
 * the whole server from the others reconciled at the same time.
 */
export const WAVE_CONCURRENCY = 8;

/**
 * Runs `actions` in order, a wave of them at a time (each is independent: a failure does not stop
 * the rest). `stop`, asked before each action starts, ends the run early (e.g. the platform was
 * deleted meanwhile: the rest would only write objects the garbage collector is removing).
 * Results, errors and summaries keep the actions' order, whatever order the answers came in.
 */
export async function actAll(
  ctx: ActionContext,
  actions: readonly ClusterAction[],
  stop?: () => boolean,
): Promise<ActResults> {
  const outcomes: (ActOutcome | undefined)[] = [];
  let stopped = false;
  for (const wave of waves(actions)) {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < wave.length && !stopped) {
        const i = next++;
        if (stop?.()) {
          stopped = true;
          return;
        }
        const { index, action } = wave[i]!;
        outcomes[index] = await act(ctx, action, action.summary !== undefined);
      }
    };
    await Promise.all(Array.from({ length: Math.min(WAVE_CONCURRENCY, wave.length) }, worker));
    if (stopped) break;
  }
  const results: ActResults = { changed: 0, errors: [], causes: [] };
  const summarised: ClusterAction[] = [];
  actions.forEach((action, i) => {
    const outcome = outcomes[i];
    if (!outcome) return;
    if (!outcome.ok) {
      results.errors.push(`${action.label}: ${outcome.error}`);
      results.causes.push(outcome.cause);
    } else if (outcome.took) {
      results.changed++;
      if (action.summary) summarised.push(action);
    }
  });
  recordSummaries(ctx, summarised);
  return results;
}

/** `actions` cut into runs that go together: neighbours with the same wave; without one, alone. */
function waves(actions: readonly ClusterAction[]): { index: number; action: ClusterAction }[][] {
  const runs: { index: number; action: ClusterAction }[][] = [];
  actions.forEach((action, index) => {
    const last = runs.at(-1);
    const joins = action.wave !== undefined && last?.[0]?.action.wave === action.wave;
    if (joins) last.push({ index, action });
    else runs.push([{ index, action }]);
  });
  return runs;
}

/**
 * One Event per verb, reason and phrase of `done`: a single action's own message, else the count
 * by group in the order first done ("created 12 objects: postgres 5, redis 7").
 */
function recordSummaries(ctx: ActionContext, done: readonly ClusterAction[]): void {
  const runs = new Map<string, ClusterAction[]>();
  for (const action of done) {
    const key = `${action.verb}\0${action.reason}\0${action.summary?.phrase ?? ""}`;
    const run = runs.get(key);
    if (run) run.push(action);
    else runs.set(key, [action]);
  }
  for (const run of runs.values()) {
    const first = run[0];
    if (!first?.summary) continue;
    if (run.length === 1) {
      ctx.recorder.summary(ctx.platform, first.verb, first.reason, first.message);
      continue;
    }
    const counts = new Map<string, number>();
    for (const action of run) {
      const group = action.summary?.group ?? "";
      counts.set(group, (counts.get(group) ?? 0) + 1);
    }
    const byGroup = [...counts].map(([group, n]) => `${group} ${n}`).join(", ");
    ctx.recorder.summary(
      ctx.platform,
      first.verb,
      first.reason,
      `${first.summary.phrase} ${run.length} objects: ${byGroup}`,
    );
  }
}
