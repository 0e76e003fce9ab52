// The work queue between events and reconciles, with client-go's guarantees: a key waits in the
// queue at most once however often it is added; a key handed to a worker is not handed to another
// until done(); a key added while it is being processed is queued again when done() is called.
// Delayed adds (requeueAfter, retry backoff) keep the earliest due time per key.
// Written by hand: no npm package offers these per-key semantics.
import { RetryLimiter } from "./backoff.js";
import { systemClock, type Clock, type Timer } from "./clock.js";

/** What the queue reports; runtime/metrics.ts implements it with workqueue_* metrics. */
export interface WorkQueueObserver {
  added(): void;
  depth(n: number): void;
  /** Seconds a key waited in the queue before a worker took it. */
  queued(seconds: number): void;
  /** Seconds a worker held a key. */
  worked(seconds: number): void;
  retried(): void;
}

export interface WorkQueueOptions {
  clock?: Clock;
  limiter?: RetryLimiter;
  observer?: WorkQueueObserver;
}

export class WorkQueue {
  private readonly clock: Clock;
  private readonly limiter: RetryLimiter;
  private readonly observer: WorkQueueObserver | undefined;
  /** Keys ready to be handed out, in order from `head` (Array.shift is O(n) on long arrays); each also in `dirty`. */
  private ready: string[] = [];
  private head = 0;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>();
  private readonly addedAt = new Map<string, number>();
  private readonly delayed = new Map<string, { due: number; timer: Timer }>();
  private readonly takers: ((key: string | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.limiter = opts.limiter ?? new RetryLimiter({ clock: this.clock });
    this.observer = opts.observer;
  }

  /** Queues `key` now (no-op if already queued, or after shutdown). */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer?.added();
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Queues `key` after `ms`; if it is already waiting to be added earlier, that stays. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const due = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.due <= due) return;
    existing?.timer.cancel();
    const timer = this.clock.setTimer(ms, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { due, timer });
  }

  /** Queues `key` after its backoff: after a failure. */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.observer?.retried();
    this.addAfter(key, this.limiter.when(key));
  }

  /**
   * Queues `key` again after a failure caused by the API server being unreachable or failing:
   * after a fixed `delayMs`, without counting a failure of the key. Such a failure says nothing
   * about the key, and a backoff grown during an outage would keep the key waiting long after the
   * server is back (the per-key backoff doubles up to 1000 s).
   */
  addAfterUnavailable(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    this.observer?.retried();
    this.addAfter(key, delayMs);
  }

  /** Clears `key`'s failure count: after a success. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  retries(key: string): number {
    return this.limiter.retries(key);
  }

  /** Waits for the next key; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.takers.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.observer?.worked((this.clock.now() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.enqueue(key);
    if (this.processing.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Keys waiting to be handed out. */
  get length(): number {
    return this.ready.length - this.head;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Stops intake: later adds are ignored, waiting and delayed keys are dropped (reconcile is
   * level-triggered: whoever runs next lists everything again), idle workers get undefined.
   * Keys being processed finish; `drained()` tells when.
   */
  shutdown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) timer.cancel();
    this.delayed.clear();
    this.ready = [];
    this.head = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.observer?.depth(0);
    for (const take of this.takers.splice(0)) take(undefined);
    if (this.processing.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves when no key is being processed. */
  drained(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(key: string): void {
    this.addedAt.set(key, this.clock.now());
    const take = this.takers.shift();
    if (take) {
      this.ready.push(key);
      take(this.take());
      return;
    }
    this.ready.push(key);
    this.observer?.depth(this.length);
  }

  private take(): string | undefined {
    if (this.head >= this.ready.length) return undefined;
    const key = this.ready[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(key);
    const now = this.clock.now();
    this.processing.set(key, now);
    this.observer?.queued((now - (this.addedAt.get(key) ?? now)) / 1000);
    this.addedAt.delete(key);
    this.observer?.depth(this.length);
    return key;
  }
}
