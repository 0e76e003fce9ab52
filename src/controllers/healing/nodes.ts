// Node facts for healing: which nodes are NotReady and since when, which pressure conditions a
// node reports, which nodes make up the platform's pool, and whether a lost node is one node
// failing or the cluster (or its network) failing. Pure functions of the Node objects and the clock.
import type { NodeCondition, NodeView, Taint } from "../shared/kube-views.js";

export const PRESSURE_CONDITIONS = ["MemoryPressure", "DiskPressure", "PIDPressure"] as const;

/** Taints the node lifecycle controller and kubelet set themselves: they say the node is unwell, not reserved. */
const LIFECYCLE_TAINT_PREFIX = "node.kubernetes.io/";

export interface Toleration {
  key?: string | undefined;
  operator?: string | undefined;
  value?: string | undefined;
  effect?: string | undefined;
}

export interface NodePool {
  nodeSelector: Readonly<Record<string, string>>;
  tolerations: readonly Toleration[];
}

function readyCondition(node: NodeView): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === "Ready");
}

/** NotReady: the Ready condition is False or Unknown (or absent: the node never reported). */
export function isNotReady(node: NodeView): boolean {
  return readyCondition(node)?.status !== "True";
}

function epochMs(stamp: unknown): number | undefined {
  const at = typeof stamp === "string" ? Date.parse(stamp) : NaN;
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Since when the node is NotReady (epoch ms): the Ready condition's last transition, or the
 * node's creation when it never reported; undefined when Ready or unknown.
 */
export function notReadySince(node: NodeView): number | undefined {
  if (!isNotReady(node)) return undefined;
  return epochMs(readyCondition(node)?.lastTransitionTime ?? node.metadata?.creationTimestamp);
}

/**
 * When the node was last heard from (epoch ms): the Ready condition's last heartbeat (the node
 * lifecycle controller keeps it when it marks the node Unknown), else its last transition, else
 * the node's creation. A pod created after that was not stranded by the node's loss: it was
 * placed there afterwards, and freeing it would only make room for the next one.
 */
export function lastSeen(node: NodeView): number | undefined {
  const ready = readyCondition(node);
  return (
    epochMs(ready?.lastHeartbeatTime) ??
    epochMs(ready?.lastTransitionTime) ??
    epochMs(node.metadata?.creationTimestamp)
  );
}

/** How long the node has been NotReady at `now`, in ms (0 when Ready). */
export function notReadyForMs(node: NodeView, now: Date): number {
  const since = notReadySince(node);
  return since === undefined ? 0 : Math.max(0, now.getTime() - since);
}

/** Whether `obj` was created after `since` (epoch ms); false when either is unknown. */
export function createdAfter(
  obj: { metadata?: { creationTimestamp?: unknown } },
  since: number | undefined,
): boolean {
  const created = epochMs(obj.metadata?.creationTimestamp);
  return since !== undefined && created !== undefined && created > since;
}

/** "MemoryPressure=True (KubeletHasInsufficientMemory)" for each pressure the node reports. */
export function pressureConditions(node: NodeView | undefined): string[] {
  if (!node) return [];
  return (node.status?.conditions ?? [])
    .filter((c) => (PRESSURE_CONDITIONS as readonly string[]).includes(c.type) && c.status === "True")
    .map((c) => `${c.type}=True${c.reason ? ` (${c.reason})` : ""}`);
}

function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.operator === "Exists") return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? "") === (taint.value ?? "");
}

/**
 * Whether the platform's pods may run on `node`: it carries the pool's node selector labels, and
 * every NoSchedule/NoExecute taint other than the lifecycle ones (not-ready, unreachable ...) is
 * tolerated. Per-component extras (the GPU toleration) are left out: the pool is where the
 * platform as a whole runs, and the majority rule is about that pool.
 */
export function inPool(node: NodeView, pool: NodePool): boolean {
  const labels = node.metadata?.labels ?? {};
  if (!Object.entries(pool.nodeSelector).every(([k, v]) => labels[k] === v)) return false;
  return (node.spec?.taints ?? [])
    .filter((t) => t.effect !== "PreferNoSchedule" && !t.key.startsWith(LIFECYCLE_TAINT_PREFIX))
    .every((t) => pool.tolerations.some((tol) => tolerates(tol, t)));
}

export interface NodeLossAssessment {
  /** Nodes NotReady for longer than the grace: their stranded pods may be freed. */
  lost: NodeView[];
  /** Nodes NotReady, not yet past the grace: look again after `recheckAfterMs`. */
  recheckAfterMs?: number;
  /** Set when more than half of the pool is NotReady: no node-loss action at all. */
  withheld?: { notReady: number; total: number };
}

/**
 * The node-loss decision for a pool. More than half of the pool NotReady is not a node failure
 * but a cluster, zone or network failure (or the control plane losing sight of the kubelets);
 * force-deleting pods then risks two copies of a StatefulSet pod writing to the same volume, and
 * moves nothing anyway, so nothing is done.
 */
export function assessNodeLoss(
  nodes: readonly NodeView[],
  pool: NodePool,
  graceMs: number,
  now: Date,
): NodeLossAssessment {
  const notReady = nodes.filter(isNotReady);
  if (notReady.length === 0) return { lost: [] };
  const poolNodes = nodes.filter((n) => inPool(n, pool));
  const poolNotReady = poolNodes.filter(isNotReady).length;
  if (poolNotReady * 2 > poolNodes.length)
    return { lost: [], withheld: { notReady: poolNotReady, total: poolNodes.length } };
  // Nodes outside the pool (a GPU node a component tolerates) count as lost on their own.
  const lost: NodeView[] = [];
  let recheck: number | undefined;
  for (const node of notReady) {
    const down = notReadyForMs(node, now);
    if (down >= graceMs) lost.push(node);
    else recheck = Math.min(recheck ?? Infinity, graceMs - down);
  }
  return { lost, ...(recheck !== undefined ? { recheckAfterMs: recheck } : {}) };
}
