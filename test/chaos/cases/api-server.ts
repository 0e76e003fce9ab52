// The API server goes away during reconciles: a spec change is made, and at once kube-apiserver is
// stopped and started again (a real restart of the process, with downtime), or etcd is compacted
// to its current revision and then the API server restarted (every watch of the operator comes
// back with a resourceVersion etcd no longer has: 410 Gone, relist). The time from the server
// being back to the platform having converged on the change is compared with the time a change
// takes with no fault; a change that never converges is a change missed. "Back" is the moment
// the restarted server serves the OntoPlatform API again: after /readyz it still answers 503 for
// a custom resource's group for a while ("not all known HTTP paths installed"), which is the
// server's own start, the same for any client, and reported on its own. Two points of
// convergence are timed: the operator has applied the change (observedGeneration, the
// Deployment's replicas), and the platform is Running with the new replicas Ready (which also
// waits for the controller-manager and the simulated kubelets to catch up).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { OntoPlatform } from "../../../src/api/index.js";
import type { KubeClient } from "../../../src/kube/index.js";
import { restartComponent } from "../../../src/localcluster/launcher.js";
import { clusterStateDir, createTestNamespace, eventually } from "../../support/cluster.js";
import { PLATFORM_REF } from "../../../src/api/index.js";
import { readPlatform, loadSample } from "../../support/platform.js";
import type { Workload } from "../../cluster/upgrade-support.js";
import { operatorSlot } from "../operator.js";
import { median, type CaseResult } from "../support.js";

const NAME = "onto-minimal";

/** Compacts etcd's history up to its current revision (etcd's HTTP gateway). */
export async function compactEtcd(): Promise<string> {
  const state = JSON.parse(readFileSync(join(clusterStateDir(), "cluster.json"), "utf8")) as {
    ports: { etcdClient: number };
  };
  const base = `http://127.0.0.1:${state.ports.etcdClient}/v3/kv`;
  const range = (await (
    await fetch(`${base}/range`, { method: "POST", body: JSON.stringify({ key: "AA==" }) })
  ).json()) as { header: { revision: string } };
  const answer = await fetch(`${base}/compaction`, {
    method: "POST",
    body: JSON.stringify({ revision: range.header.revision, physical: true }),
  });
  if (!answer.ok) throw new Error(`etcd compaction failed: ${answer.status} ${await answer.text()}`);
  return range.header.revision;
}

/** The platform and its gateway Deployment as the API server has them now. */
async function observe(client: KubeClient, namespace: string): Promise<{ p: OntoPlatform; d?: Workload }> {
  const p = await readPlatform(client, namespace, NAME);
  const d = await client.getIfExists<Workload>({
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace,
    name: "gateway",
  });
  return { p, ...(d ? { d } : {}) };
}

type Observed = Awaited<ReturnType<typeof observe>>;

/** The operator has applied the change: the generation observed and the Deployment's replicas set. */
function isApplied({ p, d }: Observed, replicas: number): boolean {
  return p.status?.observedGeneration === p.metadata.generation && d?.spec?.replicas === replicas;
}

async function applied(client: KubeClient, namespace: string, replicas: number): Promise<true | undefined> {
  return isApplied(await observe(client, namespace), replicas) ? true : undefined;
}

/** The change applied, and the platform Running with the new replicas Ready. */
async function converged(client: KubeClient, namespace: string, replicas: number): Promise<true | undefined> {
  const now = await observe(client, namespace);
  return isApplied(now, replicas) &&
    now.p.status?.phase === "Running" &&
    now.d?.status?.readyReplicas === replicas
    ? true
    : undefined;
}

