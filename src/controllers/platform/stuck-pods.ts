// Pods the platform reconciler looks at: a StatefulSet pod stuck on an outdated revision it can
// never leave by itself (replaced), pods the upgrade asked to replace, and pods the scheduler
// cannot place (their reason goes into the component's status). Pure over the Pod and
// StatefulSet caches.
import { INSTANCE_LABEL, NAME_LABEL, type OntoPlatform } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { ClusterAction } from "../shared/act.js";
import {
  REVISION_LABEL,
  isTerminating,
  podCondition,
  statefulSetPartition,
  type PodView,
  type WorkloadView,
} from "../shared/kube-views.js";

function podRef(namespace: string, name: string) {
  return { apiVersion: "v1", kind: "Pod", namespace, name };
}

function unschedulable(pod: PodView): boolean {
  return podCondition(pod, "PodScheduled")?.status === "False";
}

/**
 * A StatefulSet never replaces a pod of an old revision that cannot start (Kubernetes waits for
 * it to become Ready first), so after a spec fix such as a corrected node pool the platform would
 * stay stuck. A pod of an outdated revision that the scheduler cannot place, at or above the
 * rollout partition (pods below it keep the old revision on purpose during an upgrade), is
 * deleted so the StatefulSet recreates it from the current revision.
 */
export function planStuckPodReplacement(
  platform: OntoPlatform,
  statefulSets: readonly KubeObject[],
  pods: readonly KubeObject[],
): ClusterAction[] {
  const ns = platform.metadata.namespace;
  const actions: ClusterAction[] = [];
  for (const sts of statefulSets as WorkloadView[]) {
    const name = sts.metadata?.name ?? "";
    const revision = sts.status?.updateRevision;
    if (sts.metadata?.labels?.[INSTANCE_LABEL] !== platform.metadata.name || !revision) continue;
    const partition = statefulSetPartition(sts);
    for (const pod of pods as PodView[]) {
      const podName = pod.metadata?.name ?? "";
      const ordinal = Number(podName.slice(name.length + 1));
      if (!podName.startsWith(`${name}-`) || !Number.isInteger(ordinal) || ordinal < partition) continue;
      if (isTerminating(pod) || pod.status?.phase !== "Pending") continue;
      if (pod.metadata?.labels?.[REVISION_LABEL] === revision || !unschedulable(pod)) continue;
      const target = podRef(ns, podName);
      actions.push({
        verb: "delete",
        target,
        reason: "StuckPodReplaced",
        message: `deleted ${podName}: an outdated revision the scheduler cannot place; StatefulSet ${name} recreates it from the current spec`,
        failure: { reason: "StuckPodReplaceFailed", message: `could not replace stuck pod ${podName}` },
        label: `Pod/${podName}`,
        run: async (client) => {
          await client.delete(target);
          return true;
        },
      });
    }
  }
  return actions;
}

/** Deletions of the pods an upgrade decision asked to replace (their controller recreates them). */
export function planUpgradePodDeletions(
  namespace: string,
  pods: readonly { name: string; reason: string; message: string }[],
): ClusterAction[] {
  return pods.map((pod) => {
    const target = podRef(namespace, pod.name);
    return {
      verb: "delete",
      target,
      reason: pod.reason,
      message: pod.message,
      label: `delete Pod/${pod.name}`,
      run: async (client) => {
        await client.delete(target);
        return true;
      },
    };
  });
}

/** Per component, the scheduler's message for one of its pods it cannot place. */
export function unschedulableMessages(
  platform: OntoPlatform,
  pods: readonly KubeObject[],
): Map<string, string> {
  const found = new Map<string, string>();
  for (const pod of pods as PodView[]) {
    const labels = pod.metadata?.labels;
    const component = labels?.[NAME_LABEL];
    if (!component || labels[INSTANCE_LABEL] !== platform.metadata.name || isTerminating(pod)) continue;
    const scheduled = podCondition(pod, "PodScheduled");
    if (scheduled?.status === "False" && scheduled.message && !found.has(component)) {
      found.set(component, scheduled.message.split("\n")[0]?.slice(0, 300) ?? "");
    }
  }
  return found;
}
