import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AlreadyExistsError, ConflictError } from "../kube/index.js";
import { LeaderElector, type Lease, type LeaseApi } from "./leader-election.js";

/** Leases in memory with the API server's compare-and-swap on resourceVersion. */
class MemoryLeases implements LeaseApi {
  lease: Lease | undefined;
  private rv = 0;
  /** Identities whose requests fail, as if their network were cut. */
  readonly unreachable = new Set<string>();
  constructor(private readonly caller: () => string) {}

  /** Per identity: how long its next gets wait before the server reads the lease (a queued request). */
  readonly slowGets = new Map<string, number>();

  async get(): Promise<Lease | undefined> {
    this.check();
    const delay = this.slowGets.get(this.caller());
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    return this.lease && structuredClone(this.lease);
  }
  async create(lease: Lease): Promise<Lease> {
    this.check();
    if (this.lease)
      throw new AlreadyExistsError("exists", 409, "AlreadyExists", "POST", "/leases", undefined);
    this.lease = {
      ...structuredClone(lease),
      metadata: { ...lease.metadata, resourceVersion: String(++this.rv) },
    };
    return structuredClone(this.lease);
  }
  async update(lease: Lease): Promise<Lease> {
    this.check();
    if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
      throw new ConflictError("conflict", 409, "Conflict", "PUT", "/leases/x", undefined);
    }
    this.lease = {
      ...structuredClone(lease),
      metadata: { ...lease.metadata, resourceVersion: String(++this.rv) },
    };
    return structuredClone(this.lease);
  }
  private check(): void {
    if (this.unreachable.has(this.caller())) throw new Error("connection refused");
  }
}

interface Candidate {
  elector: LeaderElector;
  stop: AbortController;
  running: Promise<void>;
  workRuns: number;
  working: boolean;
  /** How many times the work returned. */
  ended: number;
  lost: string[];
}

let store: MemoryLeases;
let current = "";

function candidate(identity: string): Candidate {
  // Each candidate's API calls are attributed to it through `current`, set around each call.
  const api: LeaseApi = {
    get: () => as(identity, () => store.get()),
    create: (l) => as(identity, () => store.create(l)),
    update: (l) => as(identity, () => store.update(l)),
  };
  const elector = new LeaderElector({
    namespace: "ops",
    name: "onto-operator",
    identity,
    api,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    onLost: (reason) => c.lost.push(reason),
  });
  const stop = new AbortController();
  const c: Candidate = {
    elector,
    stop,
    running: Promise.resolve(),
    workRuns: 0,
    working: false,
    ended: 0,
    lost: [],
  };
  c.running = elector.run(stop.signal, async (signal) => {
    c.workRuns++;
    c.working = true;
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    c.working = false;
    c.ended++;
  });
  return c;
}

