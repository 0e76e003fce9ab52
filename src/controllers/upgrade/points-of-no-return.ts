// Points of no return (OntoRelease spec.irreversible): an upgrade step that cannot be undone, such
// as a schema migration the first pod of a new version runs. Once such a step has started, the
// orchestrator no longer rolls back on a failure (that would run the old version on state it
// cannot read): the upgrade stops in ForwardFix and waits for a person. A downgrade that would
// undo such a step is refused, forced or not. Pure functions of the upgrade record and the catalog.
import type { ComponentInfo, Reason, UpgradeStatus } from "../../api/index.js";
import { REASON, UPGRADE_STEPS } from "../../api/index.js";
import { isDowngrade, pointsUndoneBy, type ReleaseCatalog } from "../../release/index.js";
import type { Fault } from "./health.js";

export type PointOfNoReturn = NonNullable<UpgradeStatus["pointOfNoReturn"]>;

function stepIndex(step: string | undefined): number {
  return (UPGRADE_STEPS as readonly string[]).indexOf(step ?? "");
}

/**
 * The point of no return `component`'s current step (record.step) passes, when the target release
 * marks one for it at this step or an earlier one (a Canary mark is passed by the Rollout of an
 * upgrade without canary). Undefined when none, or when the upgrade already passed one (the first
 * is the one that counts).
 */
export function passedPoint(
  releases: ReleaseCatalog,
  record: UpgradeStatus,
  component: string,
  at: string,
): PointOfNoReturn | undefined {
  if (record.pointOfNoReturn) return undefined;
  const mark = releases.find(record.to)?.irreversible.find((s) => s.component === component);
  if (!mark || stepIndex(record.step) < stepIndex(mark.step)) return undefined;
  return { component, step: record.step ?? mark.step, version: record.to, reason: mark.reason, at };
}

/** The ForwardFix record for a failure after a point of no return, and what to tell a person. */
export function forwardFixFor(
  record: UpgradeStatus,
  component: string,
  fault: Fault,
  at: string,
  retryAnnotation: string,
): { record: UpgradeStatus; message: string } {
  const point = record.pointOfNoReturn as PointOfNoReturn;
  const message =
    `upgrade ${record.from} -> ${record.to} failed at ${component}: ${fault.reason}: ${fault.message}; ` +
    `not rolled back: ${point.component} ${point.step} of ${point.version} cannot be undone (${point.reason}). ` +
    `Fix forward: set spec.version to a release that fixes it, or fix the cause and annotate ${retryAnnotation} to try again`;
  return {
    record: {
      ...record,
      phase: "ForwardFix",
      finishedAt: at,
      failure: { component, reason: fault.reason, message: fault.message.slice(0, 4000) },
    },
    message: message.slice(0, 4000),
  };
}

/**
 * Why moving from `running` to `target` is refused because it would undo a point of no return, or
 * undefined. The platform counts as being on `record.to` while its upgrade waits for a forward fix
 * or was superseded after passing a point.
 */
export function refusedRollback(
  releases: ReleaseCatalog,
  running: string,
  target: string,
  record: UpgradeStatus | undefined,
  enabled: readonly ComponentInfo[],
): { reason: Reason; message: string } | undefined {
  const past =
    record?.pointOfNoReturn && (record.phase === "ForwardFix" || record.phase === "Superseded")
      ? record
      : undefined;
  const current = past ? past.to : running;
  let down: boolean;
  try {
    down = isDowngrade(current, target);
  } catch {
    return undefined;
  }
  if (!down) return undefined;
  const points: { component: string; step: string; version: string; reason: string }[] = pointsUndoneBy(
    releases,
    current,
    target,
    enabled.map((c) => c.name),
  );
  const own = past?.pointOfNoReturn;
  if (own && !points.some((p) => p.component === own.component && p.version === own.version))
    points.unshift(own);
  if (points.length === 0) return undefined;
  const undone = points.map((p) => `${p.component} ${p.step} of ${p.version} (${p.reason})`).join("; ");
  const message =
    `refusing ${current} -> ${target}: it would undo what cannot be undone: ${undone}. ` +
    "Not even force allows it: fix forward with a newer release (or restore a backup taken before the upgrade)";
  return { reason: REASON.RollbackRefused, message: message.slice(0, 4000) };
}
