// A controller: watch events on its primary kind, on the kinds it owns (mapped to their owner
// through ownerReferences) and on any other watched kind (mapped by a function) become keys in a
// work queue; a bounded number of workers call the reconciler for each key. Errors retry with
// per-key backoff; `requeueAfterMs` schedules the next look; a periodic resync enqueues every
// primary object. One JSON log line and the controller_runtime_* metrics per reconcile.
//
// The reconcile contract: every reconcile gets a Request with an id (in the controller's log line,
// and for the reconciler to put on its audit lines), a logger carrying that id, and a signal that
// aborts when the reconcile must give up (the shutdown bound expired); pass it to the API client
// with client.withSignal(request.signal).
import { isServerUnavailable, type KubeObject } from "../kube/index.js";
import type { RetryLimiterOptions } from "./backoff.js";
import { RetryLimiter } from "./backoff.js";
import { jittered, systemClock, type Clock, type Timer } from "./clock.js";
import type { EventHandler, Informer, InformerSource } from "./informer.js";
import type { InformerFactory } from "./informer-factory.js";
import { errorFields, silentLogger, type Logger } from "./logging.js";
import type { RuntimeMetrics } from "./metrics.js";
import type { ChangeEvent, Predicate } from "./predicates.js";
import { WorkQueue } from "./queue.js";
import { objectKey, splitKey } from "./store.js";

/** What to reconcile: the primary object's key ("namespace/name" or "name"), and how. */
export interface Request {
  key: string;
  namespace?: string;
  name: string;
  /** Names this reconcile: `<prefix><name>-<count>-<time>`, base 36; unique within the process. */
  id: string;
  /** The controller's logger with the key and `reconcileId`. */
  log: Logger;
  /** Aborts when the reconcile must stop waiting (cancellation); pass it to every request it sends. */
  signal: AbortSignal;
}

export interface Result {
  /** Look at this key again after this long, even if nothing changes. */
  requeueAfterMs?: number;
}

export interface Reconciler {
  /** Brings the world in line with the object named by `req`; throw to retry with backoff. */
  reconcile(req: Request): Promise<Result | void>;
}

export interface WatchSpec {
  source: InformerSource;
  /** Keys of primary objects an event on `obj` concerns. */
  map: (obj: KubeObject) => string[];
  predicates?: Predicate[];
}

export interface ControllerOptions {
  /** Names the controller in logs, metrics and the queue. */
  name: string;
  /** The primary kind. */
  for: InformerSource;
  /** Kinds whose objects carry an ownerReference to a primary object. */
  owns?: InformerSource[];
  /** Other kinds, mapped to primary keys by a function. */
  watches?: WatchSpec[];
  reconciler: Reconciler | Reconciler["reconcile"];
  /** Filters on primary-kind events (all must pass), e.g. generationChanged. */
  predicates?: Predicate[];
  /** Filters on owned-kind events. */
  ownedPredicates?: Predicate[];
  maxConcurrentReconciles?: number;
  /** Starts every reconcile id (to tell the controllers' ids apart in one audit log). */
  reconcileIdPrefix?: string;
  /** Every primary object is reconciled at least this often (jittered); 0 turns it off. */
  resyncPeriodMs?: number;
  retry?: RetryLimiterOptions;
  /**
   * After a failure caused by an unreachable or failing API server (see isServerUnavailable), the
   * key is retried after this fixed delay (default 1 s), and its backoff does not grow.
   */
  unavailableRetryMs?: number;
}

export interface ControllerDeps {
  informers: InformerFactory;
  metrics?: RuntimeMetrics;
  logger?: Logger;
  clock?: Clock;
}

export class Controller {
  readonly name: string;
  readonly primary: Informer<KubeObject>;
  private readonly reconcileFn: Reconciler["reconcile"];
  private readonly sources: { informer: Informer<KubeObject>; handler: EventHandler<KubeObject> }[] = [];
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: RuntimeMetrics | undefined;
  private readonly concurrency: number;
  private queue: WorkQueue | undefined;
  private reconciles = 0;
  /** Cancels the reconciles in flight of the current run (see run). */
  private cancel: AbortSignal = new AbortController().signal;

  constructor(
    private readonly opts: ControllerOptions,
    deps: ControllerDeps,
  ) {
    this.name = opts.name;
    this.clock = deps.clock ?? systemClock;
    this.log = (deps.logger ?? silentLogger).child({ controller: opts.name });
    this.metrics = deps.metrics;
    this.concurrency = Math.max(1, opts.maxConcurrentReconciles ?? 1);
    const r = opts.reconciler;
    this.reconcileFn = typeof r === "function" ? r : (req) => r.reconcile(req);

    this.primary = deps.informers.informer(opts.for);
    this.sources.push({
      informer: this.primary,
      handler: this.handler(opts.predicates ?? [], (obj) => [objectKey(obj)]),
    });
    const owner = { group: groupOf(opts.for.apiVersion), kind: opts.for.kind };
    for (const source of opts.owns ?? []) {
      this.sources.push({
        informer: deps.informers.informer(source),
        handler: this.handler(opts.ownedPredicates ?? [], (obj) => ownerKeys(obj, owner)),
      });
    }
    for (const watch of opts.watches ?? []) {
      this.sources.push({
        informer: deps.informers.informer(watch.source),
        handler: this.handler(watch.predicates ?? [], watch.map),
      });
    }
  }

  /** Keys waiting in the queue (0 when not running). */
  get queueLength(): number {
    return this.queue?.length ?? 0;
  }

  /** Queues a key by hand (e.g. from another controller); ignored when not running. */
  enqueue(key: string, afterMs = 0): void {
    this.queue?.addAfter(key, afterMs);
  }

