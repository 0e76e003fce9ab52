import { defineConfig } from "vitest/config";

// Seven projects: `unit` needs no cluster (src/**/*.test.ts); `programs` runs rendered scripts
// with the real programs as processes on loopback; `cluster` runs against one real local control
// plane that test/support/global-setup.ts starts once and stops after the run, on its KWOK nodes;
// `autoscaling` is the cluster's HPA and VPA files; `cluster-alone` the cluster files that disturb
// everything else on the cluster; `real` runs against the same cluster's real node (kubelet,
// containerd, the kernel), for what only real containers show; `real-two-nodes` runs on a cluster
// of its own with two real nodes.
//
// Which of them run side by side is decided by `npm test` (scripts/test-all.ts), which runs them in
// several vitest processes on one cluster. A plain `vitest run` runs every project in one process:
// vitest then puts the single-worker projects of groupOrder 0 into one queue run after the others,
// one file at a time.

/**
 * Cluster files that must have the cluster to themselves: they restart the API server or compact
 * etcd (every other client sees errors), measure leader failover, which other load would skew,
 * delete the OntoRelease CRD (and with it the releases the real-node suite runs on), or install and
 * remove cert-manager's CRDs (every operator on the cluster would watch Certificates meanwhile).
 */
const CLUSTER_ALONE = [
  "test/cluster/runtime-informer.test.ts",
  "test/cluster/chaos-short-leader.test.ts",
  "test/cluster/release-late-crd.test.ts",
  "test/cluster/tls-cert-manager.test.ts",
];

/**
 * Cluster files that spend most of their time waiting (a node's grace period and eviction, upgrade
 * soaks under SIGKILLs, a foreign manager's write windows, two platforms rolling one after the
 * other, a short-lived certificate's renewals), so they can run beside the busy suites without slowing them: `npm test` gives them a run
 * of their own, beside the others.
 */
const CLUSTER_WAITS = [
  "test/cluster/healing-node-loss.test.ts",
  "test/cluster/chaos-short.test.ts",
  "test/cluster/fleet-limit.test.ts",
  "test/cluster/disruption-emergency.test.ts",
];

/** A project of files on the shared test cluster's KWOK nodes, one file at a time. */
function onTheCluster(name: string, include: string[], exclude: string[] = []) {
  return {
    test: {
      name,
      include,
      exclude,
      environment: "node",
      globalSetup: ["test/support/global-setup.ts"],
      testTimeout: 180_000,
      hookTimeout: 300_000,
      fileParallelism: false,
      sequence: { groupOrder: 0 },
    },
  };
}

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/unit/**/*.test.ts", "bench/**/*.test.ts"],
          environment: "node",
          // Some unit tests start the CLI as a process or run hundreds of property cases; on a
          // loaded 2-core machine (the cluster suite runs beside them) 5 s is too tight.
          testTimeout: 30_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          // The rendered scripts of stateful components run with the real programs (Debian's
          // postgresql-15, redis-server, redis-sentinel) as processes on loopback addresses.
          name: "programs",
          include: ["test/programs/**/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          // One file at a time: each starts a Postgres or Redis group of its own on loopback.
          sequence: { groupOrder: 2 },
        },
      },
      // The autoscaling tests spend minutes waiting on the HPA controller's and the VPA
      // recommender's own periods (the same cluster, namespaces of their own).
      onTheCluster("autoscaling", ["test/cluster/autoscaling-*.test.ts"]),
      // One control plane, shared: files run one at a time so timings and fault stages of one
      // file do not disturb another; each file still works in its own namespace.
      onTheCluster(
        "cluster",
        ["test/cluster/**/*.test.ts"],
        ["test/cluster/autoscaling-*.test.ts", ...CLUSTER_ALONE, ...CLUSTER_WAITS],
      ),
      onTheCluster("cluster-waits", CLUSTER_WAITS),
      onTheCluster("cluster-alone", CLUSTER_ALONE),
      {
        test: {
          name: "real",
          include: ["test/real/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // One real node: files one at a time. `npm test` runs this project beside the KWOK
          // suites (other nodes, other namespaces), never beside `cluster-alone`.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          // A cluster of its own with two real nodes (test/support/global-setup-two-nodes.ts):
          // a node lost while the members on the other node carry on.
          name: "real-two-nodes",
          include: ["test/real-two-nodes/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup-two-nodes.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
