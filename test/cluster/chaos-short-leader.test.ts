// The leader cases of the short, seeded chaos run (`npm test`; the full suite: `npm run
// test:chaos`): a leader frozen past its lease never writes once the standby took over, and exits;
// a killed leader's standby takes over. They measure failover, which other load would skew, so
// they have the cluster to themselves (CLUSTER_ALONE in vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { leaderFreeze, leaderKill } from "../chaos/cases/leader.js";
import { killAll, printResult } from "../chaos/support.js";
import { adminKubeConfig, kubeconfigPath } from "../support/cluster.js";
import { installCrd } from "../support/platform.js";

const cluster = { client: new KubeClient(adminKubeConfig()), kubeconfig: kubeconfigPath() };
beforeAll(() => installCrd(cluster.client));
afterAll(killAll);

describe("chaos (short run): leader election", () => {
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
