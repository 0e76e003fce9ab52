// Kubernetes Events (events.k8s.io/v1) about the objects the operator manages, written so that a
// hot loop cannot flood the API server: the same event (same object, type, reason, action and note)
// seen again within the series window is not created again; its series count grows in memory and
// is written at most once per flush interval. So a key costs at most one create per window and one
// patch per interval, however often it fires. Written by hand: the events.k8s.io/v1 series logic of
// client-go has no TypeScript counterpart.
//
// An Event the API server could not take because it was unreachable or failing (no answer, 5xx,
// 429) is kept and sent again with a backoff (retryBaseMs doubling to retryMaxMs), so an outage
// does not erase what happened during it. Bounded: at most maxPending wait (the oldest dropped
// first), none older than the series window, and every drop is logged with its count. Events the
// server refused on their merits (4xx) or that may not be written (not the leader) are not retried.
import { AlreadyExistsError, isServerUnavailable, type KubeClient, type KubeObject } from "../kube/index.js";
import { systemClock, type Clock, type Timer } from "./clock.js";
import { errorFields, silentLogger, type Logger } from "./logging.js";

export type EventType = "Normal" | "Warning";

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

export interface EventObject {
  apiVersion: "events.k8s.io/v1";
  kind: "Event";
  metadata: { name: string; namespace: string };
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: EventType;
  note: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  series?: EventSeries;
}

export interface EventSeries {
  count: number;
  lastObservedTime: string;
}

/** Where events go; kubeEventSink writes them to the API server. */
export interface EventSink {
  create(event: EventObject): Promise<void>;
  updateSeries(namespace: string, name: string, series: EventSeries): Promise<void>;
}

export function kubeEventSink(client: KubeClient): EventSink {
  return {
    async create(event) {
      await client.create(event);
    },
    async updateSeries(namespace, name, series) {
      await client.mergePatch({ apiVersion: "events.k8s.io/v1", kind: "Event", namespace, name }, { series });
    },
  };
}

export interface EventRecorderOptions {
  /** reportingController, e.g. "onto.paas/onto-operator". */
  controller: string;
  /** reportingInstance: this process, e.g. the pod name. */
  instance: string;
  sink: EventSink;
  clock?: Clock;
  logger?: Logger;
  /** A repeat within this time joins the series instead of creating an event (client-go: 6 min). */
  seriesWindowMs?: number;
  /** Series counts are written at most this often per event (client-go: 30 s). */
  flushIntervalMs?: number;
  /** Distinct events remembered; the oldest are forgotten beyond this. */
  maxTracked?: number;
  /** Events kept for a retry while the API server is unreachable (default 256). */
  maxPending?: number;
  /** First retry after this long, doubling up to retryMaxMs (defaults 1 s and 30 s). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

interface Pending {
  event: EventObject;
  firstTried: number;
  settle: (created: boolean) => void;
}

/** A failure that says nothing about the Event itself: the server was unreachable or failing. */
const retryable = isServerUnavailable;

interface Tracked {
  namespace: string;
  name: string;
  count: number;
  writtenCount: number;
  lastObserved: number;
  /** Whether the Event was created: undefined while its create is still waiting for a retry. */
  created: boolean | undefined;
}

const MAX_NOTE = 1024;

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

export class EventRecorder {
  private readonly tracked = new Map<string, Tracked>();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly windowMs: number;
  private readonly flushMs: number;
  private readonly maxTracked: number;
  private flushTimer: Timer | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private sequence = 0;
  private readonly pending: Pending[] = [];
  private retryTimer: Timer | undefined;
  private retryDelayMs: number;
  private retrying = false;
  private stopped = false;
  /** Events given up on (queue full, too old, or still failing at stop). */
  dropped = 0;

  constructor(private readonly opts: EventRecorderOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.logger ?? silentLogger).child({ component: "events" });
    this.windowMs = opts.seriesWindowMs ?? 6 * 60_000;
    this.flushMs = opts.flushIntervalMs ?? 30_000;
    this.maxTracked = opts.maxTracked ?? 4096;
    this.retryDelayMs = opts.retryBaseMs ?? 1_000;
  }

