// One kind, kept in memory and up to date: list (paginated), then watch from the list's
// resourceVersion with bookmarks. A watch that ends cleanly is resumed from the last version seen;
// 410 Gone (the version was compacted away) triggers a fresh list, diffed against the cache so
// handlers still see every add, update and delete; any other failure, or a connection that stays
// silent too long, restarts the watch after a backoff. Unlike client-node's informer it never
// gives up. Handlers registered late get the cached objects replayed as adds.
//
// The backoff starts over as soon as the server answers again (a list succeeds or a watch opens),
// and while the server cannot be reached at all (connection refused or reset) it stays short
// (backoffUnreachableMaxMs): waiting longer spares nothing (a refused connection costs nothing)
// and would leave the cache blind for that long after the server is back. An answering but
// failing server (5xx, 429) is backed off exponentially up to backoffMaxMs.
import { ConnectionError, GoneError, type KubeClient, type KubeObject } from "../kube/index.js";
import { exponentialDelay } from "./backoff.js";
import { jittered, systemClock, type Clock } from "./clock.js";
import { errorFields, silentLogger, type Logger } from "./logging.js";
import { Store, objectKey, stripForCache, type Indexer } from "./store.js";

export interface InformerSource {
  apiVersion: string;
  kind: string;
  /** Only this namespace; all namespaces when absent. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerOptions<T extends KubeObject> extends InformerSource {
  /** Applied after stripForCache to every object before it is cached. */
  transform?: (obj: T) => T;
  indexers?: Record<string, Indexer<T>>;
  pageSize?: number;
  /** No event and no bookmark for this long: the connection is taken as dead and restarted. */
  silenceTimeoutMs?: number;
  /**
   * Server-side watch timeout; a random value in [min, 2*min) spreads reconnects. Default 1800, the
   * API server's own for a watch that names none (--min-request-timeout): each reconnect is a
   * request, and with an informer per kind, 5-10 minute watches alone cost an idle operator a few
   * requests a minute. Bookmarks keep the resume point fresh, and silenceTimeoutMs still restarts a
   * connection that went quiet, so a longer watch misses nothing.
   */
  watchTimeoutSeconds?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Longest wait while the server cannot be reached at all (default 1 s). */
  backoffUnreachableMaxMs?: number;
  clock?: Clock;
  logger?: Logger;
}

export interface EventHandler<T> {
  add?(obj: T): void;
  update?(old: T, obj: T): void;
  delete?(obj: T): void;
}

/** Counters a test or a metrics endpoint can read. */
export interface InformerStats {
  lists: number;
  watches: number;
  relistsAfterGone: number;
  restartsAfterError: number;
  events: number;
  bookmarks: number;
}

