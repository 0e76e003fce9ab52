import { defineConfig } from "vitest/config";

// Five projects: `unit` needs no cluster (src/**/*.test.ts); `programs` runs rendered scripts
// with the real programs as processes on loopback; `cluster` runs against one real local control
// plane that test/support/global-setup.ts starts once and stops after the run, on its KWOK nodes;
// `autoscaling` is the cluster's HPA and VPA files, run beside `cluster`; `real` runs against the same cluster's real node (kubelet, containerd, the kernel), for what
// only real containers show.
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
          // A group of its own: real servers beside the timing-sensitive cluster suites would
          // slow both on 2 cores.
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          // The autoscaling tests spend minutes waiting on the HPA controller's and the VPA
          // recommender's own periods while sending little: beside the `cluster` files rather than
          // after them (the same cluster, namespaces of their own).
          name: "autoscaling",
          include: ["test/cluster/autoscaling-*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          fileParallelism: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "cluster",
          include: ["test/cluster/**/*.test.ts"],
          exclude: ["test/cluster/autoscaling-*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // One control plane, shared: files run one at a time so timings and fault stages
          // of one file do not disturb another; each file still works in its own namespace.
          fileParallelism: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "real",
          include: ["test/real/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // One real node on 2 cores: files one at a time, and in a group of their own, never
          // beside the KWOK suites, so real containers do not slow the timing-sensitive cluster
          // tests (vitest runs the groups one after the other).
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
