// The full chaos suite (`npm run test:chaos`): every case at full size, one after the other on the
// test control plane, each printing what it did and found; a table of all of them at the end.
// CHAOS_SEED changes the seed of the random kills and of the generated specs; OPERATOR_LOG_FILE=<file>
// makes every operator child append its log lines there (level LOG_LEVEL, default debug). A short, seeded run
// of the same cases is part of `npm test` (test/cluster/chaos-short.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { adminKubeConfig, createTestNamespace, kubeconfigPath } from "../support/cluster.js";
import { installCrd } from "../support/platform.js";
import { describeRun, runSchemaProperties } from "../support/properties.js";
import { apiServerFaults } from "./cases/api-server.js";
import { deleteMidUpgrade } from "./cases/delete-mid-upgrade.js";
import { fieldManagers } from "./cases/field-managers.js";
import { leaderFreeze, leaderKill } from "./cases/leader.js";
import { upgradeKills } from "./cases/upgrade-kills.js";
import { killAll, printResult, table, type CaseResult } from "./support.js";

const SEED = Number(process.env.CHAOS_SEED ?? 2026);
const client = new KubeClient(adminKubeConfig());
const cluster = { client, kubeconfig: kubeconfigPath() };
const results: CaseResult[] = [];

async function run(result: Promise<CaseResult>): Promise<CaseResult> {
  const r = await result;
  printResult(r);
  results.push(r);
  return r;
}

beforeAll(() => installCrd(client));
afterAll(async () => {
  await killAll();
  console.log(`\n[chaos] summary (seed ${SEED})\n${table(results)}\n`);
});

describe("chaos", () => {
  it("leader kill, 5 rounds", async () => {
    expect((await run(leaderKill(cluster, 5))).ok).toBe(true);
  }, 900_000);

  it("leader freeze, 5 rounds", async () => {
    expect((await run(leaderFreeze(cluster, 5))).ok).toBe(true);
  }, 900_000);

  it("20 SIGKILLs during upgrades and rollbacks", async () => {
    expect((await run(upgradeKills(client, { kills: 20, seed: SEED }))).ok).toBe(true);
  }, 3_600_000);

  it("API server restarts and etcd compaction during reconciles", async () => {
    expect((await run(apiServerFaults(client, { rounds: 3 }))).ok).toBe(true);
  }, 1_800_000);

  it("another field manager on owned fields, owned lists, unowned fields", async () => {
    expect((await run(fieldManagers(client, { windowMs: 60_000 }))).ok).toBe(true);
  }, 900_000);

  it("platform deleted mid-upgrade", async () => {
    expect((await run(deleteMidUpgrade(client))).ok).toBe(true);
  }, 900_000);

  it("1000 generated specs: offline validation, the API server and render agree", async () => {
    const namespace = await createTestNamespace("chaos-props");
    const r = await runSchemaProperties({ client, namespace, specs: 1000, seed: SEED });
    console.log(describeRun(r));
    const problems = [
      ...r.disagreements,
      ...r.unnamed,
      ...r.refusedObjects,
      ...r.drifting,
      ...r.nondeterministic,
    ];
    for (const line of problems.slice(0, 20)) console.log(`  ${line}`);
    results.push({
      name: "schema properties",
      did: `${r.specs} specs generated from the schema + ${r.mutations} with one field broken (seed ${SEED})`,
      found:
        problems.length === 0
          ? `no disagreement; ${r.distinctObjects} distinct rendered objects all accepted and stored as rendered`
          : `${problems.length} problems (first: ${problems[0]?.slice(0, 200)})`,
      figures: {
        "accepted by both": r.acceptedByBoth,
        "refused by both": r.refusedByBoth,
        disagreements: r.disagreements.length,
        "objects refused": r.refusedObjects.length,
        seconds: Math.round(r.durationMs / 1000),
      },
      ok: problems.length === 0,
    });
    expect(problems).toEqual([]);
  }, 3_600_000);
});
