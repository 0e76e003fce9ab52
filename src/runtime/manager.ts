// The manager owns what controllers share and runs them: one API client (its requests counted),
// the shared informers, metrics, the Events recorder, the HTTP endpoints, leader election and
// graceful shutdown. Informers run on every replica (a standby has a warm cache and takes over
// fast); controllers run only on the leader (on every replica when leader election is off).
//
// Readiness: /readyz passes when every informer has synced and, with leader election on, this
// process either leads or is a standby in touch with the API server (it read the lease within
// the lease duration). A standby is ready on purpose: it is a healthy replica, and a rollout must
// not wait for it to win an election it cannot win while the old leader runs.
//
// With leader election, the API client writes only while the lease is known valid (its write
// gate asks the elector before every write; the Lease itself goes through a client of its own),
// and a lost lease ends the process (leadershipLost "exit", as controller-runtime does): a
// replica that was frozen or cut off comes back as a standby, through its restart, never as a
// second leader.
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { KubeClient, type KubeObject } from "../kube/index.js";
import { systemClock, type Clock } from "./clock.js";
import { Controller, type ControllerOptions } from "./controller.js";
import { EventRecorder, kubeEventSink } from "./events.js";
import { serveHealth, serveMetrics, type RunningServer } from "./http-servers.js";
import type { InformerSource } from "./informer.js";
import { InformerFactory, type InformerSettings } from "./informer-factory.js";
import { LeaderElector, kubeLeaseApi } from "./leader-election.js";
import { errorFields, silentLogger, type Logger } from "./logging.js";
import { RuntimeMetrics } from "./metrics.js";
import { syncedStore, type ReadonlyStore } from "./synced-store.js";

export interface LeaderElectionSettings {
  namespace: string;
  /** Lease name. */
  name: string;
  /** Defaults to hostname plus a random suffix. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  client: KubeClient;
  logger?: Logger;
  clock?: Clock;
  /** Port for /metrics; undefined: no metrics server; 0: any free port. */
  metricsPort?: number;
  /** Port for /healthz and /readyz; undefined: no health server; 0: any free port. */
  healthPort?: number;
  bindAddress?: string;
  leaderElection?: LeaderElectionSettings;
  /** How long in-flight reconciles may take to finish on shutdown or lost leadership. */
  shutdownTimeoutMs?: number;
  informers?: InformerSettings;
  /** reportingController of Events. */
  eventsController?: string;
  /** Collect Node.js process metrics too (default true). */
  processMetrics?: boolean;
  /** On lost leadership: end the process (default, exit code 1) or campaign again. */
  leadershipLost?: "exit" | "recampaign";
  /** How the process ends on lost leadership (tests replace it). */
  exit?: (code: number) => void;
}

type State = "new" | "running" | "stopping" | "stopped";

export class Manager {
  readonly client: KubeClient;
  readonly informers: InformerFactory;
  readonly metrics: RuntimeMetrics;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly elector: LeaderElector | undefined;
  private readonly clock: Clock;
  private readonly controllers: Controller[] = [];
  private readonly stopper = new AbortController();
  private readonly servers: RunningServer[] = [];
  private readonly stopCounting: () => void;
  private readonly leaseClient: KubeClient | undefined;
  private state: State = "new";
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private leadersWork = 0;
  /** The current leader's run: what a controller added while running joins. */
  private leading: { signal: AbortSignal; cancel: AbortSignal; work: Promise<void>[] } | undefined;
  /** Bound addresses ("host:port") of the metrics and health servers once started. */
  readonly addresses: { metrics?: string; health?: string } = {};

