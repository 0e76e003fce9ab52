// Kubernetes Events (events.k8s.io/v1) about the objects the operator manages, written so that a
// hot loop cannot flood the API server: the same event (same object, type, reason, action and note)
// seen again within the series window is not created again; its series count grows in memory and
// is written at most once per flush interval. So a key costs at most one create per window and one
// patch per interval, however often it fires. Written by hand: the events.k8s.io/v1 series logic of
// client-go has no TypeScript counterpart.
import type { KubeClient, KubeObject } from "../kube/index.js";
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
}

interface Tracked {
  namespace: string;
  name: string;
  count: number;
  writtenCount: number;
  lastObserved: number;
  created: Promise<boolean>;
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

  constructor(private readonly opts: EventRecorderOptions) {
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.logger ?? silentLogger).child({ component: "events" });
    this.windowMs = opts.seriesWindowMs ?? 6 * 60_000;
    this.flushMs = opts.flushIntervalMs ?? 30_000;
    this.maxTracked = opts.maxTracked ?? 4096;
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
    const created = this.track(
      this.opts.sink.create(event).then(
        () => true,
        (err: unknown) => {
          this.log.warn(
            { ...errorFields(err), reason, regarding: `${ref.kind}/${ref.name}` },
            "event not recorded",
          );
          return false;
        },
      ),
    );
    this.tracked.delete(key);
    this.tracked.set(key, { namespace, name, count: 1, writtenCount: 1, lastObserved: now, created });
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
      if (t.count === t.writtenCount) continue;
      const count = t.count;
      t.writtenCount = count;
      const series = { count, lastObservedTime: microTime(t.lastObserved) };
      void this.track(
        t.created.then(async (ok) => {
          if (!ok) return;
          await this.opts.sink.updateSeries(t.namespace, t.name, series).catch((err: unknown) => {
            this.log.warn({ ...errorFields(err), event: t.name }, "event series not updated");
          });
        }),
      );
    }
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }

  /** Stops the flush timer after writing what is pending. */
  async stop(): Promise<void> {
    await this.flush();
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
