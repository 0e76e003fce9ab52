// The short, seeded chaos run of `npm test` (the full suite: `npm run test:chaos`). Each case
// prints what it did and found; the invariants are asserted here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { deleteMidUpgrade } from "../chaos/cases/delete-mid-upgrade.js";
import { fieldManagers } from "../chaos/cases/field-managers.js";
import { leaderFreeze, leaderKill } from "../chaos/cases/leader.js";
import { upgradeKills } from "../chaos/cases/upgrade-kills.js";
import { killAll, printResult } from "../chaos/support.js";
import { adminKubeConfig, kubeconfigPath } from "../support/cluster.js";
import { installCrd } from "../support/platform.js";

const cluster = { client: new KubeClient(adminKubeConfig()), kubeconfig: kubeconfigPath() };
beforeAll(() => installCrd(cluster.client));
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

  it("another field manager: no fight on an owned field, an owned list or an unowned field", async () => {
    const result = await fieldManagers(cluster.client, { windowMs: 20_000 });
    printResult(result);
    expect(result.ok).toBe(true);
    expect(result.found).toMatch(/left, reported in ForeignChanges/);
  }, 900_000);

  it("platform deleted mid-upgrade: what it owns goes, nothing comes back, the volumes stay", async () => {
    const result = await deleteMidUpgrade(cluster.client);
    printResult(result);
    expect(result.ok).toBe(true);
  }, 900_000);

  it("SIGKILLs during an upgrade and a rollback: each ends as the uninterrupted run does", async () => {
    const result = await upgradeKills(cluster.client, { kills: 3, seed: 13 });
    printResult(result);
    expect(result.found).toBe("every upgrade ended as the uninterrupted run does; no step done twice");
  }, 1_200_000);
});