async function as<T>(identity: string, fn: () => Promise<T>): Promise<T> {
  current = identity;
  return fn();
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2025-01-01T00:00:00Z") });
  store = new MemoryLeases(() => current);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("LeaderElector", () => {
  it("the first candidate takes the lease and leads; the second stands by", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate("b");
    await vi.advanceTimersByTimeAsync(30_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.working).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.workRuns).toBe(0);
    expect(b.elector.holder()).toBe("a");
    expect(b.elector.inContact()).toBe(true);
    expect(store.lease?.spec?.holderIdentity).toBe("a");
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.running, b.running]);
  });

  it("a leader that cannot renew stops its work after the renew deadline; the standby takes over after the lease duration", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate("b");
    await vi.advanceTimersByTimeAsync(5_000);
    store.unreachable.add("a");
    const cutAt = Date.now();
    let aStoppedAt = 0;
    let bLeadsAt = 0;
    while (!aStoppedAt || !bLeadsAt) {
      await vi.advanceTimersByTimeAsync(100);
      if (!aStoppedAt && !a.working) aStoppedAt = Date.now();
      if (!bLeadsAt && b.elector.isLeader()) bLeadsAt = Date.now();
      if (Date.now() - cutAt > 60_000) break;
    }
    expect(aStoppedAt - cutAt).toBeGreaterThanOrEqual(8_000);
    expect(aStoppedAt - cutAt).toBeLessThanOrEqual(12_000);
    // b saw a's last renewal at most one retry period late, then waits the lease duration, then retries.
    expect(bLeadsAt - cutAt).toBeGreaterThanOrEqual(13_000);
    expect(bLeadsAt - cutAt).toBeLessThanOrEqual(15_000 + 2 * 2_400);
    expect(aStoppedAt).toBeLessThan(bLeadsAt);
    expect(store.lease?.spec?.holderIdentity).toBe("b");
    expect(store.lease?.spec?.leaseTransitions).toBe(1);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.running, b.running]);
  });

  it("writes stop before the standby can take over when the leader cannot renew", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate("b");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(a.elector.writeBlock()).toBeUndefined();
    store.unreachable.add("a");
    let refusedAt = 0;
    let bLeadsAt = 0;
    while (!bLeadsAt) {
      await vi.advanceTimersByTimeAsync(50);
      if (!refusedAt && a.elector.writeBlock() !== undefined) refusedAt = Date.now();
      if (b.elector.isLeader()) bLeadsAt = Date.now();
    }
    expect(refusedAt).toBeGreaterThan(0);
    // The margin is leaseDuration - renewDeadline (5 s) at least.
    expect(bLeadsAt - refusedAt).toBeGreaterThanOrEqual(4_000);
    expect(a.lost).toHaveLength(1);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.running, b.running]);
  });

  it("every write the leader lets through must end on the server before the standby can take over", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate("b");
    await vi.advanceTimersByTimeAsync(5_000);
    // Right after a renewal the window is most of the margin plus the time left to renew.
    expect(a.elector.writeWindowMs()).toBeGreaterThanOrEqual(5_000 / 2);
    // A write the server could work on for longer is refused, and the lease is kept.
    expect(a.elector.writeBlock(20_000)).toMatch(/could land after another replica can take/);
    expect(a.elector.isLeader()).toBe(true);
    store.unreachable.add("a");
    let lastDeadline = 0;
    let bLeadsAt = 0;
    while (!bLeadsAt) {
      await vi.advanceTimersByTimeAsync(50);
      const window = a.elector.isLeader() ? a.elector.writeWindowMs() : 0;
      if (a.elector.writeBlock(window) === undefined)
        lastDeadline = Math.max(lastDeadline, Date.now() + window);
      if (b.elector.isLeader()) bLeadsAt = Date.now();
    }
    expect(lastDeadline).toBeGreaterThan(0);
    expect(lastDeadline).toBeLessThanOrEqual(bLeadsAt);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.running, b.running]);
  });

  it("a standby counts the holder's renewal from when its answer arrived, not from when it asked", async () => {
    store.lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "onto-operator", namespace: "ops", resourceVersion: "1" },
      spec: { holderIdentity: "a", leaseDurationSeconds: 15, renewTime: new Date().toISOString() },
    };
    const b = new LeaderElector({
      namespace: "ops",
      name: "onto-operator",
      identity: "b",
      api: {
        get: () => as("b", () => store.get()),
        create: (l) => store.create(l),
        update: (l) => store.update(l),
      },
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    // The request waits 3 s in a queue; meanwhile the holder renews, and the answer shows that.
    store.slowGets.set("b", 3_000);
    const asked = b.tryAcquireOrRenew();
    await vi.advanceTimersByTimeAsync(1_000);
    store.lease = {
      ...store.lease,
      metadata: { ...store.lease.metadata, resourceVersion: "2" },
      spec: { ...store.lease.spec, renewTime: new Date().toISOString() },
    };
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await asked).toBe(false);
    store.slowGets.delete("b");
    // 15.5 s after it asked, but only 12.5 s after it saw the renewal: not yet.
    await vi.advanceTimersByTimeAsync(12_500);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    expect(store.lease.spec?.holderIdentity).toBe("a");
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await b.tryAcquireOrRenew()).toBe(true);
    expect(store.lease.spec?.holderIdentity).toBe("b");
  });

  it("a leader frozen past its lease refuses writes on its first tick back and reports the loss once", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(a.elector.holdsLease()).toBe(true);
    expect(a.elector.writeBlock()).toBeUndefined();
    // A freeze: the clock moves on, no timer or request of this process runs meanwhile.
    vi.setSystemTime(Date.now() + 20_000);
    expect(a.elector.writeBlock()).toMatch(/not known valid/);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.elector.writeBlock()).toMatch(/not the leader/);
    await vi.advanceTimersByTimeAsync(1);
    // The work was aborted at once (alone, it campaigns again and wins its own expired lease).
    expect(a.ended).toBe(1);
    expect(a.lost).toEqual([expect.stringMatching(/lease not renewed for/)]);
    a.stop.abort();
    await a.running;
  });

  it("a clean stop waits for the work, releases the lease, and the standby takes over at its next retry", async () => {
    const a = candidate("a");
    await vi.advanceTimersByTimeAsync(10);
    const b = candidate("b");
    await vi.advanceTimersByTimeAsync(20_000);
    a.stop.abort();
    await a.running;
    expect(a.working).toBe(false);
    expect(a.elector.isLeader()).toBe(false);
    expect(store.lease?.spec?.holderIdentity).toBe("");
    const releasedAt = Date.now();
    while (!b.elector.isLeader() && Date.now() - releasedAt < 30_000) await vi.advanceTimersByTimeAsync(50);
    expect(Date.now() - releasedAt).toBeLessThanOrEqual(2_400 + 100);
    expect(b.working).toBe(true);
    b.stop.abort();
    await b.running;
  });

  it("two candidates racing for a free lease: exactly one wins", async () => {
    const racers = ["a", "b", "c"].map(candidate);
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(racers.filter((r) => r.elector.isLeader())).toHaveLength(1);
    }
    for (const r of racers) r.stop.abort();
    await Promise.all(racers.map((r) => r.running));
  });

  it("refuses timings where the renew deadline is not below the lease duration", () => {
    expect(
      () =>
        new LeaderElector({
          namespace: "n",
          name: "l",
          identity: "a",
          api: store,
          leaseDurationMs: 10_000,
          renewDeadlineMs: 10_000,
        }),
    ).toThrow(/leaseDurationMs must be greater than renewDeadlineMs/);
  });
});