  constructor(private readonly opts: ManagerOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
    this.metrics = new RuntimeMetrics({ processMetrics: opts.processMetrics });
    this.stopCounting = this.metrics.countRequests(this.client);
    this.informers = new InformerFactory(this.client, {
      ...opts.informers,
      clock: this.clock,
      logger: this.logger,
    });
    const identity = opts.leaderElection?.identity ?? `${hostname()}_${randomBytes(4).toString("hex")}`;
    this.events = new EventRecorder({
      controller: opts.eventsController ?? "onto.paas/onto-operator",
      instance: identity,
      sink: kubeEventSink(this.client),
      clock: this.clock,
      logger: this.logger,
    });
    if (opts.leaderElection) {
      const le = opts.leaderElection;
      // The Lease has a client of its own: not gated, and a request timeout below the renew
      // deadline, so one hanging renewal cannot outlast the lease.
      this.leaseClient = new KubeClient(this.client.kubeConfig, {
        requestTimeoutMs: Math.floor((le.renewDeadlineMs ?? 10_000) / 2),
        userAgent: "onto-operator-leader-election",
      });
      this.elector = new LeaderElector({
        namespace: le.namespace,
        name: le.name,
        identity,
        api: kubeLeaseApi(this.leaseClient),
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        clock: this.clock,
        logger: this.logger,
        onLeadershipChange: (leading) => this.metrics.leader.set({ name: le.name }, leading ? 1 : 0),
        onLost: (reason) => this.leadershipLost(reason),
      });
      const elector = this.elector;
      this.client.setWriteGate({
        refuses: (windowMs) => elector.writeBlock(windowMs),
        serverWindowMs: () => elector.writeWindowMs(),
      });
      this.metrics.leader.set({ name: le.name }, 0);
    }
  }

  /**
   * Registers a controller; its informers are created now (and shared), it runs once started and
   * leading. Added to a running manager (for an API that appeared after start, such as a CRD
   * installed later), it starts at once when this replica leads, else with the next leadership.
   */
  addController(opts: ControllerOptions): Controller {
    if (this.state !== "new" && this.state !== "running")
      throw new Error(`manager: add controller ${opts.name} while ${this.state}`);
    if (this.controllers.some((c) => c.name === opts.name))
      throw new Error(`manager: controller ${opts.name} registered twice`);
    const controller = new Controller(opts, {
      informers: this.informers,
      metrics: this.metrics,
      logger: this.logger,
      clock: this.clock,
    });
    this.controllers.push(controller);
    const leading = this.leading;
    if (leading && !leading.signal.aborted) {
      leading.work.push(controller.run(leading.signal, leading.cancel));
      this.logger.info({ controller: opts.name }, "controller added to the running manager");
    }
    return controller;
  }

  /**
   * What reconcilers read: the shared informer cache of `source`, read-only, failing loudly
   * (CacheNotSyncedError) while it has not synced. Ask for every source before start(), so the
   * informer starts with the others and has synced before the controllers run.
   */
  cache(source: InformerSource): ReadonlyStore<KubeObject> {
    const informer = this.informers.informer(source);
    const what = `${source.apiVersion}/${source.kind}${source.namespace ? ` in ${source.namespace}` : ""}`;
    return syncedStore(informer.store, () => informer.hasSynced(), what);
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.state === "running";
  }

  /** null when ready, else why not (see the comment at the top of this file). */
  readiness(): string | null {
    if (this.state !== "running") return `manager is ${this.state}`;
    const unsynced = this.informers.all().filter((i) => !i.hasSynced());
    if (unsynced.length)
      return `caches not synced: ${unsynced.map((i) => `${i.source.apiVersion}/${i.source.kind}`).join(", ")}`;
    if (this.elector && !this.elector.isLeader() && !this.elector.inContact())
      return "standby has not reached the lease";
    return null;
  }

  /** null while the process is alive and not shutting down. */
  liveness(): string | null {
    return this.state === "stopped" ? "manager stopped" : null;
  }

