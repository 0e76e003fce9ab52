// How long to wait before trying again. ExponentialBackoff counts failures per key (client-go's
// 5 ms doubling up to 1000 s is the default); TokenBucket caps the overall retry rate across keys
// (client-go's default: 10 per second, burst 100); RetryLimiter combines both, taking the longer.
import { systemClock, type Clock } from "./clock.js";

/** base * 2^attempt, capped at max. attempt counts from 0. */
export function exponentialDelay(attempt: number, baseMs: number, maxMs: number): number {
  if (attempt >= 64) return maxMs;
  return Math.min(maxMs, baseMs * 2 ** attempt);
}

export class ExponentialBackoff {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  /** Records one more failure of `key` and returns how long to wait before its retry. */
  next(key: string): number {
    const attempt = this.failures.get(key) ?? 0;
    this.failures.set(key, attempt + 1);
    return exponentialDelay(attempt, this.baseMs, this.maxMs);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly perSecond = 10,
    readonly burst = 100,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes one token and returns how long its holder must wait for it (0 if one was available). */
  reserve(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.perSecond) * 1000;
  }
}

export interface RetryLimiterOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Global retries per second across all keys. */
  perSecond?: number;
  burst?: number;
  clock?: Clock;
}

export class RetryLimiter {
  private readonly backoff: ExponentialBackoff;
  private readonly bucket: TokenBucket;

  constructor(opts: RetryLimiterOptions = {}) {
    this.backoff = new ExponentialBackoff(opts.baseDelayMs ?? 5, opts.maxDelayMs ?? 1_000_000);
    this.bucket = new TokenBucket(opts.perSecond ?? 10, opts.burst ?? 100, opts.clock ?? systemClock);
  }

  /** Delay before `key`'s next retry: the longer of its own backoff and the global rate limit. */
  when(key: string): number {
    return Math.max(this.backoff.next(key), this.bucket.reserve());
  }

  retries(key: string): number {
    return this.backoff.retries(key);
  }

  forget(key: string): void {
    this.backoff.forget(key);
  }
}
