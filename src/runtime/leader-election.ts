// Leader election on a coordination.k8s.io/v1 Lease, following client-go's algorithm: a candidate
// takes the lease when it is free or when its holder has not renewed it for leaseDuration (measured
// on our own clock from when we saw the record last change, so clock skew between machines does
// not matter); the leader renews every retryPeriod and gives up leadership if it cannot renew for
// renewDeadline. On a clean stop the leader first lets its work finish (still renewing), then
// releases the lease (empty holder) so a standby takes over at its next retry instead of waiting
// for expiry. Writes are compare-and-swap on resourceVersion: two candidates never both win.
//
// Leadership is only as good as the lease's last renewal: the lease is *known valid* until
// renewDeadline after the renewal that succeeded last was sent (measured from when it was sent, so
// a slow answer shortens it). A standby can take over only leaseDuration after it saw that renewal,
// and leaseDuration > renewDeadline, so a leader that writes only while its lease is known valid
// (writeBlock(), checked by the API client right before each write) never sends a write once
// another replica could lead. A write sent in time can still be applied late by a slow server, so
// each write also carries a server-side deadline (writeWindowMs(), its `timeout`) that ends before
// another replica can take the lease: the server gives it up rather than apply it after a takeover
// (only a write it had already handed to etcd when the deadline passed can still land). A process
// frozen past that point (SIGSTOP, a stalled event loop) learns it on its first tick back: the
// expiry timer fires, leadership is lost, onLost runs (the manager exits, as controller-runtime
// does), and every write in between is refused by the gate.
import { ConflictError, type KubeClient } from "../kube/index.js";
import { jittered, systemClock, type Clock, type Timer } from "./clock.js";
import { errorFields, silentLogger, type Logger } from "./logging.js";

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: "coordination.k8s.io/v1";
  kind: "Lease";
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** The three lease operations election needs; kubeLeaseApi implements them on the API server. */
export interface LeaseApi {
  get(namespace: string, name: string): Promise<Lease | undefined>;
  /** Throws ConflictError (AlreadyExistsError) if it exists. */
  create(lease: Lease): Promise<Lease>;
  /** Throws ConflictError if metadata.resourceVersion is not current. */
  update(lease: Lease): Promise<Lease>;
}

