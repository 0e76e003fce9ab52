// Time as the runtime sees it. Everything that waits or timestamps (queue delays, backoff, token
// bucket, leader election, event de-duplication) takes a Clock, so tests can drive time. The
// system clock looks the globals up at call time, which lets vitest's fake timers replace them.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` after `ms` milliseconds unless cancelled. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after `ms`, or early (without error) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const handle = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
      function done(): void {
        clearTimeout(handle);
        signal?.removeEventListener("abort", done);
        resolve();
      }
    });
  },
};

/** `ms` spread by up to ±`fraction`, so many waiters do not all wake at the same instant. */
export function jittered(ms: number, fraction = 0.2): number {
  return ms * (1 - fraction + Math.random() * 2 * fraction);
}
