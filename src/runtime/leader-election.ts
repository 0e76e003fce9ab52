// Leader election on a coordination.k8s.io/v1 Lease, following client-go's algorithm: a candidate
// takes the lease when it is free or when its holder has not renewed it for leaseDuration (measured
// on our own clock from when we saw the record last change, so clock skew between machines does
// not matter); the leader renews every retryPeriod and gives up leadership if it cannot renew for
// renewDeadline. On a clean stop the leader first lets its work finish (still renewing), then
// releases the lease (empty holder) so a standby takes over at its next retry instead of waiting
// for expiry. Writes are compare-and-swap on resourceVersion: two candidates never both win.
import { ConflictError, type KubeClient } from "../kube/index.js";
import { jittered, systemClock, type Clock } from "./clock.js";
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
      const onStop = (): void => leadership.abort();
      stop.addEventListener("abort", onStop, { once: true });
      const renewing = new AbortController();
      const renewal = this.renewUntilLost(renewing.signal).then((lost) => {
        if (lost) {
          this.setLeading(false);
          leadership.abort();
        }
        return lost;
      });
      try {
        await work(leadership.signal);
      } catch (err) {
        this.log.error(errorFields(err), "leader work failed");
      }
      leadership.abort();
      renewing.abort();
      const lost = await renewal;
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
        return true;
      }
      await this.clock.sleep(jittered(this.retryPeriodMs, 0.1) + this.retryPeriodMs * 0.1, stop);
    }
    return false;
  }

  /** Renews every retryPeriod; resolves true when renewal failed for renewDeadline, false on stop. */
  private async renewUntilLost(stop: AbortSignal): Promise<boolean> {
    let lastRenew = this.clock.now();
    while (!stop.aborted) {
      await this.clock.sleep(this.retryPeriodMs, stop);
      if (stop.aborted) return false;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.clock.now();
        continue;
      }
      if (this.clock.now() - lastRenew >= this.renewDeadlineMs) {
        this.log.warn(
          { sinceLastRenewMs: this.clock.now() - lastRenew },
          "failed to renew the lease; leadership lost",
        );
        return true;
      }
    }
    return false;
  }

  /** One round of client-go's tryAcquireOrRenew: true when we hold the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity, api } = this.opts;
    const now = this.clock.now();
    const mine: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    try {
      const lease = await api.get(namespace, name);
      this.lastContact = this.clock.now();
      if (!lease) {
        await api.create({
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: mine,
        });
        this.observe(mine, now);
        return true;
      }
      const record = lease.spec ?? {};
      this.observe(record, now);
      const holder = record.holderIdentity ?? "";
      const validFor = (record.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== identity && this.observedAt + validFor > now) return false;
      const spec: LeaseSpec =
        holder === identity
          ? {
              ...mine,
              acquireTime: record.acquireTime ?? mine.acquireTime,
              leaseTransitions: record.leaseTransitions ?? 0,
            }
          : { ...mine, leaseTransitions: (record.leaseTransitions ?? 0) + 1 };
      await api.update({ ...lease, spec });
      this.observe(spec, now);
      return true;
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
