// Disruption control: which pod restarts this reconcile may cause, and which wait. A workload whose
// pod template would change restarts its pods; that waits when
// - the change comes with a newer operator (its live template was rendered at an older
//   TEMPLATE_REVISION): until the user opts in (the annotation below) or a maintenance window
//   opens, windows or not, so an operator upgrade never restarts a database by surprise;
// - the spec has maintenance windows and none is open (config or resources rolls, the OOM memory
//   raise): until one opens or the user opts in.
// Emergencies do not wait: the fix of a workload whose pods crash-loop (for a reason other than
// memory, which the OOM raise handles and which waits) is applied at once and audited. An upgrade
// in flight is not held here: it waited for its window before it started (upgrade/orchestrator.ts).
// Pure: the reconciler passes the caches and the runtime clock, and applies what is not held.
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
import { firstDifference } from "./drift.js";
import { objectId } from "./apply.js";

export { APPROVE_RESTARTS_ANNOTATION };

export type Disruption = NonNullable<OntoPlatformStatus["disruption"]>;
export type HoldCause = "OperatorChange" | "MaintenanceWindow";

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
  const out: string[] = [];
  for (const obj of desired.filter(isWorkload)) {
    const cur:
      | {
          metadata?: { generation?: number };
          spec?: { replicas?: number };
          status?: {
            observedGeneration?: number;
            updatedReplicas?: number;
            currentRevision?: string;
            updateRevision?: string;
          };
        }
      | undefined = live(obj);
    if (!cur?.status) continue;
    const s = cur.status;
    const behind =
      (s.observedGeneration ?? 0) < (cur.metadata?.generation ?? 0) ||
      (s.updatedReplicas ?? 0) < (cur.spec?.replicas ?? 1) ||
      (obj.kind === "StatefulSet" &&
        s.updateRevision !== undefined &&
        s.currentRevision !== s.updateRevision);
    if (behind) out.push(objectId(obj.kind, obj.metadata.name));
  }
  return out;
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
    if (!cause || windows.open || approved) continue;
    const id = objectId(obj.kind, obj.metadata.name);
    if (crashLooping(platform.metadata.name, obj.metadata.name, input.pods)) {
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
  };
}