export async function apiServerFaults(
  client: KubeClient,
  opts: { rounds: number; downtimeMs?: number },
): Promise<CaseResult> {
  const namespace = await createTestNamespace("chaos-apiserver");
  const slot = await operatorSlot(client, namespace);
  /** Per kind of round: ms to the change applied, to the change converged, and to the server back. */
  const rounds = {
    normal: { applied: [] as number[], converged: [] as number[], back: [] as number[] },
    restart: { applied: [] as number[], converged: [] as number[], back: [] as number[] },
    compaction: { applied: [] as number[], converged: [] as number[], back: [] as number[] },
  };
  let missed = 0;
  let replicas = 2;
  const change = async (): Promise<number> => {
    replicas = replicas === 2 ? 3 : 2;
    await client.mergePatch({ ...PLATFORM_REF, namespace, name: NAME }, { spec: { gateway: { replicas } } });
    return replicas;
  };
  /** Times one round from `from` (the change, or the server back) into `into`. */
  const settle = async (target: number, from: number, into: (typeof rounds)["normal"]): Promise<void> => {
    try {
      await eventually("the change to be applied", () => applied(client, namespace, target), 180_000, 100);
      into.applied.push(performance.now() - from);
      await eventually("the change to converge", () => converged(client, namespace, target), 180_000, 100);
      into.converged.push(performance.now() - from);
    } catch {
      missed++;
    }
  };
  /** Restarts the API server and resolves when it serves the OntoPlatform API again. */
  const restart = async (into: (typeof rounds)["normal"]): Promise<number> => {
    const stopped = performance.now();
    await restartComponent({
      stateDir: clusterStateDir(),
      component: "kube-apiserver",
      downtimeMs: opts.downtimeMs ?? 2_000,
    });
    await eventually(
      "the OntoPlatform API served again",
      () => readPlatform(client, namespace, NAME),
      180_000,
      50,
    );
    const back = performance.now();
    into.back.push(back - stopped);
    return back;
  };
  try {
    await slot.start();
    const sample: OntoPlatform = loadSample("minimal.yaml", namespace);
    await client.apply(sample);
    await eventually("the platform to be Running", () => converged(client, namespace, 2), 300_000, 500);
    for (let i = 0; i < opts.rounds; i++) {
      const from = performance.now();
      await settle(await change(), from, rounds.normal);
    }
    for (let i = 0; i < opts.rounds; i++) {
      const target = await change();
      await settle(target, await restart(rounds.restart), rounds.restart);
    }
    for (let i = 0; i < opts.rounds; i++) {
      const target = await change();
      await compactEtcd();
      await settle(target, await restart(rounds.compaction), rounds.compaction);
    }
  } finally {
    await slot.kill();
    await slot.revoke().catch(() => undefined);
  }
  const ratio = (values: number[], base: number[]): number => median(values) / median(base);
  const worst = Math.max(
    ratio(rounds.restart.converged, rounds.normal.converged),
    ratio(rounds.compaction.converged, rounds.normal.converged),
  );
  const goal = worst <= 2;
  const ms = (values: number[]): number => Math.round(median(values));
  return {
    name: "API server restart and etcd compaction during reconciles",
    did: `${opts.rounds} spec changes with no fault, ${opts.rounds} each followed at once by an API server restart (${opts.downtimeMs ?? 2_000} ms down), ${opts.rounds} by an etcd compaction to the current revision and a restart`,
    found:
      missed === 0
        ? `every change converged; from the server back to converged: ${ratio(rounds.restart.converged, rounds.normal.converged).toFixed(2)}x normal (restart), ${ratio(rounds.compaction.converged, rounds.normal.converged).toFixed(2)}x (compaction); to applied: ${ratio(rounds.restart.applied, rounds.normal.applied).toFixed(2)}x, ${ratio(rounds.compaction.applied, rounds.normal.applied).toFixed(2)}x; goal <= 2x ${goal ? "met" : "not met"}`
        : `${missed} changes never converged`,
    figures: {
      "normal: change -> applied median ms": ms(rounds.normal.applied),
      "normal: change -> converged median ms": ms(rounds.normal.converged),
      "restart: stopped -> API served again median ms": ms(rounds.restart.back),
      "restart: back -> applied median ms": ms(rounds.restart.applied),
      "restart: back -> converged median ms": ms(rounds.restart.converged),
      "compaction: stopped -> API served again median ms": ms(rounds.compaction.back),
      "compaction: back -> applied median ms": ms(rounds.compaction.applied),
      "compaction: back -> converged median ms": ms(rounds.compaction.converged),
      "changes missed": missed,
    },
    ok: missed === 0,
  };
}
