// What is written to status before anything is applied, so a crash between the write and the apply
// renders the same objects again: the vertical scaling the VPAs recommend (status.verticalScaling,
// which render reads), and the upgrade orchestrator's decision (the new status.upgrade and the
// Upgrading condition), so the step it decided resumes. What was decided is recorded (Event and
// audit line) once the write succeeded.
import {
  CONDITION,
  readableBytes,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { canonical, setCondition } from "../../runtime/index.js";
import { record, type ActionContext } from "../shared/act.js";
import { StaleStatusError } from "../shared/platform-status.js";
import type { UpgradeDecision } from "../shared/upgrade-decision.js";
import type { StatusWriter } from "../shared/status-writer.js";
import { VPA_REF, verticalScalingStatus } from "./vertical.js";

/**
 * Persists status.verticalScaling as the VPAs (`vpas`, empty when the API is not served) now
 * recommend it; a change of the applied requests is recorded (the rollout it causes is the apply's).
 */
export async function writeVerticalScaling(
  writer: StatusWriter,
  ctx: ActionContext,
  platform: OntoPlatform,
  spec: ResolvedSpec,
  vpas: readonly KubeObject[],
  now: Date,
): Promise<OntoPlatform> {
  const previous = platform.status?.verticalScaling;
  const next = verticalScalingStatus({ spec, platformName: platform.metadata.name, previous, vpas, now });
  const before = JSON.stringify(canonical(previous ?? null));
  const written = await writer.write(ctx.client, platform, (current) => {
    if (JSON.stringify(canonical(current.verticalScaling ?? null)) !== before)
      throw new StaleStatusError("status.verticalScaling");
    const { verticalScaling: _previous, ...rest } = current;
    return { ...rest, ...(next ? { verticalScaling: next } : {}) };
  });
  for (const [name, state] of Object.entries(next ?? {})) {
    if (!state.applied || state.appliedAt === previous?.[name]?.appliedAt) continue;
    const amounts = Object.entries(state.applied)
      .map(([k, v]) => `${k} ${k === "memory" ? readableBytes(v) : v}`)
      .join(", ");
    record(ctx, {
      verb: "status",
      target: { ...VPA_REF, namespace: platform.metadata.namespace, name },
      reason: "VerticalScalingApplied",
      message: `requests of ${name} set to ${amounts} from the VerticalPodAutoscaler's recommendation`,
    });
  }
  return written.platform;
}

/**
 * The status update of a decision taken from `decidedFrom`: refuses (StaleStatusError) a status
 * whose upgrade record someone changed since; undefined when the decision writes nothing.
 */
export function aheadUpdate(
  decidedFrom: OntoPlatform,
  decision: UpgradeDecision,
  now: Date,
): ((current: OntoPlatformStatus) => OntoPlatformStatus) | undefined {
  const { upgrade, condition } = decision;
  if (!upgrade && !condition) return undefined;
  const before = JSON.stringify(canonical(decidedFrom.status?.upgrade ?? null));
  return (current) => {
    if (JSON.stringify(canonical(current.upgrade ?? null)) !== before)
      throw new StaleStatusError("status.upgrade");
    const status: OntoPlatformStatus = { ...current, ...(upgrade ? { upgrade } : {}) };
    if (!condition) return status;
    const generation = decidedFrom.metadata.generation ?? 0;
    return {
      ...status,
      conditions: setCondition(
        status.conditions ?? [],
        { type: CONDITION.Upgrading, ...condition, observedGeneration: generation },
        now,
      ),
    };
  };
}

/** Persists `decision` before anything is acted on, then records it; the platform to go on with. */
export async function writeAhead(
  writer: StatusWriter,
  ctx: ActionContext,
  platform: OntoPlatform,
  decision: UpgradeDecision,
  now: Date,
): Promise<OntoPlatform> {
  const update = aheadUpdate(platform, decision, now);
  if (!update) return platform;
  const written = await writer.write(ctx.client, platform, update);
  recordDecision(ctx, platform, decision);
  return written.platform;
}

/** Records what the decision noted, after its write-ahead. */
function recordDecision(ctx: ActionContext, platform: OntoPlatform, decision: UpgradeDecision): void {
  for (const note of decision.notes ?? []) {
    record(
      { ...ctx, actor: "upgrade" },
      {
        verb: "status",
        target: { ...note.target, namespace: platform.metadata.namespace },
        reason: note.reason,
        message: note.message,
        warning: note.warning,
      },
    );
  }
  decision.committed?.();
}
