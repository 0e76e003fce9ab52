// The informer against a real API server: it delivers every change (counted) across an API server
// restart and after etcd compaction forces a 410; the kube client's typed errors and apply paths.
import { describe, expect, it } from "vitest";
import { GoneError, InvalidError, KubeClient, NotFoundError, type KubeObject } from "../../src/kube/index.js";
import { Informer } from "../../src/runtime/index.js";
import { clusterUp, restartComponent } from "../../src/localcluster/launcher.js";
import { adminKubeConfig, clusterStateDir, createTestNamespace, eventually } from "../support/cluster.js";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

async function etcd(path: string, body: unknown): Promise<Record<string, unknown>> {
  // clusterUp reuses the running control plane and tells where its etcd listens.
  const info = await clusterUp({ stateDir: clusterStateDir() });
  const res = await fetch(`${info.etcdClientUrl}${path}`, { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

async function compactEtcd(): Promise<string> {
  const range = await etcd("/v3/kv/range", { key: Buffer.from("/").toString("base64") });
  const revision = (range.header as { revision: string }).revision;
  await etcd("/v3/kv/compaction", { revision, physical: true });
  return revision;
}

describe("informer", () => {
  it("delivers every change across an API server restart and a compaction-forced 410", async () => {
    const ns = await createTestNamespace("rt-informer");
    const client = new KubeClient(adminKubeConfig());
    const informer = new Informer<ConfigMap>(client, {
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: ns,
      labelSelector: "test=informer",
      backoffBaseMs: 100,
      backoffMaxMs: 2_000,
    });
    // What the handlers saw: the last seq per name, and names whose deletion was delivered.
    const seen = new Map<string, number>();
    const deleted = new Set<string>();
    let events = 0;
    informer.on({
      add: (o) => {
        events++;
        seen.set(o.metadata!.name!, Number(o.data?.seq));
      },
      update: (_old, o) => {
        events++;
        seen.set(o.metadata!.name!, Number(o.data?.seq));
      },
      delete: (o) => {
        events++;
        deleted.add(o.metadata!.name!);
        seen.delete(o.metadata!.name!);
      },
    });
    informer.start();
    await informer.waitForSync();

    // Expected final state, maintained as the test writes.
    const expected = new Map<string, number>();
    const write = async (name: string, seq: number): Promise<void> => {
      await client.apply<ConfigMap>({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: ns, labels: { test: "informer" } },
        data: { seq: String(seq) },
      });
      expected.set(name, seq);
    };
    const remove = async (name: string): Promise<void> => {
      await client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name });
      expected.delete(name);
    };
    const missed = (): number => {
      let n = 0;
      for (const [name, seq] of expected) if (seen.get(name) !== seq) n++;
      for (const name of seen.keys()) if (!expected.has(name)) n++;
      return n;
    };

    for (let i = 0; i < 10; i++) await write(`cm-${i}`, 1);
    await eventually("the first writes to be seen", async () => (missed() === 0 ? true : undefined), 20_000);

    // 1. API server restart: changes right before and right after it.
    await write("cm-0", 2);
    await write("cm-1", 2);
    const restarts = informer.stats.restartsAfterError + informer.stats.relistsAfterGone;
    await restartComponent({ stateDir: clusterStateDir(), component: "kube-apiserver" });
    await eventually(
      "the API server to answer again",
      () => client.list("v1", "Namespace").then(() => true),
      60_000,
    );
    await write("cm-2", 3);
    await remove("cm-3");
    await write("cm-10", 1);
    await eventually(
      "every change after the restart to be seen",
      async () => (missed() === 0 ? true : undefined),
      60_000,
    );
    expect(informer.stats.restartsAfterError + informer.stats.relistsAfterGone).toBeGreaterThan(restarts);

    // 2. A resource version older than an etcd compaction is refused with 410, as a typed error.
    const oldRv = (await client.list("v1", "ConfigMap", { namespace: ns })).resourceVersion;
    for (let i = 0; i < 5; i++) await write(`cm-${i + 4}`, 5);
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { generateName: "noise-", namespace: ns },
    });
    const relistsBefore = informer.stats.relistsAfterGone;
    await restartComponent({ stateDir: clusterStateDir(), component: "kube-apiserver" });
    const compactedAt = await compactEtcd();
    await eventually(
      "the API server to answer again",
      () => client.list("v1", "Namespace").then(() => true),
      60_000,
    );
    await expect(async () => {
      for await (const _ of client.watch("v1", "ConfigMap", {
        namespace: ns,
        resourceVersion: oldRv,
        timeoutSeconds: 5,
      })) {
        // any event means the old version was still served
      }
    }).rejects.toBeInstanceOf(GoneError);
    await write("cm-4", 6);
    await remove("cm-5");
    await eventually(
      "every change after the compaction to be seen",
      async () => (missed() === 0 ? true : undefined),
      60_000,
    );
    expect(informer.stats.relistsAfterGone).toBeGreaterThan(relistsBefore);

    // The cache holds exactly what the API server holds, without managedFields.
    const live = await client.list<ConfigMap>("v1", "ConfigMap", {
      namespace: ns,
      labelSelector: "test=informer",
    });
    expect(informer.store.keys().sort()).toEqual(live.items.map((o) => `${ns}/${o.metadata!.name}`).sort());
    expect(informer.store.list().every((o) => o.metadata?.managedFields === undefined)).toBe(true);
    expect(deleted.has("cm-3") && deleted.has("cm-5")).toBe(true);
    console.log(
      `[figures] informer: events delivered ${events}, missed ${missed()}, compacted at revision ${compactedAt}, stats ${JSON.stringify(informer.stats)}`,
    );
    expect(missed()).toBe(0);
    await informer.stop();
    await client.close();
  });

  it("the client applies, patches status, deletes, discovers and raises typed errors", async () => {
    const ns = await createTestNamespace("rt-client");
    const client = new KubeClient(adminKubeConfig());
    const codes: string[] = [];
    client.onRequest((r) => codes.push(`${r.method} ${r.code}`));

    const applied = await client.apply<ConfigMap>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: ns },
      data: { k: "v" },
    });
    expect(applied.metadata?.managedFields?.length).toBeGreaterThan(0);
    expect(JSON.stringify(applied.metadata?.managedFields)).toContain('"manager":"onto-operator"');

    await expect(
      client.get({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "missing" }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      client.apply({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "Bad_Name", namespace: ns } }),
    ).rejects.toSatisfy(
      (e: unknown) => e instanceof InvalidError && e.causes.some((c) => c.field === "metadata.name"),
    );

    // Status subresource: a Deployment's status via SSA on /status.
    await client.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: "d" } },
        template: {
          metadata: { labels: { app: "d" } },
          spec: { containers: [{ name: "c", image: "busybox" }] },
        },
      },
    } as KubeObject);
    const withStatus = await client.applyStatus({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: ns },
      status: {
        observedGeneration: 1,
        conditions: [{ type: "Available", status: "True", reason: "Test", message: "" }],
      },
    } as KubeObject);
    expect((withStatus as { status?: { observedGeneration?: number } }).status?.observedGeneration).toBe(1);
    const patched = await client.patchStatus<KubeObject & { status?: { readyReplicas?: number } }>(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "d" },
      { readyReplicas: 0 },
    );
    expect(patched.kind).toBe("Deployment");

    expect(await client.discovery.hasGroupVersion("apps/v1")).toBe(true);
    expect(await client.discovery.hasGroupVersion("monitoring.coreos.com/v1")).toBe(true);
    // No custom metrics adapter runs in the local cluster.
    expect(await client.discovery.hasGroupVersion("custom.metrics.k8s.io/v1beta2")).toBe(false);
    expect(await client.discovery.hasResource("coordination.k8s.io/v1", "Lease")).toBe(true);

    expect(await client.forceDelete({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "a" })).toBe(
      true,
    );
    expect(await client.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "a" })).toBe(
      false,
    );
    expect(codes).toContain("GET 404");
    expect(codes).toContain("PATCH 422");
    await client.close();
  });
});
