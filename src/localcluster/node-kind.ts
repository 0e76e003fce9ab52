// How a real node of the local cluster is told apart from the KWOK nodes: one label and one
// taint, declared here once. Nothing lands on a real node unless it selects the label and
// tolerates the taint, so every other test keeps running on KWOK as fast as before.

/** Label key on every local node: `real` (kubelet and containerd) or absent (KWOK). */
export const NODE_KIND_LABEL = "onto.paas/node-kind";
/** Label value (and taint value) of a real node. */
export const REAL_NODE_KIND = "real";

/** The taint every real node registers with. */
export const REAL_NODE_TAINT = {
  key: NODE_KIND_LABEL,
  value: REAL_NODE_KIND,
  effect: "NoSchedule",
} as const;

/** Node selector that places a pod on a real node. */
export const REAL_NODE_SELECTOR: Readonly<Record<string, string>> = { [NODE_KIND_LABEL]: REAL_NODE_KIND };

/** Toleration a pod needs to run on a real node. */
export const REAL_NODE_TOLERATION = {
  key: NODE_KIND_LABEL,
  operator: "Equal",
  value: REAL_NODE_KIND,
  effect: "NoSchedule",
} as const;
