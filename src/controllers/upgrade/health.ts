// How an upgrade tells a healthy canary or rollout from a failing one, from the pods and workloads
// in the informer caches. Pure functions of those objects and the clock, so each rule is tested
// without a cluster. A pod that restarts, is OOM-killed or cannot pull its image fails at once; a
// pod that is merely not Ready yet is given until the step's timeout.
import {
  REVISION_LABEL,
  isPodReady,
  isTerminating,
  podCondition,
  statefulSetOnUpdateRevision,
  statefulSetPartition,
  type ContainerTermination,
  type PodView,
  type WorkloadView,
} from "../shared/kube-views.js";

/** Why a pod of the new version is judged bad, from its own state. */
export interface Fault {
  /** CamelCase: OOMKilled, CrashLoopBackOff, ImagePullBackOff, NotReady, ... */
  reason: string;
  message: string;
}

/** Waiting reasons that will not go away by waiting: fail at once. */
const HOPELESS_WAITING = new Set([
  "CrashLoopBackOff",
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

export function runsImage(obj: { spec?: { containers?: { image?: string }[] } } | undefined, image: string) {
  return (obj?.spec?.containers ?? []).some((c) => c.image === image);
}

export function templateRuns(workload: WorkloadView | undefined, image: string): boolean {
  return runsImage(workload?.spec?.template, image);
}

function exitText(t: ContainerTermination): string {
  const code = t.exitCode !== undefined ? `exited with code ${t.exitCode}` : "exited";
  return `${code}${t.reason ? ` (${t.reason})` : ""}${t.message ? `: ${t.message.trim()}` : ""}`;
}

/** A fault that fails the step now: a restart, an OOM kill, an image that cannot be pulled. */
export function podFault(pod: PodView): Fault | undefined {
  const name = pod.metadata?.name ?? "?";
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const cs of statuses) {
    const restarts = cs.restartCount ?? 0;
    const last = cs.lastState?.terminated;
    const now = cs.state?.terminated;
    if (last?.reason === "OOMKilled" || now?.reason === "OOMKilled") {
      const t = (last?.reason === "OOMKilled" ? last : now) ?? {};
      return {
        reason: "OOMKilled",
        message: `pod ${name}: container ${cs.name} was OOMKilled (exit code ${t.exitCode ?? 137}), restarted ${restarts} time(s)`,
      };
    }
    const waiting = cs.state?.waiting;
    if (restarts > 0 || (waiting?.reason && HOPELESS_WAITING.has(waiting.reason))) {
      const exit = last ?? now;
      const why = exit
        ? exitText(exit)
        : `is waiting: ${waiting?.reason ?? "?"}${waiting?.message ? ` (${waiting.message})` : ""}`;
      const reason =
        waiting?.reason && waiting.reason !== "CrashLoopBackOff" ? waiting.reason : "CrashLoopBackOff";
      return { reason, message: `pod ${name}: container ${cs.name} ${why}; restarted ${restarts} time(s)` };
    }
  }
  if (pod.status?.phase === "Failed") {
    return {
      reason: pod.status.reason ?? "PodFailed",
      message: `pod ${name} failed${pod.status.message ? `: ${pod.status.message}` : ""}`,
    };
  }
  return undefined;
}

/** When the pod became Ready (ms since the epoch); undefined while it is not Ready. */
export function readySince(pod: PodView): number | undefined {
  const ready = podCondition(pod, "Ready");
  if (ready?.status !== "True") return undefined;
  const at = Date.parse(ready.lastTransitionTime ?? "");
  return Number.isNaN(at) ? 0 : at;
}

/** Why a pod is not Ready, for a person: "pod x: Running, Ready=False (ContainersNotReady)". */
export function notReadyText(pod: PodView): string {
  const ready = podCondition(pod, "Ready");
  const scheduled = podCondition(pod, "PodScheduled");
  const name = pod.metadata?.name ?? "?";
  if (scheduled?.status === "False") {
    return `pod ${name} is not scheduled (${scheduled.reason ?? "?"}${scheduled.message ? `: ${scheduled.message}` : ""})`;
  }
  const detail = ready
    ? `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ""}`
    : "no Ready condition";
  return `pod ${name}: ${pod.status?.phase ?? "Pending"}, ${detail}`;
}

/** The controller has seen the workload's latest spec. */
export function observed(workload: WorkloadView): boolean {
  return (workload.status?.observedGeneration ?? 0) >= (workload.metadata?.generation ?? 0);
}

/** A Deployment runs `image` on every replica, all Ready, and no pod of another template is left. */
export function deploymentRolledOut(dep: WorkloadView | undefined, image: string): boolean {
  if (!dep || !observed(dep) || !templateRuns(dep, image)) return false;
  const desired = dep.spec?.replicas ?? 1;
  const s = dep.status ?? {};
  return (
    (s.updatedReplicas ?? 0) >= desired &&
    (s.replicas ?? 0) <= desired &&
    (s.readyReplicas ?? 0) >= desired &&
    (s.availableReplicas ?? 0) >= desired
  );
}

/** The pods of a StatefulSet by ordinal (0..replicas-1), undefined where a pod is missing. */
export function statefulSetPods(
  sts: WorkloadView,
  pods: readonly PodView[],
  replicas: number,
): (PodView | undefined)[] {
  const name = sts.metadata?.name ?? "";
  return Array.from({ length: replicas }, (_, i) =>
    pods.find((p) => p.metadata?.name === `${name}-${i}` && !isTerminating(p)),
  );
}

/** Every pod of the StatefulSet is on its update revision, runs `image` and is Ready; no partition. */
export function statefulSetRolledOut(
  sts: WorkloadView | undefined,
  image: string,
  pods: readonly PodView[],
): boolean {
  if (!sts || !observed(sts) || !templateRuns(sts, image)) return false;
  if (statefulSetPartition(sts) !== 0) return false;
  const s = sts.status ?? {};
  if (!s.updateRevision || !statefulSetOnUpdateRevision(sts)) return false;
  const replicas = sts.spec?.replicas ?? 1;
  return statefulSetPods(sts, pods, replicas).every(
    (p) => p !== undefined && p.metadata?.labels?.[REVISION_LABEL] === s.updateRevision && isPodReady(p),
  );
}

/**
 * Pods a StatefulSet will not replace by itself after its template was reverted: on another
 * revision and not Ready. With OrderedReady the controller waits for such a pod forever
 * (a known StatefulSet limitation), so the upgrade deletes it and it comes back on the reverted one.
 */
export function stuckStatefulSetPods(
  sts: WorkloadView | undefined,
  image: string,
  pods: readonly PodView[],
): PodView[] {
  if (!sts || !observed(sts) || !templateRuns(sts, image)) return [];
  const revision = sts.status?.updateRevision;
  if (!revision) return [];
  const replicas = sts.spec?.replicas ?? 1;
  return statefulSetPods(sts, pods, replicas).filter(
    (p): p is PodView =>
      p !== undefined && p.metadata?.labels?.[REVISION_LABEL] !== revision && !isPodReady(p),
  );
}
