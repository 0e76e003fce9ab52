// The operator's one door to the API server. KubeConfig (from client-node) supplies the server URL,
// TLS material and credentials; requests go through client-node's own HTTP library. We build the
// requests ourselves rather than through KubernetesObjectApi because we need, for every kind alike:
// server-side apply on the main resource and on /status, watches with bookmarks, paginated lists,
// typed errors from metav1.Status, and a hook that sees every request with its code.
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  type KubeConfig,
  type ResponseContext,
} from "@kubernetes/client-node";
import { Discovery, apiVersionPath } from "./discovery.js";
import { ConnectionError, NotFoundError, WriteRefusedError, apiError, isStatus } from "./errors.js";
import {
  refOf,
  type KindRef,
  type KubeObject,
  type ObjectRef,
  type RequestRecord,
  type WatchEvent,
  type WatchEventType,
} from "./types.js";
import { fencedDispatcher } from "./write-fence.js";

export const FIELD_MANAGER = "onto-operator";

export type RequestObserver = (record: RequestRecord) => void;

/** Leader election's say on every write (POST, PUT, PATCH, DELETE) a client sends. */
export interface WriteGate {
  /**
   * Asked right before a write is sent and again at the socket: a reason refuses it
   * (WriteRefusedError), undefined lets it go. `serverWindowMs` is the write's server-side deadline.
   */
  refuses(serverWindowMs: number | undefined): string | undefined;
  /** How long the API server may work on a write sent now; the write carries it as its `timeout`. */
  serverWindowMs?(): number;
}

export interface KubeClientOptions {
  /** Server-side apply field manager; one name for everything the operator owns. */
  fieldManager?: string;
  /** Per-request timeout for everything but watches. */
  requestTimeoutMs?: number;
  userAgent?: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per page; the client follows `continue` until the list is complete. */
  pageSize?: number;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface WatchOptions {
  namespace?: string;
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks?: boolean;
  /** The server ends the watch after this long (it then ends cleanly). */
  timeoutSeconds?: number;
  signal?: AbortSignal;
  /** Called once the server has answered the watch with 200: the connection is up. */
  onOpen?: () => void;
}

export interface ApplyOptions {
  /** Take fields another manager owns; default true: the operator owns what it applies. */
  force?: boolean;
  dryRun?: boolean;
}

export interface DeleteOptions {
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
  /** 0 deletes at once (a force delete of a pod on a lost node). */
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface RequestSpec {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Watches: no request timeout, the caller reads the body as a stream. */
  streaming?: boolean;
}

type Dispatcher = ReturnType<RequestContext["getDispatcher"]>;

export class KubeClient {
  readonly fieldManager: string;
  readonly discovery: Discovery;
  private readonly server: string;
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly observers = new Set<RequestObserver>();
  private readonly requestTimeoutMs: number;
  private readonly userAgent: string;
  // client-node builds a new undici Agent on every applySecurityAuthentication call; reusing the
  // first one keeps connections pooled (headers such as rotating tokens are still refreshed per call).
  // Held in an object so the views withSignal makes share the pool.
  private readonly pool: { dispatcher?: Dispatcher } = {};
  /** Aborts every request of this view (see withSignal). */
  private signal: AbortSignal | undefined;
  // Views made by withSignal read it through their prototype, so one gate covers them all.
  private writeGate: WriteGate | undefined;

  constructor(
    readonly kubeConfig: KubeConfig,
    opts: KubeClientOptions = {},
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig: the current context names no cluster");
    this.server = cluster.server.replace(/\/+$/, "");
    this.fieldManager = opts.fieldManager ?? FIELD_MANAGER;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.userAgent = opts.userAgent ?? "onto-operator";
    this.discovery = new Discovery((path) => this.requestJson("GET", path));
  }

  /**
   * Every write (POST, PUT, PATCH, DELETE) of this client and of its withSignal views asks `gate`
   * first, at the last moment before it is sent; leader election uses it so that only a leader
   * with a valid lease writes.
   */
  setWriteGate(gate: WriteGate | undefined): void {
    this.writeGate = gate;
  }

  /**
   * The same client, every request of which is aborted when `signal` aborts (a reconcile that is
   * cancelled stops waiting for the API server). Shares connections, discovery, request hooks and
   * the write gate.
   */
  withSignal(signal: AbortSignal): KubeClient {
    const view = Object.create(this) as KubeClient;
    view.signal = this.signal ? AbortSignal.any([this.signal, signal]) : signal;
    return view;
  }

