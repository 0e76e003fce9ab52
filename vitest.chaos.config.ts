import { defineConfig } from "vitest/config";

// `npm run test:chaos`: the full chaos suite (test/chaos/chaos.test.ts) against the test control
// plane that test/support/global-setup.ts starts, as the cluster project of vitest.config.ts does.
export default defineConfig({
  test: {
    name: "chaos",
    include: ["test/chaos/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 3_600_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
