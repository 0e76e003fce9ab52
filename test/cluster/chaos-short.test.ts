// The short, seeded chaos run of `npm test` (the full suite: `npm run test:chaos`): the cases that
// do not measure timing (the leader cases, which do, are chaos-short-leader.test.ts and have the
// cluster to themselves). Each case prints what it did and found; the invariants are asserted here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { deleteMidUpgrade } from "../chaos/cases/delete-mid-upgrade.js";
import { fieldManagers } from "../chaos/cases/field-managers.js";
import { upgradeKills } from "../chaos/cases/upgrade-kills.js";
import { killAll, printResult } from "../chaos/support.js";
import { adminKubeConfig } from "../support/cluster.js";
import { installCrd } from "../support/platform.js";

const client = new KubeClient(adminKubeConfig());
beforeAll(() => installCrd(client));
afterAll(killAll);

describe("chaos (short run)", () => {
  it("another field manager: no fight on an owned field, an owned list or an unowned field", async () => {
    const result = await fieldManagers(client, { windowMs: 20_000 });
    printResult(result);
    expect(result.ok).toBe(true);
    expect(result.found).toMatch(/left, reported in ForeignChanges/);
  }, 900_000);

  it("platform deleted mid-upgrade: what it owns goes, nothing comes back, the volumes stay", async () => {
    const result = await deleteMidUpgrade(client);
    printResult(result);
    expect(result.ok).toBe(true);
  }, 900_000);

  it("SIGKILLs during an upgrade and a rollback: each ends as the uninterrupted run does", async () => {
    const result = await upgradeKills(client, { kills: 3, seed: 13 });
    printResult(result);
    expect(result.found).toBe("every upgrade ended as the uninterrupted run does; no step done twice");
  }, 1_200_000);
});
