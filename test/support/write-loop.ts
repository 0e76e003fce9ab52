// A client that writes in a loop while something disrupts what it writes to (an upgrade, a killed
// member), keeping the record of what was acknowledged so the check afterwards reads back exactly
// those writes. Each program's loop says what one write is and when it counts (writeOnce); the
// real-node loops are in test/real/write-loops.ts, the programs suite's Redis loop beside its test.
import { setTimeout as sleep } from "node:timers/promises";

/**
 * What a loop did: writes acknowledged and failed, and the longest time between two acknowledged
 * (with when it began, in ms since the epoch, to set beside what was killed when).
 */
export interface LoopFigures {
  acknowledged: number;
  failed: number;
  longestGapMs: number;
  longestGapFrom: number;
}

export abstract class WriteLoop {
  /** Key -> value of every acknowledged write. */
  readonly acked = new Map<string, string>();
  private stopped = false;
  private failedWrites = 0;
  private longestGap = 0;
  private longestGapFrom = 0;
  private lastAck = Date.now();
  private done: Promise<void> | undefined;

  protected abstract writeOnce(): Promise<boolean>;
  protected async close(): Promise<void> {}

  constructor(private readonly intervalMs: number) {}

  start(): this {
    this.done = (async () => {
      while (!this.stopped) {
        const ok = await this.writeOnce().catch(() => false);
        if (ok) {
          const now = Date.now();
          if (now - this.lastAck > this.longestGap) {
            this.longestGap = now - this.lastAck;
            this.longestGapFrom = this.lastAck;
          }
          this.lastAck = now;
        } else this.failedWrites++;
        await sleep(this.intervalMs);
      }
      await this.close();
    })();
    return this;
  }

  async stop(): Promise<LoopFigures> {
    this.stopped = true;
    await this.done;
    return {
      acknowledged: this.acked.size,
      failed: this.failedWrites,
      longestGapMs: this.longestGap,
      longestGapFrom: this.longestGapFrom,
    };
  }
}