export function kubeLeaseApi(client: KubeClient): LeaseApi {
  return {
    get: (namespace, name) =>
      client.getIfExists<Lease>({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", namespace, name }),
    create: (lease) => client.create(lease),
    update: (lease) => client.update(lease),
  };
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** Unique per process, e.g. pod name plus a random suffix. */
  identity: string;
  api: LeaseApi;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Called on every change of leadership (true when this process leads). */
  onLeadershipChange?: (leading: boolean) => void;
  /** Called once each time leadership is lost (not on a clean release), with why. */
  onLost?: (reason: string) => void;
}

/** What the leader runs: it must return once `signal` aborts and its work has stopped. */
export type LeaderWork = (signal: AbortSignal) => Promise<void>;

/** metav1.MicroTime. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

export class LeaderElector {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;
  private observedRecord = "";
  private observedAt = 0;
  private leading = false;
  private lastContact = 0;
  private currentHolder: string | undefined;
  /** Until when (clock ms) the lease is known to be ours: last successful renewal's start + renewDeadline. */
  private validUntil = 0;
  private expiry: Timer | undefined;
  private leadership: AbortController | undefined;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) {
      throw new Error("leaderElection: leaseDurationMs must be greater than renewDeadlineMs");
    }
    if (this.renewDeadlineMs <= this.retryPeriodMs) {
      throw new Error("leaderElection: renewDeadlineMs must be greater than retryPeriodMs");
    }
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.logger ?? silentLogger).child({
      component: "leader-election",
      lease: `${opts.namespace}/${opts.name}`,
    });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Leading, and the lease known valid now. */
  holdsLease(): boolean {
    return this.leading && this.clock.now() < this.validUntil;
  }

  /**
   * Why a write must not be sent now (undefined: it may). The API client asks before each write and
   * again at the socket. `serverWindowMs` is how long the API server may work on the write (its
   * `timeout`): a write the server could still apply once another replica can hold the lease is
   * refused too, though the lease is still ours.
   */
  writeBlock(serverWindowMs = 0): string | undefined {
    const lease = `lease ${this.opts.namespace}/${this.opts.name}`;
    if (!this.leading) return `not the leader of ${lease}`;
    const now = this.clock.now();
    if (now >= this.validUntil) {
      this.lose(`lease not renewed for ${now - this.validUntil + this.renewDeadlineMs} ms`);
      return `${lease} not known valid (last renewal too old)`;
    }
    if (now + serverWindowMs > this.takeoverAt()) {
      return `a write the API server may work on for ${serverWindowMs} ms could land after another replica can take ${lease}`;
    }
    return undefined;
  }

  /**
   * How long the API server may work on a write sent now: half the time left until another replica
   * can take the lease, so that a write sent a little later than asked still ends in time. A
   * write's own server-side deadline is what keeps a slow server (a write queued behind others on a
   * loaded machine) from applying it after a takeover; the lease check alone only covers sending.
   */
  writeWindowMs(): number {
    return Math.max(0, (this.takeoverAt() - this.clock.now()) / 2);
  }

  /**
   * The earliest moment (our clock) another replica can hold the lease: it waits leaseDuration from
   * when it saw our last renewal, which was sent no earlier than validUntil − renewDeadline.
   */
  private takeoverAt(): number {
    return this.validUntil + this.leaseDurationMs - this.renewDeadlineMs;
  }

  /** Identity of the holder as last seen (ours when leading). */
  holder(): string | undefined {
    return this.currentHolder;
  }

  /** The lease API answered within the last lease duration: a standby that is in touch. */
  inContact(): boolean {
    return this.clock.now() - this.lastContact < this.leaseDurationMs;
  }

  /**
   * Campaigns until `stop` aborts. Each time leadership is won, runs `work` with a signal that
   * aborts when leadership is lost or `stop` aborts; after a lost lease it campaigns again. On stop
   * it waits for `work` to return, then releases the lease.
   */
  async run(stop: AbortSignal, work: LeaderWork): Promise<void> {
    while (!stop.aborted) {
      if (!(await this.acquire(stop))) return;
      const leadership = new AbortController();
      this.leadership = leadership;
      const onStop = (): void => leadership.abort();
      stop.addEventListener("abort", onStop, { once: true });
      const renewing = new AbortController();
      const renewal = this.renewUntilLost(renewing.signal);
      try {
        await work(leadership.signal);
      } catch (err) {
        this.log.error(errorFields(err), "leader work failed");
      }
      leadership.abort();
      renewing.abort();
      const lost = (await renewal) || !this.leading;
      this.leadership = undefined;
      stop.removeEventListener("abort", onStop);
      if (!lost) {
        await this.release();
        if (!stop.aborted) await this.clock.sleep(this.retryPeriodMs, stop);
      }
    }
  }

  /** Tries until the lease is ours (true) or `stop` aborts (false). */
  private async acquire(stop: AbortSignal): Promise<boolean> {
    this.log.info({ identity: this.opts.identity }, "campaigning for leadership");
    while (!stop.aborted) {
      if (await this.tryAcquireOrRenew()) {
        this.setLeading(true);
        this.armExpiry();
        return true;
      }
      await this.clock.sleep(jittered(this.retryPeriodMs, 0.1) + this.retryPeriodMs * 0.1, stop);
    }
    return false;
  }

  /**
   * Renews every retryPeriod; resolves true when leadership was lost (renewal failed until the
   * lease was no longer known valid, or the expiry timer fired first), false on stop.
   */
  private async renewUntilLost(stop: AbortSignal): Promise<boolean> {
    while (!stop.aborted) {
      await this.clock.sleep(this.retryPeriodMs, stop);
      if (stop.aborted) return false;
      if (!this.leading) return true;
      const renewed = await this.tryAcquireOrRenew();
      if (!this.leading) return true;
      if (renewed) {
        this.armExpiry();
        continue;
      }
      if (this.clock.now() >= this.validUntil) {
        this.lose("failed to renew the lease before the renew deadline");
        return true;
      }
    }
    return false;
  }

  /** (Re)arms the timer that ends leadership when the lease stops being known valid. */
  private armExpiry(): void {
    this.expiry?.cancel();
    this.expiry = this.clock.setTimer(this.validUntil - this.clock.now(), () => {
      if (this.leading && this.clock.now() >= this.validUntil) this.lose("lease expired without renewal");
    });
  }

  /** Leadership is lost: stop leading at once, abort the work, tell onLost. */
  private lose(reason: string): void {
    if (!this.leading) return;
    this.expiry?.cancel();
    this.log.warn({ reason }, "leadership lost");
    this.setLeading(false);
    this.leadership?.abort();
    this.opts.onLost?.(reason);
  }

  /** One round of client-go's tryAcquireOrRenew: true when we hold the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, api } = this.opts;
    const now = this.clock.now();
    const success = (): true => {
      // Known valid from when this attempt began, not from when its answer came.
      this.validUntil = Math.max(this.validUntil, now + this.renewDeadlineMs);
      return true;
    };
    const mine: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      const lease = await api.get(namespace, name);
      // The record is seen when the answer arrives, not when the request left: a slow answer must
      // not make another holder's renewal look older than it is (client-go measures it so too).
      const seen = this.clock.now();
      this.lastContact = seen;
      if (!lease) {
        await api.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: mine,
        });
        this.observe(mine, seen);
        return success();
      }
      const record = lease.spec ?? {};
      this.observe(record, seen);
      const holder = record.holderIdentity ?? "";
      const validFor = (record.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== identity && this.observedAt + validFor > seen) return false;
      const spec: LeaseSpec =
        holder === identity
          ? {
              ...mine,
              acquireTime: record.acquireTime ?? mine.acquireTime,
              leaseTransitions: record.leaseTransitions ?? 0,
            }
          : { ...mine, leaseTransitions: (record.leaseTransitions ?? 0) + 1 };
      await api.update({ ...lease, spec });
      this.observe(spec, seen);
      return success();
    } catch (err) {
      if (!(err instanceof ConflictError)) this.log.warn(errorFields(err), "lease request failed");
      return false;
    }
  }

  /** Gives the lease up (empty holder) so a standby need not wait for it to expire. */
  private async release(): Promise<void> {
    const { namespace, name, identity, api } = this.opts;
    try {
      const lease = await api.get(namespace, name);
      if (lease?.spec?.holderIdentity === identity) {
        const now = this.clock.now();
        await api.update({
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: "",
            leaseDurationSeconds: 1,
            renewTime: microTime(now),
            acquireTime: microTime(now),
          },
        });
        this.log.info("lease released");
      }
    } catch (err) {
      this.log.warn(errorFields(err), "lease not released; the next leader waits for it to expire");
    } finally {
      this.expiry?.cancel();
      this.validUntil = 0;
      this.setLeading(false);
    }
  }

  private observe(record: LeaseSpec, now: number): void {
    const id = JSON.stringify([record.holderIdentity, record.renewTime, record.leaseDurationSeconds]);
    if (id !== this.observedRecord) {
      this.observedRecord = id;
      this.observedAt = now;
    }
    this.currentHolder = record.holderIdentity || undefined;
  }

  private setLeading(leading: boolean): void {
    if (this.leading === leading) return;
    this.leading = leading;
    this.log.info({ identity: this.opts.identity, leading }, leading ? "became leader" : "stopped leading");
    this.opts.onLeadershipChange?.(leading);
  }
}
