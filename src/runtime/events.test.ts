import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EventRecorder, type EventObject, type EventSeries, type EventSink } from "./events.js";

class RecordingSink implements EventSink {
  created: EventObject[] = [];
  series: { namespace: string; name: string; series: EventSeries }[] = [];
  failCreates = false;
  async create(event: EventObject): Promise<void> {
    if (this.failCreates) throw new Error("forbidden");
    this.created.push(event);
  }
  async updateSeries(namespace: string, name: string, series: EventSeries): Promise<void> {
    this.series.push({ namespace, name, series });
  }
}

const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web-0", namespace: "shop", uid: "u-1" } };
const other = { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: "shop", uid: "u-2" } };

let sink: RecordingSink;
let recorder: EventRecorder;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2025-03-01T10:00:00Z") });
  sink = new RecordingSink();
  recorder = new EventRecorder({ controller: "onto.paas/onto-operator", instance: "op-1", sink });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("EventRecorder", () => {
  it("writes an events.k8s.io/v1 Event about the object", async () => {
    recorder.warning(pod, "OOMKilled", "RaiseMemoryLimit", "limit raised to 768Mi");
    await recorder.flush();
    expect(sink.created).toHaveLength(1);
    expect(sink.created[0]).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { namespace: "shop" },
      eventTime: "2025-03-01T10:00:00.000000Z",
      reportingController: "onto.paas/onto-operator",
      reportingInstance: "op-1",
      type: "Warning",
      reason: "OOMKilled",
      action: "RaiseMemoryLimit",
      note: "limit raised to 768Mi",
      regarding: { apiVersion: "v1", kind: "Pod", namespace: "shop", name: "web-0", uid: "u-1" },
    });
    expect(sink.created[0]!.metadata.name).toMatch(/^web-0\.[0-9a-f]+$/);
  });

  it("a hot loop costs one create and one series update per flush interval", async () => {
    for (let i = 0; i < 1000; i++) recorder.warning(pod, "ReconcileFailed", "Reconcile", "boom");
    await vi.advanceTimersByTimeAsync(0);
    expect(sink.created).toHaveLength(1);
    expect(sink.series).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sink.series).toEqual([
      {
        namespace: "shop",
        name: sink.created[0]!.metadata.name,
        series: { count: 1000, lastObservedTime: "2025-03-01T10:00:00.000000Z" },
      },
    ]);
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      recorder.warning(pod, "ReconcileFailed", "Reconcile", "boom");
    }
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sink.created).toHaveLength(1);
    expect(sink.series).toHaveLength(2);
    expect(sink.series[1]!.series.count).toBe(1010);
  });

  it("different objects, reasons or notes are different events", async () => {
    recorder.normal(pod, "Scaled", "Scale", "to 3");
    recorder.normal(pod, "Scaled", "Scale", "to 4");
    recorder.normal(other, "Scaled", "Scale", "to 3");
    recorder.warning(pod, "Scaled", "Scale", "to 3");
    await recorder.flush();
    expect(sink.created).toHaveLength(4);
  });

  it("a repeat after the series window creates a new event", async () => {
    recorder.normal(pod, "Upgraded", "Upgrade", "to 1.2.0");
    await vi.advanceTimersByTimeAsync(6 * 60_000 + 1);
    recorder.normal(pod, "Upgraded", "Upgrade", "to 1.2.0");
    await recorder.flush();
    expect(sink.created).toHaveLength(2);
    expect(sink.series).toHaveLength(0);
  });

  it("a failed create is logged, not thrown, and its series is not patched", async () => {
    sink.failCreates = true;
    recorder.warning(pod, "X", "Y", "z");
    recorder.warning(pod, "X", "Y", "z");
    await recorder.flush();
    expect(sink.created).toHaveLength(0);
    expect(sink.series).toHaveLength(0);
  });

  it("truncates long notes to 1 kB", async () => {
    recorder.normal(pod, "Long", "Log", "x".repeat(5000));
    await recorder.flush();
    expect(sink.created[0]!.note).toHaveLength(1024);
  });
});
