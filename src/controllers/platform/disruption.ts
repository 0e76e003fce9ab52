// Disruption control: which pod restarts this reconcile may cause, and which wait. A workload whose
// pod template would change restarts its pods; that waits when
// - the change comes with a newer operator (its live template was rendered at an older
//   TEMPLATE_REVISION): until the user opts in (the annotation below) or a maintenance window
//   opens, windows or not, so an operator upgrade never restarts a database by surprise;
// - the spec has maintenance windows and none is open (config or resources rolls, the OOM memory
//   raise): until one opens or the user opts in;
// - what remains would restart pods while the operator's fleet limit is reached (other platforms
//   restarting pods, shared/fleet-limit.ts): until a slot frees. The opt-in does not lift it: the
//   limit is the operator's, not the platform's.
// Emergencies do not wait: the fix of a workload whose pods crash-loop (for a reason other than
// memory, which the OOM raise handles and which waits) is applied at once and audited. An upgrade
// in flight is not held here: it waited for its window and the fleet limit before it started
// (upgrade/orchestrator.ts), and it holds its fleet slot until it ends.
// Pure: the reconciler passes the caches, the runtime clock and the fleet limit's answer, and
// applies what is not held.
import {
  INSTANCE_LABEL,
  NAME_LABEL,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { TEMPLATE_REVISION, revisionOf, type RenderedObject } from "../../render/index.js";
import type { SpecProblem } from "./status.js";
import { REASON } from "../../api/index.js";
import { APPROVE_RESTARTS_ANNOTATION, windowState, type WindowState } from "../shared/maintenance-windows.js";
import { isWorkload, restartReasons } from "../shared/restart-plan.js";
import { replacingPods } from "../shared/kube-views.js";
import { FLEET_RECHECK_MS, type FleetAnswer } from "../shared/fleet-limit.js";
import { firstDifference } from "./drift.js";
import { objectId } from "./apply.js";

export { APPROVE_RESTARTS_ANNOTATION };

export type Disruption = NonNullable<OntoPlatformStatus["disruption"]>;
export type HoldCause = "OperatorChange" | "MaintenanceWindow" | "FleetLimit";

export interface DisruptionInput {
  platform: OntoPlatform;
  spec: ResolvedSpec;
  desired: readonly RenderedObject[];
  live: (obj: RenderedObject) => KubeObject | undefined;
  /** The platform's pods (for the crash-loop rule). */
  pods: readonly KubeObject[];
  now: Date;
}

export interface DisruptionDecision {
  /** Kind/name of the workloads not applied this reconcile. */
  held: Set<string>;
  /** Emergencies let through, to be recorded (Event and audit line). */
  bypassed: { workload: RenderedObject; message: string }[];
  /** Windows that cannot be evaluated, by field. */
  problems: SpecProblem[];
  status: Disruption | undefined;
  /** Look again when the next window opens. */
  requeueAfterMs?: number;
  /**
   * Workloads whose pods restart this reconcile unless the fleet limit holds them; `emergency`:
   * a crash-looping workload's fix, which the fleet limit does not hold either.
   */
  restarts: { workload: RenderedObject; reasons: string[]; emergency: boolean }[];
  /** The platform restarts pods now (a workload replacing pods, or an upgrade in flight). */
  rolling: boolean;
  /** When it started waiting for the fleet limit (its place in the queue), if it waits. */
  fleetSince?: Date;
}

interface PodView {
  metadata?: { labels?: Record<string, string> };
  status?: {
    containerStatuses?: {
      state?: { waiting?: { reason?: string } };
      lastState?: { terminated?: { reason?: string } };
    }[];
  };
}

/** A pod of `component` waits in CrashLoopBackOff after a crash that is not an OOM kill. */
function crashLooping(platform: string, component: string, pods: readonly KubeObject[]): boolean {
  return (pods as PodView[]).some(
    (p) =>
      p.metadata?.labels?.[INSTANCE_LABEL] === platform &&
      p.metadata.labels[NAME_LABEL] === component &&
      (p.status?.containerStatuses ?? []).some(
        (c) =>
          c.state?.waiting?.reason === "CrashLoopBackOff" && c.lastState?.terminated?.reason !== "OOMKilled",
      ),
  );
}

const subset = (want: unknown, have: unknown): boolean => firstDifference(want, have) === undefined;

/** The live workloads still replacing pods (they count toward the fleet limit). */
function rolling(desired: readonly RenderedObject[], live: DisruptionInput["live"]): string[] {
  return desired
    .filter(isWorkload)
    .filter((obj) => {
      const cur = live(obj);
      return cur !== undefined && replacingPods(cur);
    })
    .map((obj) => objectId(obj.kind, obj.metadata.name));
}

export function decideDisruption(input: DisruptionInput): DisruptionDecision {
  const { platform, spec, now } = input;
  const windows: WindowState = windowState(spec.maintenance.windows, now);
  const problems: SpecProblem[] = windows.problems.map((message) => ({
    field: message.slice(0, message.indexOf(":")),
    reason: REASON.InvalidMaintenanceWindow,
    message: message.slice(message.indexOf(":") + 2),
  }));
  const approved = platform.metadata.annotations?.[APPROVE_RESTARTS_ANNOTATION] === "true";
  const upgrade = platform.status?.upgrade?.phase;
  const upgrading = upgrade === "InProgress" || upgrade === "RollingBack";
  const previous = new Map((platform.status?.disruption?.waiting ?? []).map((w) => [w.workload, w.since]));
  const held = new Set<string>();
  const bypassed: DisruptionDecision["bypassed"] = [];
  const waiting: NonNullable<Disruption["waiting"]> = [];
  const restarts: DisruptionDecision["restarts"] = [];

  for (const obj of input.desired) {
    if (!isWorkload(obj) || upgrading) continue;
    const current = input.live(obj);
    if (!current) continue;
    const { reasons } = restartReasons(current as RenderedObject, obj, subset);
    if (reasons.length === 0) continue;
    const operatorChange = revisionOf(current.metadata?.annotations) < TEMPLATE_REVISION;
    const cause: HoldCause | undefined = operatorChange
      ? "OperatorChange"
      : !windows.unrestricted
        ? "MaintenanceWindow"
        : undefined;
    const emergency = crashLooping(platform.metadata.name, obj.metadata.name, input.pods);
    if (!cause || windows.open || approved) {
      restarts.push({ workload: obj, reasons, emergency });
      continue;
    }
    const id = objectId(obj.kind, obj.metadata.name);
    if (emergency) {
      bypassed.push({
        workload: obj,
        message: `${id} crash-loops: its change (${reasons.join(", ")}) is applied now, without waiting (${cause})`,
      });
      continue;
    }
    held.add(id);
    waiting.push({ workload: id, reasons, cause, since: previous.get(id) ?? now.toISOString() });
  }

  const restarting = rolling(input.desired, input.live);
  const fleetWaits = fleetWaitsOf(platform);
  const status: Disruption = {
    ...(waiting.length > 0 ? { waiting } : {}),
    ...(windows.next ? { nextWindow: windows.next.toISOString() } : {}),
    ...(windows.open && windows.openUntil ? { windowOpenUntil: windows.openUntil.toISOString() } : {}),
    ...(restarting.length > 0 ? { restarting } : {}),
  };
  return {
    held,
    bypassed,
    problems,
    status: Object.keys(status).length > 0 ? status : undefined,
    ...(waiting.length > 0 && windows.next
      ? { requeueAfterMs: Math.max(1000, windows.next.getTime() - now.getTime()) }
      : {}),
    restarts,
    rolling: upgrading || restarting.length > 0,
    ...(fleetWaits.length > 0
      ? { fleetSince: new Date(Math.min(...fleetWaits.map((w) => Date.parse(w.since)))) }
      : {}),
  };
}

/** What the platform's status says waits for the fleet limit. */
const fleetWaitsOf = (platform: OntoPlatform) =>
  (platform.status?.disruption?.waiting ?? []).filter((w) => w.cause === "FleetLimit");

/** The fleet limit's answer asked for by decideDisruption's restarts (none: nothing to ask). */
export const wantsFleetSlot = (d: DisruptionDecision): boolean => d.restarts.some((r) => !r.emergency);

/**
 * The decision with the fleet limit's answer applied: refused, every restart waits with cause
 * FleetLimit (since when it first did), except a crash-looping workload's fix, which goes now and
 * is recorded. Pure.
 */
export function holdForFleet(
  d: DisruptionDecision,
  answer: FleetAnswer,
  platform: OntoPlatform,
  now: Date,
): DisruptionDecision {
  if (answer.admitted || d.restarts.length === 0) return d;
  const previous = new Map(fleetWaitsOf(platform).map((w) => [w.workload, w.since]));
  const held = new Set(d.held);
  const bypassed = [...d.bypassed];
  const waiting = [...(d.status?.waiting ?? [])];
  const others = `${answer.restarting.length} other platform(s) restarting pods (limit ${answer.limit})`;
  for (const { workload, reasons, emergency } of d.restarts) {
    const id = objectId(workload.kind, workload.metadata.name);
    if (emergency) {
      bypassed.push({
        workload,
        message: `${id} crash-loops: its change (${reasons.join(", ")}) is applied now, without waiting (FleetLimit: ${others})`,
      });
      continue;
    }
    held.add(id);
    waiting.push({
      workload: id,
      reasons,
      cause: "FleetLimit",
      since: previous.get(id) ?? now.toISOString(),
    });
  }
  return {
    ...d,
    held,
    bypassed,
    status: { ...d.status, waiting },
    requeueAfterMs: Math.min(d.requeueAfterMs ?? FLEET_RECHECK_MS, FLEET_RECHECK_MS),
  };
}