  /**
   * Starts the HTTP servers and the informers, then campaigns (or runs the controllers at once
   * without leader election). Resolves once everything is started, without waiting for leadership.
   */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`manager: start() called when ${this.state}`);
    this.state = "running";
    const host = this.opts.bindAddress ?? "0.0.0.0";
    if (this.opts.metricsPort !== undefined) {
      const s = await serveMetrics(this.metrics.registry, this.opts.metricsPort, host);
      this.servers.push(s);
      this.addresses.metrics = s.address;
    }
    if (this.opts.healthPort !== undefined) {
      const s = await serveHealth(
        { healthz: () => this.liveness(), readyz: () => this.readiness() },
        this.opts.healthPort,
        host,
      );
      this.servers.push(s);
      this.addresses.health = s.address;
    }
    this.informers.start();
    const work = (signal: AbortSignal): Promise<void> => this.runControllers(signal);
    this.running = (
      this.elector ? this.elector.run(this.stopper.signal, work) : work(this.stopper.signal)
    ).catch((err: unknown) => this.logger.error(errorFields(err), "manager run failed"));
    this.logger.info(
      { controllers: this.controllers.map((c) => c.name), ...this.addresses },
      "manager started",
    );
  }

  /**
   * Graceful stop: controllers take no new work and finish what is in flight (bounded by
   * shutdownTimeoutMs), the lease is released, Events are flushed, informers and servers stop.
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  /** SIGTERM/SIGINT: stop gracefully, then exit (code 0, or 1 if the stop failed). */
  handleSignals(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (signal: NodeJS.Signals): void => {
      this.logger.info({ signal }, "shutting down");
      this.stop().then(
        () => exit(0),
        (err: unknown) => {
          this.logger.error(errorFields(err), "shutdown failed");
          exit(1);
        },
      );
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  }

  private leadershipLost(reason: string): void {
    if ((this.opts.leadershipLost ?? "exit") !== "exit" || this.state !== "running") return;
    this.logger.error({ reason }, "leader election lost; exiting so that a restart comes back as a standby");
    (this.opts.exit ?? ((code: number) => process.exit(code)))(1);
  }

  private async doStop(): Promise<void> {
    if (this.state === "new") {
      this.state = "stopped";
      return;
    }
    this.state = "stopping";
    this.stopper.abort();
    await this.running;
    await this.events.stop();
    await this.informers.stop();
    await Promise.all(this.servers.map((s) => s.close()));
    this.stopCounting();
    await Promise.all([this.client.close(), this.leaseClient?.close()]);
    this.state = "stopped";
    this.logger.info("manager stopped");
  }

  /** The leader's work: run every controller until `signal` aborts, then drain within the bound. */
  private async runControllers(signal: AbortSignal): Promise<void> {
    const run = ++this.leadersWork;
    this.logger.info({ run }, "starting controllers");
    // Reconciles in flight get the shutdown bound to finish; then their requests are aborted.
    const cancel = new AbortController();
    // Each controller listens once on the leader's signal for its queue's shutdown (twice until its
    // caches sync), and this run once more: one controller per watched namespace can pass Node's
    // default warning limit of 10 with no leak.
    setMaxListeners(Math.max(10, 2 * this.controllers.length + 4), signal);
    const leading = {
      signal,
      cancel: cancel.signal,
      work: this.controllers.map((c) => c.run(signal, cancel.signal)),
    };
    this.leading = leading;
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    // No controller joins after the abort, so this includes every one added while leading.
    const all = Promise.all(leading.work);
    if (this.leading === leading) this.leading = undefined;
    const bound = this.opts.shutdownTimeoutMs ?? 20_000;
    let finished = false;
    const cancelWait = new AbortController();
    await Promise.race([all.then(() => (finished = true)), this.clock.sleep(bound, cancelWait.signal)]);
    cancelWait.abort();
    if (finished) {
      this.logger.info({ run }, "controllers stopped");
    } else {
      cancel.abort();
      this.logger.warn({ timeoutMs: bound }, "reconciles still running after the shutdown bound; cancelled");
    }
    // Pending Event series are written while the lease is still ours (before it is released).
    await this.events.flush();
  }
}
