// The runtime through API-server outages: a relay between the runtime and the real API server is
// cut and restored (test/support/fault-proxy.ts). An informer must see a change soon after the
// server is back however long it was gone (its backoff starts over when the server answers), and
// Events recorded while the server was unreachable must reach it once it is back.
import { afterAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { EventRecorder, Informer, kubeEventSink } from "../../src/runtime/index.js";
import { adminKubeConfig, createTestNamespace, eventually, kubeconfigPath } from "../support/cluster.js";
import { startFaultProxy, type FaultProxy } from "../support/fault-proxy.js";

const admin = new KubeClient(adminKubeConfig());
const proxies: FaultProxy[] = [];
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runtime through API-server outages", () => {
  it("an informer sees a change within seconds of the server returning after repeated outages", async () => {
    const ns = await createTestNamespace("rt-outage");
    const proxy = await startFaultProxy(kubeconfigPath());
    proxies.push(proxy);
    const client = new KubeClient(proxy.kubeConfig, { requestTimeoutMs: 5_000 });
    const informer = new Informer(client, { apiVersion: "v1", kind: "ConfigMap", namespace: ns });
    informer.start();
    await informer.waitForSync();
    // Four outages of 8 s with a moment of service between them: failures pile up.
    for (let i = 0; i < 4; i++) {
      await proxy.cut();
      await sleep(8_000);
      await proxy.restore();
      await sleep(300);
    }
    await proxy.cut();
    await sleep(8_000);
    await proxy.restore();
    const back = performance.now();
    await admin.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "after-outage", namespace: ns },
    });
    await eventually(
      "the informer to see the new ConfigMap",
      async () => (informer.store.getByName(ns, "after-outage") ? true : undefined),
      60_000,
      50,
    );
    const blindMs = performance.now() - back;
    console.log(
      `[figures] informer after 5 outages of 8 s: change seen ${Math.round(blindMs)} ms after the server returned; ` +
        `watch restarts after errors ${informer.stats.restartsAfterError}`,
    );
    // Bounded by the unreachable backoff (1 s) plus a list and a watch: not the 30 s backoff cap.
    expect(blindMs).toBeLessThan(10_000);
    await informer.stop();
    await client.close();
  }, 180_000);

  it("Events recorded while the server is unreachable are created once it is back", async () => {
    const ns = await createTestNamespace("rt-outage-events");
    const proxy = await startFaultProxy(kubeconfigPath());
    proxies.push(proxy);
    const client = new KubeClient(proxy.kubeConfig, { requestTimeoutMs: 3_000 });
    const recorder = new EventRecorder({
      controller: "onto.paas/test",
      instance: "outage",
      sink: kubeEventSink(client),
    });
    const regarding = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "subject", namespace: ns } };
    await proxy.cut();
    for (const reason of ["DuringOutageOne", "DuringOutageTwo", "DuringOutageThree"])
      recorder.warning(regarding, reason, "Test", `recorded while the API server was unreachable: ${reason}`);
    await sleep(6_000);
    expect(recorder.pendingCount).toBe(3);
    await proxy.restore();
    const back = performance.now();
    const reasons = await eventually(
      "the three Events to be created",
      async () => {
        const list = await admin.list<{ reason?: string } & { metadata: object }>(
          "events.k8s.io/v1",
          "Event",
          { namespace: ns },
        );
        const found = list.items.map((e) => e.reason).filter((r) => r?.startsWith("DuringOutage"));
        return found.length === 3 ? found.sort() : undefined;
      },
      60_000,
      200,
    );
    console.log(
      `[figures] Events during a 6 s outage: 3 recorded, ${reasons.length} created ${Math.round(performance.now() - back)} ms after the server returned, dropped ${recorder.dropped}`,
    );
    expect(reasons).toEqual(["DuringOutageOne", "DuringOutageThree", "DuringOutageTwo"]);
    expect(recorder.dropped).toBe(0);
    await recorder.stop();
    await client.close();
  }, 120_000);
});