  /** Registers a hook called once per request (e.g. the rest_client_requests_total counter). */
  onRequest(observer: RequestObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    const path = await this.objectPath(ref);
    return withKind((await this.requestJson("GET", path)) as T, ref);
  }

  /** Like get, but undefined when the object does not exist. */
  async getIfExists<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.get<T>(ref).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
  }

  /** Lists every object of a kind, following `continue` pages; items get apiVersion and kind set. */
  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: ListOptions = {},
  ): Promise<ListResult<T>> {
    const path = await this.collectionPath({ apiVersion, kind, namespace: opts.namespace });
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = (await this.requestJson("GET", path, {
        query: {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          limit: opts.pageSize ?? 500,
          continue: continueToken,
        },
      })) as { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
      for (const item of page.items ?? []) items.push(withKind(item, { apiVersion, kind }));
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (continueToken);
    return { items, resourceVersion };
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    const ref = kindRefOf(obj);
    const path = await this.collectionPath(ref);
    return withKind((await this.requestJson("POST", path, { body: obj })) as T, ref);
  }

  /** PUT: replaces the object; metadata.resourceVersion, when set, makes it a compare-and-swap. */
  async update<T extends KubeObject>(obj: T): Promise<T> {
    const ref = refOf(obj);
    const path = await this.objectPath(ref);
    return withKind((await this.requestJson("PUT", path, { body: obj })) as T, ref);
  }

  /** Server-side apply of the fields in `obj` under the operator's field manager. */
  async apply<T extends KubeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    return this.applyTo(obj, undefined, opts);
  }

