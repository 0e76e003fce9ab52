// The fleet limit (`onto operator --max-restarting-platforms N`): at most N platforms restart pods
// at once. A platform restarts pods while its workloads replace pods (replacingPods, read from the
// informer caches) or from the moment this table admitted its disruptive change until a reconcile
// sees those rolls finished. A platform that wants to restart pods asks for a slot; it gets one
// when fewer than N other platforms restart and no platform that has waited longer is still
// waiting for the free slots (oldest first); otherwise it waits, and the platforms waiting are
// woken, oldest first, when a slot frees.
//
// Why the admission is atomic: the operator reconciles with one leader (Lease election), and in
// that process every platform's admission goes through request(), which reads the count and takes
// the slot in one synchronous call: JavaScript runs it to the end before any other reconcile
// resumes, so two platforms deciding in the same instant are admitted one after the other and the
// second sees the first's slot. The table lives in memory only. On a leader change the new
// leader's table starts empty, but what it counts does not: the caches it starts with show the
// platforms whose workloads are still replacing pods (restartingInCaches), and a platform
// found rolling takes its slot again at its first reconcile. A change the old leader admitted and
// had not written yet was not applied, so it asks again; the waiting order survives in
// status.disruption.waiting[].since, which the platforms pass back as their `since`.

/** A platform waiting for the fleet limit looks again this often, even if no slot frees. */
export const FLEET_RECHECK_MS = 15_000;

/** Waiters not seen for this long (deleted, or no longer reconciled) are not waited for. */
const STALE_WAITER_MS = 60_000;

export interface FleetRequest {
  /** The platform has a change that would restart pods now (admission needed). */
  wants: boolean;
  /** Its workloads are replacing pods now (it holds a slot whatever the limit). */
  rolling: boolean;
  /** Since when it has wanted to restart (persisted in its status; sets its place in the queue). */
  since: Date;
}

export type FleetAnswer =
  | { admitted: true }
  | {
      admitted: false;
      limit: number;
      /** The other platforms restarting pods now ("namespace/name"). */
      restarting: string[];
      /** Platforms waiting longer than this one for the same slots. */
      ahead: number;
    };

/** Why a platform waits, for its Event and its Upgrading condition. */
export function fleetWaitText(answer: Extract<FleetAnswer, { admitted: false }>): string {
  const names = answer.restarting.length > 0 ? `: ${answer.restarting.join(", ")}` : "";
  return `${answer.restarting.length} other platform(s) restarting pods (at most ${answer.limit} at once${names}), ${answer.ahead} waiting longer`;
}

export interface FleetLimitDeps {
  /** At most this many platforms restart pods at once; 0: no limit. */
  limit: number;
  /** Platforms ("namespace/name") whose workloads the informer caches show replacing pods. */
  restartingInCaches: () => ReadonlySet<string>;
  /** Whether the platform still exists (its cache entry); slots of deleted platforms free. */
  exists: (key: string) => boolean;
  /** Look at a waiting platform again (enqueue its reconcile). */
  wake: (key: string) => void;
  now?: () => Date;
}

export class FleetLimit {
  private readonly holders = new Set<string>();
  private readonly waiters = new Map<string, { since: number; seen: number }>();
  private readonly now: () => Date;

  constructor(private readonly deps: FleetLimitDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  get limit(): number {
    return this.deps.limit;
  }

  /** One platform's reconcile: takes, keeps or frees its slot, or answers that it waits. Synchronous by design (see above). */
  request(key: string, req: FleetRequest): FleetAnswer {
    if (this.deps.limit <= 0) return { admitted: true };
    if (req.rolling) {
      this.holders.add(key);
      this.waiters.delete(key);
      return { admitted: true };
    }
    if (!req.wants) {
      this.waiters.delete(key);
      if (this.holders.delete(key)) this.wakeWaiters();
      return { admitted: true };
    }
    // Admitted before and not rolling yet in the caches: the change is being written.
    if (this.holders.has(key)) return { admitted: true };
    const now = this.now().getTime();
    const mine = this.waiters.get(key);
    const since = Math.min(mine?.since ?? Infinity, req.since.getTime());
    this.waiters.set(key, { since, seen: now });
    const restarting = this.restartingOthers(key);
    const ahead = this.waitingBefore(key, since, now);
    if (restarting.length + ahead < this.deps.limit) {
      this.holders.add(key);
      this.waiters.delete(key);
      return { admitted: true };
    }
    return { admitted: false, limit: this.deps.limit, restarting, ahead };
  }

  /** The platform is gone (or being deleted): its slot and its place in the queue free. */
  forget(key: string): void {
    this.waiters.delete(key);
    if (this.holders.delete(key)) this.wakeWaiters();
  }

  private restartingOthers(key: string): string[] {
    for (const holder of this.holders) if (!this.deps.exists(holder)) this.holders.delete(holder);
    const all = new Set([...this.holders, ...this.deps.restartingInCaches()]);
    all.delete(key);
    return [...all].sort();
  }

  /** Live waiters that have waited longer than `since` (ties: the smaller key first). */
  private waitingBefore(key: string, since: number, now: number): number {
    let n = 0;
    for (const [other, w] of this.waiters) {
      if (other === key) continue;
      if (now - w.seen > STALE_WAITER_MS || !this.deps.exists(other)) {
        this.waiters.delete(other);
        continue;
      }
      if (w.since < since || (w.since === since && other < key)) n++;
    }
    return n;
  }

  private wakeWaiters(): void {
    [...this.waiters.entries()]
      .sort(([a, x], [b, y]) => x.since - y.since || (a < b ? -1 : 1))
      .forEach(([key]) => this.deps.wake(key));
  }
}
