import { defineConfig } from "vitest/config";

// Projects: `unit` needs no cluster (src/**/*.test.ts); `programs` runs rendered scripts with the
// real programs as processes; `cluster` runs against one real
// local control plane that test/support/global-setup.ts starts once and stops after the run.
export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/unit/**/*.test.ts"],
          environment: "node",
          // Some unit tests start the CLI as a process or run hundreds of property cases; on a
          // loaded 2-core machine (the cluster suite runs beside them) 5 s is too tight.
          testTimeout: 30_000,
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
        },
      },
      {
        test: {
          name: "cluster",
          include: ["test/cluster/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // One control plane, shared: files run one at a time so timings and fault stages
          // of one file do not disturb another; each file still works in its own namespace.
          fileParallelism: false,
        },
      },
    ],
  },
});
