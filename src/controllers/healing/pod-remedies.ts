// The healer's actions on pods, planned by a pass and carried out by the healer through act():
// StatefulSet pods OOM-killed at a limit their template has raised since are deleted (so the
// raise reaches them), evicted pods are deleted (cleanup, outside the hourly budget), and the pods stranded on a node
// lost for longer than selfHealing.nodeLossGraceSeconds are force-deleted so their controllers
// recreate them elsewhere (within the budget, and never when most of the pool is NotReady).
// Every delete names the pod's UID, so a replacement under the same name is never hit.
import { NAME_LABEL, enabledComponents } from "../../api/index.js";
import { ConflictError, type KubeClient, type ObjectRef } from "../../kube/index.js";
import type { ClusterAction } from "../shared/act.js";
import { controllerKind, isTerminating, type NodeView, type PodView } from "../shared/kube-views.js";
import {
  assessNodeLoss,
  createdAfter,
  isNotReady,
  lastSeen,
  notReadyForMs,
  pressureConditions,
} from "./nodes.js";
import { oomKilledMain, stuckOnOldLimit } from "./oom.js";
import { PENDING_RECHECK_MS, type HealingView, type Pass } from "./pass.js";

/** A pod action of the healer, with its name for onto_healing_actions_total{action}. */
export interface HealingAction extends ClusterAction {
  action: string;
  /** Counts against the hourly budget (checked when it runs, in order): what is held back if not. */
  budget?: { what: string; component: string; uid: string };
}

/**
 * Deletes the very pod the decision was made about: the cache may still show a pod whose
 * controller has already replaced it under the same name (StatefulSet pods), and a delete by
 * name alone would hit the replacement. A UID precondition makes that a conflict: nothing to do.
 */
async function deleteExactly(
  client: KubeClient,
  target: ObjectRef,
  pod: PodView,
  opts: { gracePeriodSeconds?: number },
): Promise<boolean> {
  const uid = pod.metadata?.uid;
  try {
    return await client.delete(target, {
      propagationPolicy: "Background",
      ...opts,
      ...(uid ? { preconditions: { uid } } : {}),
    });
  } catch (err) {
    if (err instanceof ConflictError) return false;
    throw err;
  }
}

/**
 * Deletions of StatefulSet pods OOM-killed on every start at a limit below the one their template
 * now carries, so the StatefulSet recreates them with the raised limit (see stuckOnOldLimit).
 * Outside the hourly budget: the pod runs nothing, and the raise was counted.
 */
export function planStuckOomReplacements(
  pass: Pass,
  pods: readonly PodView[],
  view: Pick<HealingView, "workload">,
): HealingAction[] {
  const actions: HealingAction[] = [];
  for (const info of enabledComponents(pass.spec)) {
    if (info.kind !== "StatefulSet") continue;
    const workload = view.workload(info);
    const templateLimit = workload?.spec?.template?.spec?.containers?.find((c) => c.name === info.name)
      ?.resources?.limits?.memory;
    for (const pod of pods) {
      if (pod.metadata?.labels?.[NAME_LABEL] !== info.name || isTerminating(pod)) continue;
      const killed = oomKilledMain(pod, info.name);
      if (!killed?.limit) continue;
      const stuck = stuckOnOldLimit({
        podLimit: killed.limit,
        templateLimit,
        podRevision: pod.metadata?.labels?.["controller-revision-hash"],
        updateRevision: workload?.status?.updateRevision,
        ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
      });
      if (!stuck) continue;
      const target = pass.podRef(pod);
      actions.push({
        action: "replace-pod",
        reason: "OOMKilled",
        verb: "delete",
        target,
        message: `deleted pod ${target.name}, OOMKilled at its old memory limit ${killed.limit}: the StatefulSet recreates it with ${templateLimit ?? "?"} (it replaces no pod that is not Ready by itself)`,
        warning: true,
        label: `Pod/${target.name}`,
        run: (client) => deleteExactly(client, target, pod, {}),
      });
    }
  }
  return actions;
}