const DEFAULT_WATCH_TIMEOUT_SECONDS = 1800;

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  readonly stats: InformerStats = {
    lists: 0,
    watches: 0,
    relistsAfterGone: 0,
    restartsAfterError: 0,
    events: 0,
    bookmarks: 0,
  };
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly syncWaiters: (() => void)[] = [];
  private readonly clock: Clock;
  private readonly log: Logger;
  private resourceVersion = "";
  private synced = false;
  private running: Promise<void> | undefined;
  private stopper = new AbortController();
  private currentWatch: AbortController | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: InformerOptions<T>,
  ) {
    this.store = new Store<T>(opts.indexers);
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.logger ?? silentLogger).child({ informer: `${opts.apiVersion}/${opts.kind}` });
  }

  get source(): InformerSource {
    const { apiVersion, kind, namespace, labelSelector, fieldSelector } = this.opts;
    return { apiVersion, kind, namespace, labelSelector, fieldSelector };
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  on(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.synced) for (const obj of this.store.list()) this.call("add", () => handler.add?.(obj));
    return () => this.handlers.delete(handler);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the cache (or at once if it already is). */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  start(): void {
    if (this.running) return;
    this.stopper = new AbortController();
    this.running = this.run().catch((err: unknown) =>
      this.log.error(errorFields(err), "informer loop ended"),
    );
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    this.currentWatch?.abort();
    await this.running;
    this.running = undefined;
  }

  private async run(): Promise<void> {
    let needList = true;
    // Failures since the server last answered; reset by a successful list or an opened watch.
    let failures = 0;
    const answered = (): void => {
      failures = 0;
    };
    while (!this.stopper.signal.aborted) {
      try {
        if (needList) {
          await this.relist();
          answered();
          needList = false;
        }
        const started = this.clock.now();
        const sawEvents = await this.watchOnce(answered);
        // A watch that closes at once with nothing in it is a failure, or we would spin.
        const quick = this.clock.now() - started < 1_000;
        if (!sawEvents && quick && !this.stopper.signal.aborted)
          await this.clock.sleep(this.delay(failures++, false), this.stopper.signal);
      } catch (err) {
        if (this.stopper.signal.aborted) break;
        if (err instanceof GoneError) {
          this.stats.relistsAfterGone++;
          this.log.info({ resourceVersion: this.resourceVersion }, "resource version expired; listing again");
          needList = true;
          continue;
        }
        this.stats.restartsAfterError++;
        const delay = this.delay(failures++, err instanceof ConnectionError);
        this.log.warn({ ...errorFields(err), retryInMs: Math.round(delay) }, "watch failed; restarting");
        await this.clock.sleep(delay, this.stopper.signal);
      }
    }
  }

  /** The wait before the next attempt; short while the server cannot be reached at all. */
  private delay(failures: number, unreachable: boolean): number {
    const max = unreachable
      ? Math.min(this.opts.backoffUnreachableMaxMs ?? 1_000, this.opts.backoffMaxMs ?? 30_000)
      : (this.opts.backoffMaxMs ?? 30_000);
    return jittered(exponentialDelay(failures, this.opts.backoffBaseMs ?? 200, max));
  }

  private async relist(): Promise<void> {
    const { apiVersion, kind, namespace, labelSelector, fieldSelector, pageSize } = this.opts;
    const listed = await this.client.list<T>(apiVersion, kind, {
      namespace,
      labelSelector,
      fieldSelector,
      pageSize,
    });
    this.stats.lists++;
    this.log.debug({ resourceVersion: listed.resourceVersion, objects: listed.items.length }, "listed");
    const changes = this.store.replace(listed.items.map((o) => this.prepare(o)));
    this.resourceVersion = listed.resourceVersion;
    for (const obj of changes.added) this.emit("add", (h) => h.add?.(obj));
    for (const [old, obj] of changes.updated) this.emit("update", (h) => h.update?.(old, obj));
    for (const obj of changes.deleted) this.emit("delete", (h) => h.delete?.(obj));
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ objects: this.store.size }, "cache synced");
      for (const wake of this.syncWaiters.splice(0)) wake();
    }
  }

  /** Watches until the server ends the watch; says whether anything arrived. */
  private async watchOnce(onOpen: () => void): Promise<boolean> {
    const { apiVersion, kind, namespace, labelSelector, fieldSelector } = this.opts;
    const abort = new AbortController();
    this.currentWatch = abort;
    const silenceMs = this.opts.silenceTimeoutMs ?? 150_000;
    let silent = false;
    let timer = this.clock.setTimer(silenceMs, onSilence);
    function onSilence(): void {
      silent = true;
      abort.abort();
    }
    const minTimeout = this.opts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    let sawEvents = false;
    this.stats.watches++;
    try {
      const events = this.client.watch<T>(apiVersion, kind, {
        namespace,
        labelSelector,
        fieldSelector,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(minTimeout + Math.random() * minTimeout),
        signal: AbortSignal.any([abort.signal, this.stopper.signal]),
        onOpen: () => {
          this.log.debug({ resourceVersion: this.resourceVersion }, "watch opened");
          onOpen();
        },
      });
      for await (const event of events) {
        sawEvents = true;
        timer.cancel();
        timer = this.clock.setTimer(silenceMs, onSilence);
        const rv = event.object.metadata?.resourceVersion;
        if (event.type === "BOOKMARK") {
          this.stats.bookmarks++;
          if (rv) this.resourceVersion = rv;
          continue;
        }
        this.stats.events++;
        this.log.debug({ type: event.type, resourceVersion: rv }, "watch event");
        this.apply(event.type, this.prepare(event.object));
        if (rv) this.resourceVersion = rv;
      }
      this.log.debug({ resourceVersion: this.resourceVersion, sawEvents }, "watch ended");
      return sawEvents;
    } catch (err) {
      if (silent) throw new Error(`watch silent for ${silenceMs} ms`);
      throw err;
    } finally {
      timer.cancel();
      this.currentWatch = undefined;
    }
  }

  private apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T): void {
    if (type === "DELETED") {
      this.store.remove(objectKey(obj));
      this.emit("delete", (h) => h.delete?.(obj));
      return;
    }
    const old = this.store.upsert(obj);
    if (!old) this.emit("add", (h) => h.add?.(obj));
    // A resumed watch may repeat an object we already hold at the same version: no change.
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
      this.emit("update", (h) => h.update?.(old, obj));
  }

  private prepare(obj: T): T {
    const stripped = stripForCache(obj);
    return this.opts.transform ? this.opts.transform(stripped) : stripped;
  }

  private emit(what: string, fn: (h: EventHandler<T>) => void): void {
    for (const handler of this.handlers) this.call(what, () => fn(handler));
  }

  private call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ ...errorFields(err), event: what }, "event handler threw");
    }
  }
}
