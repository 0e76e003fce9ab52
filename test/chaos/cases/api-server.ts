// The API server goes away during reconciles: a spec change is made, and at once kube-apiserver is
// stopped and started again (a real restart of the process, with downtime), or etcd is compacted
// to its current revision and then the API server restarted (every watch of the operator comes
// back with a resourceVersion etcd no longer has: 410 Gone, relist). The time from the server
// being back to the platform having converged on the change is compared with the time a change
// takes with no fault; a change that never converges is a change missed.
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

async function converged(client: KubeClient, namespace: string, replicas: number): Promise<true | undefined> {
  const p = await readPlatform(client, namespace, NAME);
  const d = await client.getIfExists<Workload>({
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace,
    name: "gateway",
  });
  return p.status?.observedGeneration === p.metadata.generation &&
    p.status?.phase === "Running" &&
    d?.spec?.replicas === replicas &&
    d.status?.readyReplicas === replicas
    ? true
    : undefined;
}

export async function apiServerFaults(
  client: KubeClient,
  opts: { rounds: number; downtimeMs?: number },
): Promise<CaseResult> {
  const namespace = await createTestNamespace("chaos-apiserver");
  const slot = await operatorSlot(client, namespace);
  const normal: number[] = [];
  const afterRestart: number[] = [];
  const afterCompaction: number[] = [];
  let missed = 0;
  let replicas = 2;
  const change = async (): Promise<number> => {
    replicas = replicas === 2 ? 3 : 2;
    await client.mergePatch({ ...PLATFORM_REF, namespace, name: NAME }, { spec: { gateway: { replicas } } });
    return replicas;
  };
  const settle = async (target: number, from: number): Promise<number | undefined> => {
    try {
      await eventually("the change to converge", () => converged(client, namespace, target), 180_000, 100);
      return performance.now() - from;
    } catch {
      missed++;
      return undefined;
    }
  };
  try {
    await slot.start();
    const sample: OntoPlatform = loadSample("minimal.yaml", namespace);
    await client.apply(sample);
    await eventually("the platform to be Running", () => converged(client, namespace, 2), 300_000, 500);
    for (let i = 0; i < opts.rounds; i++) {
      const from = performance.now();
      const took = await settle(await change(), from);
      if (took !== undefined) normal.push(took);
    }
    for (let i = 0; i < opts.rounds; i++) {
      const target = await change();
      await restartComponent({
        stateDir: clusterStateDir(),
        component: "kube-apiserver",
        downtimeMs: opts.downtimeMs ?? 2_000,
      });
      const took = await settle(target, performance.now());
      if (took !== undefined) afterRestart.push(took);
    }
    for (let i = 0; i < opts.rounds; i++) {
      const target = await change();
      await compactEtcd();
      await restartComponent({
        stateDir: clusterStateDir(),
        component: "kube-apiserver",
        downtimeMs: opts.downtimeMs ?? 2_000,
      });
      const took = await settle(target, performance.now());
      if (took !== undefined) afterCompaction.push(took);
    }
  } finally {
    await slot.kill();
    await slot.revoke().catch(() => undefined);
  }
  const base = median(normal);
  const ratio = (values: number[]): string => (values.length ? (median(values) / base).toFixed(2) : "n/a");
  const goal = Math.max(median(afterRestart), median(afterCompaction)) <= 2 * base;
  return {
    name: "API server restart and etcd compaction during reconciles",
    did: `${opts.rounds} spec changes with no fault, ${opts.rounds} each followed at once by an API server restart (${opts.downtimeMs ?? 2_000} ms down), ${opts.rounds} by an etcd compaction to the current revision and a restart`,
    found:
      missed === 0
        ? `every change converged; after the server returned: ${ratio(afterRestart)}x normal (restart), ${ratio(afterCompaction)}x (compaction); goal <= 2x ${goal ? "met" : "not met"}`
        : `${missed} changes never converged`,
    figures: {
      "normal converge median ms": Math.round(base),
      "after restart median ms": Math.round(median(afterRestart)),
      "after compaction+restart median ms": Math.round(median(afterCompaction)),
      "changes missed": missed,
    },
    ok: missed === 0,
  };
}
