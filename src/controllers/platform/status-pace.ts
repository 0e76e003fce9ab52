// How often the reconciler writes a platform's progress. While a platform comes up, every pod that
// turns ready changes a count or a message in its status, and a pass follows each such event: a
// write per pod. A change of progress alone (ready counts, a component's phase, a condition's
// message) is therefore written at most once per PROGRESS_WRITE_INTERVAL_MS per platform, the last
// one after the interval by a requeue; anything else (the platform's phase, a condition's status
// or reason, observedGeneration, upgrade, Postgres or healing state) is written at once.
import { isDeepStrictEqual } from "node:util";
import type { OntoPlatformStatus } from "../../api/index.js";

export const PROGRESS_WRITE_INTERVAL_MS = 2000;

/** `status` without what changes as pods come up: what must be written at once when it changes. */
function withoutProgress(status: OntoPlatformStatus): unknown {
  const { ready: _ready, readyComponents: _count, componentStatuses, conditions, ...rest } = status;
  return {
    ...rest,
    conditions: conditions?.map(({ message: _message, ...condition }) => condition),
    components: Object.entries(componentStatuses ?? {})
      .map(([name, c]) => ({ name, desired: c.desired, version: c.version }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** Whether `next` differs from `previous`, and only in progress (as written: undefined is absent). */
export function progressOnly(previous: OntoPlatformStatus, next: OntoPlatformStatus): boolean {
  const [before, after] = [asWritten(previous), asWritten(next)];
  return (
    !isDeepStrictEqual(before, after) && isDeepStrictEqual(withoutProgress(before), withoutProgress(after))
  );
}

function asWritten(status: OntoPlatformStatus): OntoPlatformStatus {
  return JSON.parse(JSON.stringify(status)) as OntoPlatformStatus;
}

/** When each platform's status was last written by the reconciler, by uid. */
export class ProgressPace {
  private readonly lastWrite = new Map<string, number>();

  constructor(private readonly intervalMs = PROGRESS_WRITE_INTERVAL_MS) {}

  /**
   * How long the write of `next` over `previous` should wait (0: write now): a change of progress
   * alone waits out the interval since the last write.
   */
  waitMs(uid: string, previous: OntoPlatformStatus, next: OntoPlatformStatus, nowMs: number): number {
    const last = this.lastWrite.get(uid);
    if (last === undefined) return 0;
    const left = last + this.intervalMs - nowMs;
    if (left <= 0) {
      this.lastWrite.delete(uid);
      return 0;
    }
    return progressOnly(previous, next) ? left : 0;
  }

  wrote(uid: string, nowMs: number): void {
    this.lastWrite.set(uid, nowMs);
  }

  forget(uid: string): void {
    this.lastWrite.delete(uid);
  }
}
