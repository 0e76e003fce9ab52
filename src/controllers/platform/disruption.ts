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
// Emergencies do not wait, and are applied at once and audited:
// - the fix of a workload whose pods crash-loop (for a reason other than memory, which the OOM
//   raise handles and which waits);
// - the restart onto a renewed certificate when the certificate the running pods use expires
//   within half its renewal margin (notAfter - renewAt). Which one they use is the serial on the
//   live pod template (render's TLS_REVISION_ANNOTATION); its expiry is in status.certificates,
//   as the current certificate or one it replaced (certificates.ts keeps the last few, since the
//   Secret holds only the new one). A serial found in neither is not judged: the restart waits
//   as any other.
// An upgrade in flight is not held here: it waited for its window and the fleet limit before it
// started (upgrade/orchestrator.ts), and it holds its fleet slot until it ends.
// Pure: the reconciler passes the caches, the runtime clock and the fleet limit's answer, and
// applies what is not held.
import {
  INSTANCE_LABEL,
  NAME_LABEL,
  type CertificateState,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { TEMPLATE_REVISION, revisionOf, type RenderedObject } from "../../render/index.js";
import { liveTlsSerial } from "./certificates.js";
import type { SpecProblem } from "./status.js";
import { REASON } from "../../api/index.js";
import { APPROVE_RESTARTS_ANNOTATION, windowState, type WindowState } from "../shared/maintenance-windows.js";
import { isWorkload, restartReasons } from "../shared/restart-plan.js";
import { replacingPods } from "../shared/kube-views.js";
import { FLEET_RECHECK_MS, type FleetAnswer } from "../shared/fleet-limit.js";
import { coveredBy } from "./drift.js";
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
  /** status.certificates as this reconcile writes it (for the certificate rule). */
  certificates?: Record<string, CertificateState>;
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
   * why the fleet limit does not hold it either (a crash loop, an expiring certificate).
   */
  restarts: { workload: RenderedObject; reasons: string[]; emergency?: string }[];
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

/** When a certificate's restart becomes an emergency: half its renewal margin before it expires. */
export function certificateDeadline(c: { notAfter: string; renewAt: string }): Date {
  const notAfter = Date.parse(c.notAfter);
  return new Date(notAfter - (notAfter - Date.parse(c.renewAt)) / 2);
}

/**
 * The certificate the live pods of a workload run with, when status.certificates knows its
 * expiry and renewal time: the Secret's name, its serial, notAfter and the emergency deadline.
 */
export function runningCertificate(
  live: KubeObject,
  certificates: Record<string, CertificateState>,
): { secret: string; serial: string; notAfter: string; deadline: Date } | undefined {
  const serial = liveTlsSerial(live);
  if (!serial) return undefined;
  for (const [secret, state] of Object.entries(certificates)) {
    const known = state.serial === serial ? state : state.replaced?.find((r) => r.serial === serial);
    if (known?.renewAt)
      return {
        secret,
        serial,
        notAfter: known.notAfter,
        deadline: certificateDeadline({ notAfter: known.notAfter, renewAt: known.renewAt }),
      };
  }
  return undefined;
}

const seconds = (ms: number): number => Math.round(ms / 1000);

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
  /** The earliest deadline of a held certificate restart (look again then). */
  let certificateDue: Date | undefined;

  for (const obj of input.desired) {
    if (!isWorkload(obj) || upgrading) continue;
    const current = input.live(obj);
    if (!current) continue;
    const { reasons } = restartReasons(current as RenderedObject, obj, coveredBy);
    if (reasons.length === 0) continue;
    const operatorChange = revisionOf(current.metadata?.annotations) < TEMPLATE_REVISION;
    const cause: HoldCause | undefined = operatorChange
      ? "OperatorChange"
      : !windows.unrestricted
        ? "MaintenanceWindow"
        : undefined;
    const certificate = reasons.includes("certificate")
      ? runningCertificate(current, input.certificates ?? {})
      : undefined;
    const emergency = crashLooping(platform.metadata.name, obj.metadata.name, input.pods)
      ? "crash-loops"
      : certificate && certificate.deadline.getTime() <= now.getTime()
        ? `runs with certificate ${certificate.serial} of Secret ${certificate.secret}, which expires at ${certificate.notAfter} (in ${seconds(Date.parse(certificate.notAfter) - now.getTime())} s, within half its renewal margin)`
        : undefined;
    if (!cause || windows.open || approved) {
      restarts.push({ workload: obj, reasons, ...(emergency ? { emergency } : {}) });
      continue;
    }
    const id = objectId(obj.kind, obj.metadata.name);
    if (emergency) {
      bypassed.push({
        workload: obj,
        message: `${id} ${emergency}: its change (${reasons.join(", ")}) is applied now, without waiting (${cause})`,
      });
      continue;
    }
    if (certificate && (!certificateDue || certificate.deadline < certificateDue))
      certificateDue = certificate.deadline;
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
    ...requeue(now, waiting.length > 0 ? windows.next : undefined, certificateDue),
    restarts,
    rolling: upgrading || restarting.length > 0,
    ...(fleetWaits.length > 0
      ? { fleetSince: new Date(Math.min(...fleetWaits.map((w) => Date.parse(w.since)))) }
      : {}),
  };
}

/** Look again at the earliest of the instants given (a second at least). */
function requeue(now: Date, ...at: (Date | undefined)[]): { requeueAfterMs?: number } {
  const times = at.filter((t): t is Date => t !== undefined).map((t) => t.getTime() - now.getTime());
  return times.length > 0 ? { requeueAfterMs: Math.max(1000, Math.min(...times)) } : {};
}

/** What the platform's status says waits for the fleet limit. */
const fleetWaitsOf = (platform: OntoPlatform) =>
  (platform.status?.disruption?.waiting ?? []).filter((w) => w.cause === "FleetLimit");

/** The fleet limit's answer asked for by decideDisruption's restarts (none: nothing to ask). */
export const wantsFleetSlot = (d: DisruptionDecision): boolean => d.restarts.some((r) => !r.emergency);

/**
 * The decision with the fleet limit's answer applied: refused, every restart waits with cause
 * FleetLimit (since when it first did), except an emergency (a crash-looping workload's fix, an
 * expiring certificate), which goes now and is recorded. Pure.
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
        message: `${id} ${emergency}: its change (${reasons.join(", ")}) is applied now, without waiting (FleetLimit: ${others})`,
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