  /**
   * Runs until `signal` aborts: waits for its informers to sync, then reconciles. On abort it stops
   * intake at once and returns when the reconciles in flight have finished. `cancel` is the signal
   * every reconcile's Request carries: aborting it tells the reconciles in flight to give up.
   */
  async run(signal: AbortSignal, cancel?: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    if (cancel) this.cancel = cancel;
    const queue = new WorkQueue({
      clock: this.clock,
      limiter: new RetryLimiter({ clock: this.clock, ...this.opts.retry }),
      observer: this.metrics?.queueObserver(this.name),
    });
    this.queue = queue;
    this.metrics?.maxConcurrentReconciles.set({ controller: this.name }, this.concurrency);
    this.metrics?.activeWorkers.set({ controller: this.name }, 0);
    const unsubscribe = this.sources.map(({ informer, handler }) => informer.on(handler));
    const stopQueue = (): void => queue.shutdown();
    signal.addEventListener("abort", stopQueue, { once: true });
    let resync: Timer | undefined;
    try {
      // The wait's own abort listener goes once the caches sync: every controller shares the
      // leader's signal, and one listener left per controller passed Node's warning limit of 10.
      let stopWaiting = (): void => undefined;
      await Promise.race([
        Promise.all(this.sources.map((s) => s.informer.waitForSync())),
        new Promise<void>((resolve) => {
          stopWaiting = () => {
            signal.removeEventListener("abort", stopWaiting);
            resolve();
          };
          signal.addEventListener("abort", stopWaiting, { once: true });
        }),
      ]);
      stopWaiting();
      if (signal.aborted) return;
      const period = this.opts.resyncPeriodMs ?? 10 * 60 * 60_000;
      const scheduleResync = (): void => {
        if (!period || signal.aborted) return;
        resync = this.clock.setTimer(jittered(period, 0.1), () => {
          for (const key of this.primary.store.keys()) queue.add(key);
          scheduleResync();
        });
      };
      scheduleResync();
      this.log.info({ workers: this.concurrency }, "controller started");
      await Promise.all(Array.from({ length: this.concurrency }, () => this.worker(queue)));
      await queue.drained();
    } finally {
      resync?.cancel();
      for (const off of unsubscribe) off();
      signal.removeEventListener("abort", stopQueue);
      queue.shutdown();
      if (this.queue === queue) this.queue = undefined;
      this.log.info("controller stopped");
    }
  }

  private async worker(queue: WorkQueue): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      await this.process(queue, key);
    }
  }

  /** The Request of one reconcile of `key`. */
  request(key: string): Request {
    const parts = splitKey(key);
    const id = `${this.opts.reconcileIdPrefix ?? ""}${parts.name}-${(this.reconciles++).toString(36)}-${Date.now().toString(36)}`;
    return { key, ...parts, id, log: this.log.child({ key, reconcileId: id }), signal: this.cancel };
  }

  /** Reconciles `key` once, now, outside the queue (no retry, no requeue): what a worker would do. */
  async reconcileNow(key: string): Promise<Result | void> {
    return this.reconcileFn(this.request(key));
  }

  private async process(queue: WorkQueue, key: string): Promise<void> {
    const labels = { controller: this.name };
    this.metrics?.activeWorkers.inc(labels);
    const started = this.clock.now();
    let result: "success" | "error" | "requeue_after" = "success";
    let error: unknown;
    let requeueAfterMs: number | undefined;
    const request = this.request(key);
    try {
      const out = await this.reconcileFn(request);
      requeueAfterMs = out?.requeueAfterMs;
      queue.forget(key);
      if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
        result = "requeue_after";
        queue.addAfter(key, requeueAfterMs);
      }
    } catch (err) {
      result = "error";
      error = err;
      if (isServerUnavailable(err)) queue.addAfterUnavailable(key, this.opts.unavailableRetryMs ?? 1_000);
      else queue.addRateLimited(key);
    } finally {
      queue.done(key);
      const durationMs = this.clock.now() - started;
      this.metrics?.activeWorkers.dec(labels);
      this.metrics?.reconcileTime.observe(labels, durationMs / 1000);
      this.metrics?.reconcileTotal.inc({ ...labels, result });
      if (result === "error") {
        this.metrics?.reconcileErrors.inc(labels);
        request.log.error(
          { result, durationMs, retries: queue.retries(key), ...errorFields(error) },
          "reconcile",
        );
      } else {
        request.log.info({ result, durationMs, ...(requeueAfterMs ? { requeueAfterMs } : {}) }, "reconcile");
      }
    }
  }

  private handler(predicates: Predicate[], map: (obj: KubeObject) => string[]): EventHandler<KubeObject> {
    const pass = (e: ChangeEvent): boolean => predicates.every((p) => p(e));
    const enqueue = (obj: KubeObject): void => {
      for (const key of map(obj)) this.queue?.add(key);
    };
    return {
      add: (obj) => {
        if (pass({ type: "add", obj })) enqueue(obj);
      },
      update: (old, obj) => {
        if (!pass({ type: "update", old, obj })) return;
        enqueue(old);
        enqueue(obj);
      },
      delete: (obj) => {
        if (pass({ type: "delete", obj })) enqueue(obj);
      },
    };
  }
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** Keys of the owners of `obj` that are of the primary kind (any version of its group). */
export function ownerKeys(obj: KubeObject, owner: { group: string; kind: string }): string[] {
  const ns = obj.metadata?.namespace;
  return (obj.metadata?.ownerReferences ?? [])
    .filter((ref) => ref.kind === owner.kind && groupOf(ref.apiVersion) === owner.group)
    .map((ref) => (ns ? `${ns}/${ref.name}` : ref.name));
}
