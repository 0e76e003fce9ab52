import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConnectionError, InvalidError } from "../kube/index.js";
import { EventRecorder, type EventObject, type EventSeries, type EventSink } from "./events.js";

class RecordingSink implements EventSink {
  created: EventObject[] = [];
  series: { namespace: string; name: string; series: EventSeries }[] = [];
  failCreates = false;
  /** The API server cannot be reached: creates fail with a ConnectionError. */
  unreachable = false;
  attempts = 0;
  async create(event: EventObject): Promise<void> {
    this.attempts++;
    if (this.unreachable)
      throw new ConnectionError("POST", "/apis/events.k8s.io/v1/events", new Error("ECONNREFUSED"));
    if (this.failCreates) throw new InvalidError("invalid", 422, "Invalid", "POST", "/events", undefined);
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

  it("keeps Events the API server could not take during an outage and sends them when it is back", async () => {
    sink.unreachable = true;
    recorder.warning(pod, "OOMKilled", "RaiseMemoryLimit", "limit raised to 768Mi");
    recorder.normal(other, "Applied", "Reconcile", "3 objects");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sink.created).toHaveLength(0);
    expect(recorder.pendingCount).toBe(2);
    const attemptsDuringOutage = sink.attempts;
    // Backoff: 1, 2, 4 s... a handful of tries in 10 s, not one per tick.
    expect(attemptsDuringOutage).toBeLessThanOrEqual(8);
    sink.unreachable = false;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sink.created.map((e) => e.reason)).toEqual(["OOMKilled", "Applied"]);
    expect(recorder.pendingCount).toBe(0);
    expect(recorder.dropped).toBe(0);
  });

  it("does not retry an Event the server refused on its merits", async () => {
    sink.failCreates = true;
    recorder.warning(pod, "Bad", "Reconcile", "x");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sink.attempts).toBe(1);
    expect(recorder.pendingCount).toBe(0);
  });

  it("bounds what waits: the oldest beyond maxPending, and any older than the series window, are dropped", async () => {
    recorder = new EventRecorder({
      controller: "c",
      instance: "i",
      sink,
      maxPending: 3,
      seriesWindowMs: 60_000,
    });
    sink.unreachable = true;
    for (let i = 0; i < 5; i++)
      recorder.warning({ ...pod, metadata: { ...pod.metadata, name: `p${i}` } }, "R", "A", "n");
    await vi.advanceTimersByTimeAsync(0);
    expect(recorder.pendingCount).toBe(3);
    expect(recorder.dropped).toBe(2);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(recorder.pendingCount).toBe(0);
    expect(recorder.dropped).toBe(5);
    sink.unreachable = false;
    await recorder.stop();
    expect(sink.created).toHaveLength(0);
  });

  it("writes the repeats of an Event once its delayed create succeeded", async () => {
    sink.unreachable = true;
    recorder.warning(pod, "CrashLoop", "Diagnose", "exit 1");
    recorder.warning(pod, "CrashLoop", "Diagnose", "exit 1");
    await vi.advanceTimersByTimeAsync(1_500);
    sink.unreachable = false;
    await vi.advanceTimersByTimeAsync(40_000);
    expect(sink.created).toHaveLength(1);
    expect(sink.series.at(-1)?.series.count).toBe(2);
  });
});
