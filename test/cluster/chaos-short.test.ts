// The short, seeded chaos run of `npm test` (the full suite: `npm run test:chaos`). Each case
// prints what it did and found; the invariants are asserted here.
import { afterAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { leaderFreeze, leaderKill } from "../chaos/cases/leader.js";
import { killAll, printResult } from "../chaos/support.js";
import { adminKubeConfig, kubeconfigPath } from "../support/cluster.js";

const cluster = { client: new KubeClient(adminKubeConfig()), kubeconfig: kubeconfigPath() };
afterAll(killAll);

describe("chaos (short run)", () => {
  it("leader freeze: an old leader never writes after the standby took over, and exits", async () => {
    const result = await leaderFreeze(cluster, 2);
    printResult(result);
    expect(result.figures["split-brain writes"]).toBe(0);
    expect(result.figures["thawed leaders still running"]).toBe(0);
  }, 600_000);

  it("leader kill: the standby takes over", async () => {
    const result = await leaderKill(cluster, 1);
    printResult(result);
    expect(result.ok).toBe(true);
  }, 600_000);
});
