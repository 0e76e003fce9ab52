import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ExponentialBackoff, RetryLimiter, TokenBucket } from "./backoff.js";
import { systemClock } from "./clock.js";
import { WorkQueue } from "./queue.js";

beforeEach(() => {
  vi.useFakeTimers({ now: 1_700_000_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("WorkQueue", () => {
  it("keeps one entry per key however often it is added", async () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.length).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
    expect(q.length).toBe(0);
  });

  it("never hands a key to two workers; a key re-added while processing comes back after done", async () => {
    const q = new WorkQueue();
    q.add("a");
    expect(await q.get()).toBe("a");
    q.add("a");
    q.add("a");
    expect(q.length).toBe(0);
    let second: string | undefined = "pending";
    void q.get().then((k) => (second = k));
    await vi.advanceTimersByTimeAsync(10);
    expect(second).toBe("pending");
    q.done("a");
    await vi.advanceTimersByTimeAsync(0);
    expect(second).toBe("a");
  });

  it("a key that is not re-added is not processed again", async () => {
    const q = new WorkQueue();
    q.add("a");
    expect(await q.get()).toBe("a");
    q.done("a");
    expect(q.length).toBe(0);
  });

  it("addAfter queues the key when its time comes, and keeps the earliest due time", async () => {
    const q = new WorkQueue();
    q.addAfter("a", 1000);
    q.addAfter("a", 5000);
    expect(q.length).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(q.length).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(q.length).toBe(1);
    expect(await q.get()).toBe("a");
    q.done("a");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(q.length).toBe(0);

    q.addAfter("b", 5000);
    q.addAfter("b", 100);
    await vi.advanceTimersByTimeAsync(100);
    expect(q.length).toBe(1);
  });

  it("retries after a failure with a doubling delay, and forget resets it", async () => {
    const q = new WorkQueue();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const start = Date.now();
      q.addRateLimited("a");
      while (q.length === 0) await vi.advanceTimersByTimeAsync(1);
      delays.push(Date.now() - start);
      expect(await q.get()).toBe("a");
      q.done("a");
    }
    expect(delays).toEqual([5, 10, 20, 40]);
    expect(q.retries("a")).toBe(4);
    q.forget("a");
    expect(q.retries("a")).toBe(0);
  });

  it("retries failures of an unreachable server at a fixed pace, without growing the key's backoff", async () => {
    const q = new WorkQueue();
    // Twenty failures while the server was down (one every retry), then one of the key's own.
    for (let i = 0; i < 20; i++) {
      const start = Date.now();
      q.addAfterUnavailable("a", 1_000);
      while (q.length === 0) await vi.advanceTimersByTimeAsync(10);
      expect(Date.now() - start).toBe(1_000);
      expect(await q.get()).toBe("a");
      q.done("a");
    }
    expect(q.retries("a")).toBe(0);
    const start = Date.now();
    q.addRateLimited("a");
    while (q.length === 0) await vi.advanceTimersByTimeAsync(1);
    expect(Date.now() - start).toBe(5);
  });

  it("shutdown stops intake, wakes idle workers and lets in-flight keys finish", async () => {
    const q = new WorkQueue();
    q.add("busy");
    expect(await q.get()).toBe("busy");
    const idle = q.get();
    q.shutdown();
    expect(await idle).toBeUndefined();
    expect(await q.get()).toBeUndefined();
    q.add("new");
    await vi.advanceTimersByTimeAsync(100);
    expect(q.length).toBe(0);
    let drained = false;
    void q.drained().then(() => (drained = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(false);
    q.done("busy");
    await vi.advanceTimersByTimeAsync(0);
    expect(drained).toBe(true);
  });

  it("shutdown drops keys that wait or are delayed", async () => {
    const q = new WorkQueue();
    q.add("waiting");
    q.addAfter("later", 50);
    q.shutdown();
    expect(q.length).toBe(0);
    expect(await q.get()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(100);
    expect(q.length).toBe(0);
  });

  it("reports adds, depth, retries and durations to its observer", async () => {
    const seen = {
      added: 0,
      depth: [] as number[],
      queued: [] as number[],
      worked: [] as number[],
      retried: 0,
    };
    const q = new WorkQueue({
      observer: {
        added: () => seen.added++,
        depth: (n) => seen.depth.push(n),
        queued: (s) => seen.queued.push(s),
        worked: (s) => seen.worked.push(s),
        retried: () => seen.retried++,
      },
    });
    q.add("a");
    q.add("a");
    await vi.advanceTimersByTimeAsync(250);
    await q.get();
    await vi.advanceTimersByTimeAsync(500);
    q.done("a");
    q.addRateLimited("a");
    expect(seen.added).toBe(1);
    expect(seen.depth).toEqual([1, 0]);
    expect(seen.queued).toEqual([0.25]);
    expect(seen.worked).toEqual([0.5]);
    expect(seen.retried).toBe(1);
  });

  it("under any interleaving, no key is held twice and every added key is processed", async () => {
    vi.useRealTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ key: fc.constantFrom("a", "b", "c"), workers: fc.integer({ min: 1, max: 3 }) }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        async (ops) => {
          const q = new WorkQueue();
          const held = new Set<string>();
          const processedAfterAdd = new Map<string, boolean>();
          let violation = false;
          const workers = Array.from({ length: 3 }, async () => {
            for (;;) {
              const key = await q.get();
              if (key === undefined) return;
              if (held.has(key)) violation = true;
              held.add(key);
              processedAfterAdd.set(key, true);
              await new Promise((r) => setImmediate(r));
              held.delete(key);
              q.done(key);
            }
          });
          for (const op of ops) {
            processedAfterAdd.set(op.key, false);
            q.add(op.key);
            for (let i = 0; i < op.workers; i++) await new Promise((r) => setImmediate(r));
          }
          while (q.length > 0 || q.inFlight > 0) await new Promise((r) => setImmediate(r));
          q.shutdown();
          await Promise.all(workers);
          expect(violation).toBe(false);
          expect([...processedAfterAdd.values()].every(Boolean)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("backoff", () => {
  it("doubles from 5 ms per key and stops growing at 1000 s", () => {
    const b = new ExponentialBackoff();
    const delays = Array.from({ length: 30 }, () => b.next("k"));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(5 * 2 ** 17);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[29]).toBe(1_000_000);
    expect(b.next("other")).toBe(5);
  });

  it("the token bucket lets a burst through, then spaces requests at its rate", () => {
    const bucket = new TokenBucket(10, 3, systemClock);
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
    expect(bucket.reserve()).toBeCloseTo(100);
    expect(bucket.reserve()).toBeCloseTo(200);
    vi.advanceTimersByTime(1000);
    // 10 tokens refilled minus the 2 borrowed, capped at the burst of 3
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0]);
  });

  it("the retry limiter waits for the longer of key backoff and global rate", () => {
    const limiter = new RetryLimiter({ perSecond: 1, burst: 1 });
    expect(limiter.when("a")).toBe(5);
    expect(limiter.when("b")).toBeCloseTo(1000);
    expect(limiter.when("c")).toBeCloseTo(2000);
  });
});
