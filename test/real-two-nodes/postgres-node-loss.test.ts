// Postgres failover when the primary's node is lost, on a cluster of two real nodes: the primary
// (postgres-0) on one, both standbys and the writing client on the other. The lost node's kubelet
// is frozen (SIGSTOP): the node goes NotReady and nothing there can stop or replace a pod, while
// the primary's server still runs and answers on the network. The operator must shut it down over
// SQL before it promotes a standby, so at no sampled moment do two members take writes; writes
// resume through `postgres` on the standby promoted; when the kubelet is back, the old primary
// rejoins as a standby.
import type * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecord } from "../../src/localcluster/processes.js";
import { recordName } from "../../src/localcluster/real-nodes.js";
import { clusterStateDir, eventually } from "../support/cluster.js";
import {
  firstOkAfter,
  gapIn,
  ipOf,
  lostWrites,
  MEMBERS,
  rejoined,
  Sampler,
  startScriptLines,
  startWriter,
  state,
  onlyPostgresReal,
  useHaPlatform,
  writerLog,
} from "../real/postgres-ha-support.js";
import {
  podsOf,
  postgresPassword,
  query,
  startRealPlatform,
  type RealPlatform,
} from "../real/platform-support.js";
import { coreApi, loadImages, realNodes } from "../real/support.js";

let p: RealPlatform;
let password = "";
let sampler: Sampler | undefined;
/** The node of the first primary (postgres-0), made NotReady; the other keeps the standbys. */
let lostNode = "";
let keptNode = "";
let kubeletPid = 0;
let frozen = false;
const figures: Record<string, string> = {};

function freezeKubelet(on: boolean): void {
  process.kill(kubeletPid, on ? "SIGSTOP" : "SIGCONT");
  frozen = on;
}

function isReady(node: k8s.V1Node): boolean {
  return node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
}

async function nodeReady(name: string): Promise<boolean> {
  return isReady(await coreApi().readNode({ name }));
}

beforeAll(async () => {
  const nodes = realNodes();
  if (nodes.length < 2)
    throw new Error(`this file needs two real nodes; the cluster has ${nodes.join(", ")}`);
  [keptNode = "", lostNode = ""] = nodes;
  const record = readRecord(clusterStateDir(), recordName(lostNode, "kubelet"));
  if (!record) throw new Error(`no process record of ${lostNode}'s kubelet`);
  kubeletPid = record.pid;
  await loadImages(["postgres"]);
  p = await startRealPlatform("pgnode", {
    customize: onlyPostgresReal,
    // postgres-0 (the first primary) on the node to lose, the standbys on the other.
    volumeNode: (claim) => (claim.endsWith("-postgres-0") ? lostNode : keptNode),
  });
  password = await postgresPassword(p.namespace);
  useHaPlatform(p, password);
  await startWriter(keptNode);
  for (const m of MEMBERS.slice(1)) await rejoined(m);
  sampler = new Sampler();
}, 900_000);

afterAll(async () => {
  if (frozen) freezeKubelet(false);
  await sampler?.stop();
  if (sampler) {
    figures["samples of pg_is_in_recovery() on every member"] = String(sampler.moments);
    figures["moments with two writable primaries"] = String(sampler.doubled.length);
  }
  console.log(
    `[postgres-node-loss] figures\n${Object.entries(figures)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join("\n")}`,
  );
  if (sampler?.doubled.length)
    console.log(`[postgres-node-loss] two primaries at: ${sampler.doubled.join("; ")}`);
  await p?.operator.stop();
});

describe("Postgres when the primary's node is lost (two real nodes)", () => {
  it("the primary runs on one node, both standbys on the other", async () => {
    const pods = await podsOf(p.namespace, "postgres");
    const placed = Object.fromEntries(pods.map((x) => [x.metadata?.name ?? "", x.spec?.nodeName ?? ""]));
    expect(placed).toEqual({ "postgres-0": lostNode, "postgres-1": keptNode, "postgres-2": keptNode });
    expect((await state()).currentPrimary).toBe("postgres-0");
  });

  it("is shut down over SQL and failed over from; writes resume; it rejoins when its node is back", async () => {
    const oldIp = await ipOf("postgres-0");
    const t0 = Date.now();
    freezeKubelet(true);
    const notReadyAt = await eventually(
      `${lostNode} NotReady`,
      async () => ((await nodeReady(lostNode)) ? undefined : Date.now()),
      120_000,
      500,
    );
    const promoted = await eventually(
      "a standby promoted",
      async () => {
        const s = await state();
        return s.currentPrimary && s.currentPrimary !== "postgres-0" ? s : undefined;
      },
      120_000,
      200,
    );
    expect(promoted.lastFailover).toMatchObject({ from: "postgres-0", reason: "PrimaryNodeLost" });
    const decided = Date.parse(promoted.lastFailover?.at ?? "");
    const ok = await firstOkAfter(decided);
    // The old primary no longer answers: its server was shut down, though no kubelet ran there.
    const answer = await query<{ r: boolean }>(oldIp, password, "SELECT pg_is_in_recovery() AS r").catch(
      () => undefined,
    );
    expect(answer, "the old primary still answers").toBeUndefined();
    figures["kubelet frozen -> node NotReady (s)"] = ((notReadyAt - t0) / 1000).toFixed(1);
    figures["node NotReady -> promotion decided (s)"] = ((decided - notReadyAt) / 1000).toFixed(1);
    figures["promotion decided -> writes accepted (s)"] = ((ok - decided) / 1000).toFixed(1);
    const gap = gapIn(await writerLog(), t0, ok + 1_000);
    figures["failed writes / longest write gap (ms)"] = `${gap.failed} / ${gap.longestGapMs}`;
    const lost = await lostWrites(decided);
    figures["acknowledged writes lost"] = String(lost.length);
    expect(lost).toEqual([]);

    // The node back: its kubelet starts the stopped container again, which finds the new primary.
    freezeKubelet(false);
    const back = Date.now();
    await rejoined("postgres-0");
    figures["kubelet back -> old primary streaming as a standby (s)"] = ((Date.now() - back) / 1000).toFixed(
      1,
    );
    figures["the old primary's start"] = await startScriptLines("postgres-0");
    expect(sampler?.doubled).toEqual([]);
  });
});