/** Deletions of evicted pods, each noting the pressure its node reports. */
export function planEvictedCleanup(
  pass: Pass,
  pods: readonly PodView[],
  nodes: readonly NodeView[],
): HealingAction[] {
  const actions: HealingAction[] = [];
  for (const pod of pods) {
    if (pod.status?.phase !== "Failed" || pod.status.reason !== "Evicted" || isTerminating(pod)) continue;
    const nodeName = pod.spec?.nodeName;
    const pressure = pressureConditions(nodes.find((n) => n.metadata?.name === nodeName));
    const why = pod.status.message?.trim() || "no message";
    const nodeText = !nodeName
      ? "no node recorded"
      : pressure.length > 0
        ? `node ${nodeName} reports ${pressure.join(", ")}`
        : `node ${nodeName} reports no memory, disk or PID pressure now`;
    const target = pass.podRef(pod);
    // Deleting a pod that already failed changes nothing that runs: it is cleanup, outside the
    // hourly budget (an eviction storm must not leave its debris because of the rate limit).
    actions.push({
      action: "delete-evicted",
      reason: "Evicted",
      verb: "delete",
      target,
      message: `deleted evicted pod ${target.name} (${why}); ${nodeText}`,
      warning: pressure.length > 0,
      label: `Pod/${target.name}`,
      run: (client) => deleteExactly(client, target, pod, {}),
    });
  }
  return actions;
}

/**
 * Force-deletions of the pods stranded on lost nodes; `recentlyFreed` says whether a pod (by UID)
 * was force-deleted lately (not deleted again and again). Holds back and says why when more than
 * half of the pool is NotReady.
 */
export function planNodeLoss(
  pass: Pass,
  pods: readonly PodView[],
  nodes: readonly NodeView[],
  recentlyFreed: (uid: string) => boolean,
): HealingAction[] {
  const policy = pass.spec.selfHealing;
  const assessment = assessNodeLoss(
    nodes,
    pass.spec.global.nodePool,
    policy.nodeLossGraceSeconds * 1000,
    pass.now,
  );
  const onNode = (node: NodeView): PodView[] => pods.filter((p) => p.spec?.nodeName === node.metadata?.name);
  const affected = nodes.filter((n) => isNotReady(n) && onNode(n).length > 0);
  if (assessment.withheld) {
    if (affected.length > 0) {
      const { notReady, total } = assessment.withheld;
      pass.withheld.push(
        `${notReady} of ${total} nodes of the platform's pool are NotReady: a cluster or network failure, ` +
          `not a node failure; no pod on ${affected.map((n) => n.metadata?.name ?? "?").join(", ")} is force-deleted`,
      );
      pass.requeue(PENDING_RECHECK_MS);
    }
    return [];
  }
  if (assessment.recheckAfterMs !== undefined && affected.length > 0) pass.requeue(assessment.recheckAfterMs);
  const actions: HealingAction[] = [];
  for (const node of assessment.lost) {
    const nodeName = node.metadata?.name ?? "?";
    // Pods a controller replaces by itself once they are gone (ReplicaSet pods) are left to the
    // taint-based eviction; what stays put is what needs the force: StatefulSet pods (their
    // replacement waits for the old pod to be gone) and pods stuck Terminating (no kubelet to confirm).
    // Only pods that were there when the node went away: a pod placed on it afterwards (a
    // scheduler that does not know yet) is not stranded by the loss, and freeing it would loop.
    const since = lastSeen(node);
    const stranded = onNode(node).filter(
      (p) => (controllerKind(p) === "StatefulSet" || isTerminating(p)) && !createdAfter(p, since),
    );
    if (stranded.length === 0) continue;
    const downSeconds = Math.round(notReadyForMs(node, pass.now) / 1000);
    const names = stranded.map((p) => p.metadata?.name ?? "?");
    for (const pod of stranded) {
      const uid = pod.metadata?.uid ?? "";
      if (recentlyFreed(uid)) continue;
      const target = pass.podRef(pod);
      actions.push({
        action: "force-delete",
        reason: "NodeLost",
        verb: "force-delete",
        target,
        message:
          `force-deleted pod ${target.name} stranded on node ${nodeName}, NotReady for ${downSeconds} s ` +
          `(> nodeLossGraceSeconds ${policy.nodeLossGraceSeconds}), so it is recreated on another node ` +
          `(stranded on ${nodeName}: ${names.join(", ")})`,
        warning: true,
        label: `Pod/${target.name}`,
        budget: {
          what: `force-delete pod ${pod.metadata?.name ?? "?"} on lost node ${nodeName}`,
          component: pod.metadata?.labels?.[NAME_LABEL] ?? "?",
          uid,
        },
        run: (client) => deleteExactly(client, target, pod, { gracePeriodSeconds: 0 }),
      });
    }
  }
  return actions;
}
