// A controller on a real API server: an always-failing key backs off exponentially without
// starving the others; a reconcile that reads the cache and changes nothing sends no request;
// owned objects enqueue their owner; /metrics and /readyz answer.
import { afterAll, describe, expect, it } from "vitest";
import { KubeClient, type KubeObject } from "../../src/kube/index.js";
import { Manager } from "../../src/runtime/index.js";
import { adminKubeConfig, createTestNamespace, eventually } from "../support/cluster.js";

describe("controller", () => {
  const managers: Manager[] = [];
  afterAll(async () => {
    for (const m of managers) await m.stop();
  });

  it("backs a failing key off exponentially, does not starve others, and a no-op reconcile sends no request", async () => {
    const ns = await createTestNamespace("rt-controller");
    const writer = new KubeClient(adminKubeConfig());
    const mgr = new Manager({
      client: new KubeClient(adminKubeConfig()),
      metricsPort: 0,
      healthPort: 0,
      bindAddress: "127.0.0.1",
      processMetrics: false,
    });
    managers.push(mgr);
    const configMaps = mgr.informers.informer({ apiVersion: "v1", kind: "ConfigMap", namespace: ns });
    const attempts = new Map<string, number[]>();
    const ownerEvents: string[] = [];
    const controller = mgr.addController({
      name: "flaky",
      for: { apiVersion: "v1", kind: "ConfigMap", namespace: ns },
      owns: [{ apiVersion: "v1", kind: "Secret", namespace: ns }],
      maxConcurrentReconciles: 1,
      reconciler: async ({ key, namespace, name }) => {
        attempts.set(key, [...(attempts.get(key) ?? []), performance.now()]);
        const cm = configMaps.store.getByName(namespace, name);
        if (cm?.metadata?.labels?.owned === "yes") ownerEvents.push(key);
        if (name === "bad") throw new Error("always fails");
      },
    });
    await mgr.start();
    const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: ns, labels },
    });
    await writer.apply(cm("bad"));
    await eventually("the failing key to be retried 8 times", async () =>
      (attempts.get(`${ns}/bad`)?.length ?? 0) >= 8 ? true : undefined,
    );

    // Other keys are served while the bad one keeps failing, even with a single worker.
    for (let i = 0; i < 5; i++) await writer.apply(cm(`good-${i}`));
    await eventually("every good key to be reconciled", async () =>
      [0, 1, 2, 3, 4].every((i) => attempts.has(`${ns}/good-${i}`)) ? true : undefined,
    );

    // Retry gaps double from 5 ms: the queue never hands the key out before its backoff.
    const times = attempts.get(`${ns}/bad`)!;
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(5 * 2 ** i * 0.95));
    const retries = await mgr.metrics.total("workqueue_retries_total", { name: "flaky" });
    expect(retries).toBeGreaterThanOrEqual(times.length - 1);
    expect(
      await mgr.metrics.total("controller_runtime_reconcile_errors_total", { controller: "flaky" }),
    ).toBe(
      await mgr.metrics.total("controller_runtime_reconcile_total", { controller: "flaky", result: "error" }),
    );

    // Owned objects enqueue their owner.
    const owner = await writer.apply<KubeObject>(cm("owner", { owned: "yes" }));
    await eventually("the owner's first reconcile", async () => (ownerEvents.length >= 1 ? true : undefined));
    const before = ownerEvents.length;
    await writer.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "child",
        namespace: ns,
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata!.uid!, controller: true },
        ],
      },
      stringData: { k: "v" },
    } as KubeObject);
    await eventually("a reconcile of the owner after its child changed", async () =>
      ownerEvents.length > before ? true : undefined,
    );

    // No-op reconciles read only the cache: the request counter does not move.
    const requestsBefore = await mgr.metrics.total("rest_client_requests_total");
    const successBefore = await mgr.metrics.total("controller_runtime_reconcile_total", {
      controller: "flaky",
      result: "success",
    });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) controller.enqueue(`${ns}/good-${i}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const noops = await eventually("the forced reconciles", async () => {
      const n =
        (await mgr.metrics.total("controller_runtime_reconcile_total", {
          controller: "flaky",
          result: "success",
        })) - successBefore;
      return n >= 50 ? n : undefined;
    });
    const requestsAfter = await mgr.metrics.total("rest_client_requests_total");
    console.log(
      `[figures] controller: bad key attempts ${times.length} in ${Math.round(times.at(-1)! - times[0]!)} ms, gaps ms ${gaps
        .map((g) => Math.round(g))
        .join(
          ",",
        )}; retries metric ${retries}; no-op reconciles ${noops}, requests during them ${requestsAfter - requestsBefore}`,
    );
    expect(requestsAfter - requestsBefore).toBe(0);

    // Endpoints.
    const ready = await fetch(`http://${mgr.addresses.health}/readyz`);
    expect(ready.status).toBe(200);
    expect((await fetch(`http://${mgr.addresses.health}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://${mgr.addresses.metrics}/metrics`)).text();
    expect(metrics).toMatch(/controller_runtime_reconcile_total\{controller="flaky",result="error"\} \d+/);
    expect(metrics).toMatch(/workqueue_retries_total\{name="flaky"\} \d+/);
    expect(metrics).toMatch(/rest_client_requests_total\{code="200",method="GET"\} \d+/);
    expect(metrics).toContain("controller_runtime_max_concurrent_reconciles");
    await writer.close();
  });

  it("stop lets an in-flight reconcile finish, and gives up on one that outlasts the bound", async () => {
    const ns = await createTestNamespace("rt-shutdown");
    const writer = new KubeClient(adminKubeConfig());
    const run = async (
      reconcileMs: number,
      boundMs: number,
    ): Promise<{ finished: boolean; stopMs: number }> => {
      const mgr = new Manager({
        client: new KubeClient(adminKubeConfig()),
        shutdownTimeoutMs: boundMs,
        processMetrics: false,
      });
      let started = false;
      let finished = false;
      mgr.addController({
        name: `slow-${reconcileMs}`,
        for: { apiVersion: "v1", kind: "ConfigMap", namespace: ns, labelSelector: "test=shutdown" },
        reconciler: async () => {
          started = true;
          await new Promise((r) => setTimeout(r, reconcileMs));
          finished = true;
        },
      });
      await mgr.start();
      await eventually("the reconcile to start", async () => (started ? true : undefined));
      const t0 = performance.now();
      await mgr.stop();
      return { finished, stopMs: performance.now() - t0 };
    };
    await writer.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "one", namespace: ns, labels: { test: "shutdown" } },
    });
    const graceful = await run(1_000, 10_000);
    expect(graceful.finished).toBe(true);
    const bounded = await run(30_000, 500);
    expect(bounded.finished).toBe(false);
    expect(bounded.stopMs).toBeLessThan(5_000);
    console.log(
      `[figures] shutdown: 1 s reconcile drained, stop took ${Math.round(graceful.stopMs)} ms; 30 s reconcile abandoned after the 500 ms bound, stop took ${Math.round(bounded.stopMs)} ms`,
    );
    await writer.close();
  });
});