  /** Server-side apply on the status subresource: `obj` carries apiVersion, kind, metadata and status. */
  async applyStatus<T extends KubeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    return this.applyTo(obj, "status", opts);
  }

  /** JSON merge patch of `status` through the status subresource. */
  async patchStatus<T extends KubeObject = KubeObject>(ref: ObjectRef, status: unknown): Promise<T> {
    return this.mergePatch<T>(ref, { status }, "status");
  }

  /** JSON merge patch (RFC 7386) of the object or one of its subresources. */
  async mergePatch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    patch: unknown,
    subresource?: string,
  ): Promise<T> {
    const path = await this.objectPath(ref, subresource);
    const result = await this.requestJson("PATCH", path, {
      body: patch,
      contentType: "application/merge-patch+json",
      query: { fieldManager: this.fieldManager },
    });
    return withKind(result as T, ref);
  }

  /** Deletes an object; false when it was already gone. */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    const path = await this.objectPath(ref);
    const body = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: opts.propagationPolicy ?? "Background",
      gracePeriodSeconds: opts.gracePeriodSeconds,
      preconditions: opts.preconditions,
    };
    try {
      await this.requestJson("DELETE", path, { body });
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** Deletes at once, without waiting for the kubelet (grace period 0), e.g. a pod on a lost node. */
  async forceDelete(ref: ObjectRef): Promise<boolean> {
    return this.delete(ref, { gracePeriodSeconds: 0, propagationPolicy: "Background" });
  }

  /**
   * Watches a kind from a resource version. Yields ADDED/MODIFIED/DELETED/BOOKMARK events and ends
   * when the server closes the watch. A watch error event becomes a typed error (GoneError for an
   * expired resource version); aborting `signal` ends it with the abort error.
   */
  async *watch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const path = await this.collectionPath({ apiVersion, kind, namespace: opts.namespace });
    const response = await this.send("GET", path, {
      query: {
        watch: true,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        timeoutSeconds: opts.timeoutSeconds,
      },
      signal: opts.signal,
      streaming: true,
    });
    if (response.httpStatusCode !== 200) {
      throw apiError(response.httpStatusCode, await parseBody(response), "WATCH", path);
    }
    opts.onOpen?.();
    const stream = response.body.stream();
    if (!stream) return;
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          const event = JSON.parse(line) as { type: WatchEventType | "ERROR"; object: unknown };
          if (event.type === "ERROR") {
            const status = isStatus(event.object) ? event.object : undefined;
            throw apiError(status?.code ?? 500, event.object, "WATCH", path);
          }
          yield { type: event.type, object: withKind(event.object as T, { apiVersion, kind }) };
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  /** Releases pooled connections. */
  async close(): Promise<void> {
    await this.pool.dispatcher?.close().catch(() => undefined);
  }

  /** URL path of an object (or its subresource), resolved through discovery. */
  async objectPath(ref: ObjectRef, subresource?: string): Promise<string> {
    const collection = await this.collectionPath(ref);
    const name = encodeURIComponent(ref.name);
    return subresource ? `${collection}/${name}/${subresource}` : `${collection}/${name}`;
  }

  async collectionPath(ref: KindRef): Promise<string> {
    const resource = await this.discovery.resource(ref.apiVersion, ref.kind);
    const base = apiVersionPath(ref.apiVersion);
    if (!resource.namespaced) return `${base}/${resource.name}`;
    return ref.namespace
      ? `${base}/namespaces/${encodeURIComponent(ref.namespace)}/${resource.name}`
      : `${base}/${resource.name}`;
  }

  private async applyTo<T extends KubeObject>(
    obj: T,
    subresource: string | undefined,
    opts: ApplyOptions,
  ): Promise<T> {
    const ref = refOf(obj);
    const path = await this.objectPath(ref, subresource);
    const result = await this.requestJson("PATCH", path, {
      body: obj,
      contentType: "application/apply-patch+yaml",
      query: {
        fieldManager: this.fieldManager,
        force: opts.force ?? true,
        dryRun: opts.dryRun ? "All" : undefined,
      },
    });
    return withKind(result as T, ref);
  }

  /** Sends a request and decodes the JSON answer; non-2xx answers become typed errors. */
  async requestJson(method: Method, path: string, spec: RequestSpec = {}): Promise<unknown> {
    const response = await this.send(method, path, spec);
    const body = await parseBody(response);
    if (response.httpStatusCode < 200 || response.httpStatusCode >= 300) {
      throw apiError(response.httpStatusCode, body, method, path);
    }
    return body;
  }

  private async send(method: Method, path: string, spec: RequestSpec): Promise<ResponseContext> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(spec.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const gate = method === "GET" ? undefined : this.writeGate;
    // The server gives a write up (504) once its window ends, instead of applying it later.
    const windowMs =
      gate?.serverWindowMs && Math.max(1, Math.floor(Math.min(gate.serverWindowMs(), this.requestTimeoutMs)));
    if (gate) {
      const refused = gate.refuses(windowMs);
      if (refused !== undefined) throw new WriteRefusedError(method, path, refused);
      if (windowMs !== undefined) url.searchParams.set("timeout", `${windowMs}ms`);
    }
    const ctx = new RequestContext(url.toString(), HttpMethod[method]);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    this.pool.dispatcher ??= ctx.getDispatcher();
    if (this.pool.dispatcher) ctx.setDispatcher(this.pool.dispatcher);
    ctx.setHeaderParam("Accept", "application/json");
    ctx.setHeaderParam("User-Agent", this.userAgent);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) {
      ctx.setHeaderParam("Content-Type", spec.contentType ?? "application/json");
      ctx.setBody(body);
    }
    const signals = [spec.signal, this.signal].filter((s): s is AbortSignal => s !== undefined);
    if (!spec.streaming) signals.push(AbortSignal.timeout(this.requestTimeoutMs));
    if (signals.length) ctx.setSignal(signals.length === 1 ? signals[0]! : AbortSignal.any(signals));
    let refusedAtSocket: string | undefined;
    // Asked again at the socket: fetch's own steps before the write may outlast the lease.
    const dispatcher = this.pool.dispatcher;
    if (gate && dispatcher)
      ctx.setDispatcher(
        fencedDispatcher(
          dispatcher,
          () => gate.refuses(windowMs),
          body,
          (reason) => (refusedAtSocket = reason),
        ),
      );
    const started = performance.now();
    try {
      const response = await this.http.send(ctx).toPromise();
      this.record(method, String(response.httpStatusCode), path, started);
      return response;
    } catch (err) {
      this.record(method, "<error>", path, started);
      if (refusedAtSocket !== undefined) throw new WriteRefusedError(method, path, refusedAtSocket);
      if (spec.signal?.aborted || this.signal?.aborted) throw err;
      throw new ConnectionError(method, path, err);
    }
  }

  private record(method: string, code: string, path: string, started: number): void {
    const record = { method, code, path, durationMs: performance.now() - started };
    for (const observer of this.observers) observer(record);
  }
}

async function parseBody(response: ResponseContext): Promise<unknown> {
  const text = await response.body.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function withKind<T extends KubeObject>(obj: T, ref: { apiVersion: string; kind: string }): T {
  if (obj && typeof obj === "object") {
    obj.apiVersion ??= ref.apiVersion;
    obj.kind ??= ref.kind;
  }
  return obj;
}

function kindRefOf(obj: KubeObject): KindRef {
  if (!obj.apiVersion) throw new Error("object has no apiVersion");
  if (!obj.kind) throw new Error("object has no kind");
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata?.namespace };
}
