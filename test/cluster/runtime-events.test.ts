// The Events recorder against a real API server: a hot loop yields one events.k8s.io/v1 Event whose
// series count the server accepts, and a handful of requests instead of thousands.
import { describe, expect, it } from "vitest";
import { KubeClient, type KubeObject } from "../../src/kube/index.js";
import { EventRecorder, kubeEventSink, type EventObject } from "../../src/runtime/index.js";
import { adminKubeConfig, createTestNamespace } from "../support/cluster.js";

describe("events", () => {
  it("a hot loop of one event costs one create and one series update", async () => {
    const ns = await createTestNamespace("rt-events");
    const client = new KubeClient(adminKubeConfig());
    let requests = 0;
    client.onRequest(() => requests++);
    const regarding = await client.apply<KubeObject>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "subject", namespace: ns },
    });
    const before = requests;
    const recorder = new EventRecorder({
      controller: "onto.paas/onto-operator",
      instance: "test",
      sink: kubeEventSink(client),
      flushIntervalMs: 200,
    });
    for (let i = 0; i < 5000; i++)
      recorder.warning(regarding, "ReconcileFailed", "Reconcile", "the same failure");
    recorder.normal(regarding, "Applied", "Apply", "3 objects applied");
    await new Promise((r) => setTimeout(r, 400));
    await recorder.flush();
    const sent = requests - before;

    const events = await client.list<EventObject>("events.k8s.io/v1", "Event", { namespace: ns });
    const failed = events.items.filter((e) => e.reason === "ReconcileFailed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.series?.count).toBe(5000);
    expect(failed[0]!.regarding).toMatchObject({
      kind: "ConfigMap",
      name: "subject",
      uid: regarding.metadata!.uid,
    });
    expect(events.items.filter((e) => e.reason === "Applied")).toHaveLength(1);
    console.log(`[figures] events: 5001 recorded, ${sent} API requests (creates + series updates)`);
    expect(sent).toBeLessThanOrEqual(4);
    await client.close();
  });
});