  /** Events waiting for a retry. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Records an event about `regarding`; never throws, never waits (failures are logged). */
  event(
    regarding: KubeObject,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject,
  ): void {
    const ref = referenceTo(regarding);
    const trimmedNote = note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note;
    const key = [ref.uid ?? "", ref.kind, ref.namespace, ref.name, type, reason, action, trimmedNote].join(
      "\u0000",
    );
    const now = this.clock.now();
    const known = this.tracked.get(key);
    if (known && now - known.lastObserved < this.windowMs) {
      known.count++;
      known.lastObserved = now;
      this.scheduleFlush();
      return;
    }
    const namespace = ref.namespace || "default";
    const name = `${(ref.name ?? "object").slice(0, 200)}.${now.toString(16)}${(this.sequence++ % 4096).toString(16).padStart(3, "0")}`;
    const event: EventObject = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.opts.controller,
      reportingInstance: this.opts.instance,
      action,
      reason,
      type,
      note: trimmedNote,
      regarding: ref,
      ...(related ? { related: referenceTo(related) } : {}),
    };
    const tracked: Tracked = {
      namespace,
      name,
      count: 1,
      writtenCount: 1,
      lastObserved: now,
      created: undefined,
    };
    this.send({
      event,
      firstTried: now,
      settle: (ok) => {
        tracked.created = ok;
        // Repeats seen while the create waited are written now.
        if (ok && tracked.count !== tracked.writtenCount) this.scheduleFlush();
      },
    });
    this.tracked.delete(key);
    this.tracked.set(key, tracked);
    if (this.tracked.size > this.maxTracked) this.tracked.delete(this.tracked.keys().next().value!);
  }

  normal(regarding: KubeObject, reason: string, action: string, note: string): void {
    this.event(regarding, "Normal", reason, action, note);
  }

  warning(regarding: KubeObject, reason: string, action: string, note: string): void {
    this.event(regarding, "Warning", reason, action, note);
  }

  /** Writes pending series counts now and waits for every write in flight. */
  async flush(): Promise<void> {
    this.flushTimer?.cancel();
    this.flushTimer = undefined;
    for (const t of this.tracked.values()) {
      // A series is written once its Event exists; one still waiting to be created keeps its count.
      if (t.count === t.writtenCount || t.created !== true) continue;
      const count = t.count;
      t.writtenCount = count;
      const series = { count, lastObservedTime: microTime(t.lastObserved) };
      void this.track(
        this.opts.sink.updateSeries(t.namespace, t.name, series).catch((err: unknown) => {
          this.log.warn({ ...errorFields(err), event: t.name }, "event series not updated");
        }),
      );
    }
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /**
   * Writes what is pending (one more try for Events waiting on a retry), then stops: Events still
   * failing are dropped, and counted.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.retryTimer?.cancel();
    this.retryTimer = undefined;
    if (this.pending.length) await this.retryPending();
    this.drop(this.pending.splice(0), "the recorder stopped");
    await this.flush();
  }

  /** First attempt at creating an Event; a retryable failure queues it. */
  private send(p: Pending): void {
    void this.track(
      this.opts.sink.create(p.event).then(
        () => p.settle(true),
        (err: unknown) => {
          if (retryable(err) && !this.stopped) this.queue(p, err);
          else this.fail(p, err);
        },
      ),
    );
  }

  private fail(p: Pending, err: unknown): void {
    this.log.warn(
      {
        ...errorFields(err),
        reason: p.event.reason,
        regarding: `${p.event.regarding.kind}/${p.event.regarding.name}`,
      },
      "event not recorded",
    );
    p.settle(false);
  }

  private queue(p: Pending, err: unknown): void {
    if (this.pending.length === 0)
      this.log.warn({ ...errorFields(err), reason: p.event.reason }, "event not recorded yet; retrying");
    this.pending.push(p);
    if (this.pending.length > (this.opts.maxPending ?? 256))
      this.drop(this.pending.splice(0, 1), "too many events waiting");
    this.scheduleRetry();
  }

  private drop(items: Pending[], why: string): void {
    if (items.length === 0) return;
    this.dropped += items.length;
    for (const p of items) p.settle(false);
    this.log.warn({ events: items.length, droppedTotal: this.dropped, why }, "events dropped");
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.retrying || this.stopped) return;
    this.retryTimer = this.clock.setTimer(this.retryDelayMs, () => {
      this.retryTimer = undefined;
      void this.retryPending();
    });
  }

  /** One pass over the waiting Events, oldest first; stops at the first that still cannot be sent. */
  private async retryPending(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    try {
      const now = this.clock.now();
      const stale = this.pending.filter((p) => now - p.firstTried >= this.windowMs);
      if (stale.length) {
        for (const p of stale) this.pending.splice(this.pending.indexOf(p), 1);
        this.drop(stale, "older than the series window");
      }
      while (this.pending.length) {
        const p = this.pending[0]!;
        try {
          await this.opts.sink.create(p.event);
        } catch (err) {
          // A lost answer to an earlier try: the Event is there.
          if (!(err instanceof AlreadyExistsError)) {
            if (retryable(err)) break;
            this.pending.shift();
            this.fail(p, err);
            continue;
          }
        }
        this.pending.shift();
        p.settle(true);
      }
    } finally {
      this.retrying = false;
    }
    const base = this.opts.retryBaseMs ?? 1_000;
    this.retryDelayMs = this.pending.length
      ? Math.min(this.retryDelayMs * 2, this.opts.retryMaxMs ?? 30_000)
      : base;
    if (this.pending.length) this.scheduleRetry();
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = this.clock.setTimer(this.flushMs, () => {
      this.flushTimer = undefined;
      void this.flush();
    });
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
    return p;
  }
}

function referenceTo(obj: KubeObject): ObjectReference {
  const meta = obj.metadata ?? {};
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    ...(meta.namespace ? { namespace: meta.namespace } : {}),
    name: meta.name,
    ...(meta.uid ? { uid: meta.uid } : {}),
  };
}
