// Postgres high availability, the effect layer: one pass per OntoPlatform observes every member
// (its pod and node from the informer caches, its answers over SQL), lets decide() choose, and
// carries the decision out through act() (Event, audit line, onto_actions_total):
//   role labels  patch each pod's onto.paas/postgres-role (the Services select by it);
//   promotion    write status.postgres.targetPrimary ahead, fence the old primary (label; for a
//                switchover also no more writes and the target caught up; on a lost node where it
//                still answers, a fast shutdown asked over SQL), pg_promote() the
//                target, label it primary, record it (status, Event, audit, metric);
//   demotion     delete a pod that answers as a primary but is not the primary: it starts again,
//                finds the primary and rejoins as its standby (pg_rewind or a fresh clone);
//   rejoin       the same for a standby that has not streamed from a healthy primary for a minute
//                (WAL past a promotion's fork point: it cannot follow the new timeline by itself);
//   slots        a replication slot for every other member on the primary, so standbys stream
//                through a slot after a failover too;
//   reload       pg_reload_conf() on a member whose configuration files give a reloadable setting
//                (POSTGRES.reloadableSettings) a value it does not run, or that serves another
//                certificate than the platform's TLS Secret holds (reloads.ts).
// Level-triggered: a restart in the middle finds targetPrimary in status and completes or forgets it.
// Each pass decides from status.postgres as last written (shared/status-writer.ts): the informer's
// copy once it shows this controller's last write, until then the status that write returned.
import { X509Certificate } from "node:crypto";
import {
  NAME_LABEL,
  POSTGRES_ROLE_LABEL,
  POSTGRES_ROLES,
  SWITCHOVER_REQUESTED_AT_ANNOTATION,
  SWITCHOVER_TO_ANNOTATION,
  resolveSpec,
  type OntoPlatform,
  type PostgresStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeClient, KubeObject, ObjectRef } from "../../kube/index.js";
import { POSTGRES, TLS_KEYS } from "../../render/index.js";
import type { Request, Result } from "../../runtime/index.js";
import { act, record, type ActionContext, type ClusterAction } from "../shared/act.js";
import {
  REVISION_LABEL,
  isPodReady,
  isTerminating,
  statefulSetPartition,
  updatedByOperator,
  type NodeView,
  type PodView,
  type WorkloadView,
} from "../shared/kube-views.js";
import type { PlatformViews } from "../shared/platform-views.js";
import { inPool, isNotReady, platformKeyOfPod } from "../healing/index.js";
import {
  STANDBY_REJOIN_AFTER_MS,
  decide,
  isAutomatic,
  type HaDecision,
  type MemberView,
  type Promotion,
} from "./decisions.js";
import type { PostgresHaMetrics } from "./metrics.js";
import { RELOAD_INTERVAL_MS, reloadsDue, type Reload } from "./reloads.js";
import { decideRolling, type RollingMember } from "./rolling.js";
import { slotOf, type MemberSql, type MemberTls } from "./sql.js";
import { StatusWriter } from "../shared/status-writer.js";

const COMPONENT = "postgres";
/** How often members are looked at while there are standbys (failure detection). */
const WATCH_MS = 1_000;
const SINGLE_MEMBER_RECHECK_MS = 10_000;
/** No automatic failover sooner than this after a promotion. */
export const FAILOVER_COOLDOWN_MS = 30_000;
/** How long a switchover waits for its target to receive the last WAL of the old primary. */
const CATCH_UP_MS = 10_000;
/** How long a switchover waits for the old primary's fast shutdown. */
const STOP_WAIT_MS = 30_000;
const POD_REF = { apiVersion: "v1", kind: "Pod" } as const;
/** Logged (debug) by a pass that decides from the API server's copy of the platform. */
export const CACHE_BEHIND_MESSAGE =
  "the cached platform does not show the last status.postgres write: deciding from the status written";

type Pod = PodView & { status?: { podIP?: string } };

export interface PostgresHaDeps extends PlatformViews {
  metrics: PostgresHaMetrics;
  /** SQL to the members with the platform's credentials (read from its Secret). */
  sql: (
    platform: OntoPlatform,
    password: () => string | undefined,
    tls: () => MemberTls | undefined,
  ) => MemberSql;
}

interface Observed {
  members: MemberView[];
  pods: Map<string, Pod>;
}

export class PostgresHa {
  private readonly now: () => Date;
  private readonly status = new StatusWriter();
  /**
   * When each member was last reloaded, by `<platform uid>/<member>` (the rate limit); entries
   * older than RELOAD_INTERVAL_MS limit nothing and are dropped.
   */
  private readonly reloaded = new Map<string, Date>();

  constructor(private readonly deps: PostgresHaDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async reconcile(cached: OntoPlatform, request: Request): Promise<Result> {
    if (!cached.metadata.uid || isTerminating(cached)) return {};
    const client = this.deps.client.withSignal(request.signal);
    // Until the watch brings this controller's last status write, decide from the status written,
    // not from a status.postgres from before the last promotion.
    let platform = this.status.latest(cached);
    if (platform !== cached) this.deps.logger.debug({ platform: cached.metadata.name }, CACHE_BEHIND_MESSAGE);
    let spec: ResolvedSpec;
    try {
      spec = resolveSpec(platform.spec);
    } catch {
      return {}; // the platform reconciler reports an invalid spec
    }
    if (spec.paused) return {};
    const ns = platform.metadata.namespace;
    const sts: WorkloadView | undefined = this.deps
      .cache({ apiVersion: "apps/v1", kind: "StatefulSet" }, ns)
      .getByName(ns, COMPONENT);
    if (!sts) return {};
    const replicas = sts.spec?.replicas ?? spec.infrastructure.postgres.replicas;
    const ctx: ActionContext = {
      client,
      recorder: this.deps.actions,
      actor: "postgres-ha",
      platform,
      reconcileId: request.id,
    };
    const certificate = this.certificate(ns, spec.global.tlsSecretName, spec.global.tlsEnabled);
    const sql = this.deps.sql(
      platform,
      () => this.password(ns),
      () => certificate,
    );
    const observed = await this.observe(platform, replicas, sql);
    const now = this.now();
    const settings = spec.infrastructure.postgres;
    const input = {
      members: observed.members,
      state: platform.status?.postgres,
      now,
      settings: {
        failoverDelayMs: settings.failoverDelaySeconds * 1000,
        maxLagBytes: settings.maxStandbyLagBytes,
        cooldownMs: FAILOVER_COOLDOWN_MS,
        automatic: spec.selfHealing.enabled,
        maxActionsPerHour: spec.selfHealing.maxActionsPerHour,
      },
      healerActions: platform.status?.healing?.recentActions,
      nodes: this.nodeCount(spec),
      switchover: switchoverRequest(platform),
    };
    const decision = decide(input);
    let state = decision.state;
    if (decision.withheld) state.failoverWithheld = decision.withheld;
    else delete state.failoverWithheld;

    if (decision.confirmed) this.recordConfirmed(ctx, decision.confirmed);
    if (decision.promote) {
      // Written ahead: a restart from here on finds the promotion in status.
      platform = await this.writeState(client, platform, { ...state, failoverWithheld: undefined });
      state = await this.carryOut(ctx, sql, decision.promote, observed, state, now);
    } else {
      await this.applyLabels(ctx, observed, decision);
      for (const name of decision.demote) {
        const pod = observed.pods.get(name);
        if (pod) await this.demote(ctx, ns, pod, "a second primary");
      }
      for (const name of decision.rejoin) {
        const pod = observed.pods.get(name);
        if (pod) await this.rejoin(ctx, ns, pod, state.currentPrimary ?? "");
      }
      await this.keepSlots(sql, observed, state);
      await this.reloadChanged(ctx, sql, observed, cached.metadata.uid, now, certificate?.serial);
      state = await this.roll(ctx, sql, sts, observed, decision, state, now, (next) =>
        this.writeState(client, platform, next).then((written) => {
          platform = written;
        }),
      );
    }
    await this.writeState(client, platform, state);
    for (const m of state.members ?? [])
      if (m.lagBytes !== undefined) this.deps.metrics.lag(platform, m.name, m.lagBytes);
    return { requeueAfterMs: replicas > 1 ? WATCH_MS : SINGLE_MEMBER_RECHECK_MS };
  }

  /**
   * One step of a rolling update of the members (rolling.ts): delete one member's pod (the
   * StatefulSet makes it again from the new revision), or replace the primary through the
   * switchover path. Resolves to the status to write.
   */
  private async roll(
    ctx: ActionContext,
    sql: MemberSql,
    sts: WorkloadView,
    observed: Observed,
    decision: HaDecision,
    state: PostgresStatus,
    now: Date,
    writeAhead: (state: PostgresStatus) => Promise<void>,
  ): Promise<PostgresStatus> {
    if (!updatedByOperator(sts) || observed.members.length < 2) return state;
    const revision = sts.status?.updateRevision;
    // The StatefulSet controller has not yet made the revision of its latest template.
    if (!revision || (sts.status?.observedGeneration ?? 0) < (sts.metadata?.generation ?? 0)) return state;
    const members: RollingMember[] = observed.members.map((m, ordinal) => {
      const pod = observed.pods.get(m.name);
      return {
        name: m.name,
        ordinal,
        pod: m.pod === "present" && pod ? "present" : pod ? "terminating" : "absent",
        uid: pod?.metadata?.uid,
        updated: pod?.metadata?.labels?.[REVISION_LABEL] === revision,
        ready: pod !== undefined && isPodReady(pod),
        streaming: decision.labels[m.name] === POSTGRES_ROLES.standby,
      };
    });
    const rolling = decideRolling({
      members,
      primary: state.currentPrimary,
      partition: statefulSetPartition(sts),
      busy: busyWith(decision, state),
    });
    const ns = ctx.platform.metadata?.namespace ?? "";
    if (rolling.action === "delete") {
      const target = podRef(ns, rolling.member);
      await act(ctx, {
        verb: "delete",
        target,
        reason: ROLLING_UPDATE_REASON,
        message: `Postgres rolling update: ${rolling.member} replaced by the new revision ${revision} (${rolling.why})`,
        label: `roll ${rolling.member}`,
        run: (client) => client.delete(target, { preconditions: { uid: rolling.uid } }),
      });
    } else if (rolling.action === "switchover") {
      this.deps.logger.info({ from: rolling.from, to: rolling.to, revision }, rolling.why);
      const promotion: Promotion = {
        from: rolling.from,
        to: rolling.to,
        reason: "RollingUpdate",
        planned: true,
      };
      // Written ahead, as for any promotion: a restart from here on finds it in status.
      const ahead = { ...state, targetPrimary: rolling.to, targetReason: promotion.reason };
      await writeAhead(ahead);
      return this.carryOut(ctx, sql, promotion, observed, ahead, now);
    } else if (rolling.action === "wait") {
      this.deps.logger.debug({ revision, why: rolling.why }, "postgres rolling update waits");
    }
    return state;
  }

  /** One key of a Secret in the platform's namespace, decoded; undefined when either is missing. */
  private secretValue(ns: string, name: string, key: string): string | undefined {
    const secret: (KubeObject & { data?: Record<string, string> }) | undefined = this.deps
      .cache({ apiVersion: "v1", kind: "Secret" }, ns)
      .getByName(ns, name);
    const encoded = secret?.data?.[key];
    return encoded ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
  }

  private password(ns: string): string | undefined {
    return this.secretValue(ns, POSTGRES.secret, POSTGRES.passwordKey);
  }

  /**
   * The platform certificate's CA (to verify members that serve TLS) and its serial (what they
   * should serve), from the Secret global.tlsSecretName names, whether or not the members use it
   * yet (sql.ts speaks to each the way it takes); `enabled`: the way they are meant to.
   */
  private certificate(
    ns: string,
    secretName: string | undefined,
    enabled: boolean,
  ): (MemberTls & { serial: string }) | undefined {
    if (!secretName) return undefined;
    const ca = this.secretValue(ns, secretName, TLS_KEYS.ca);
    const cert = this.secretValue(ns, secretName, TLS_KEYS.cert);
    if (!ca || !cert) return undefined;
    try {
      return { ca, preferred: enabled, serial: new X509Certificate(cert).serialNumber.toUpperCase() };
    } catch {
      return undefined; // not a certificate: the platform reconciler reports the Secret
    }
  }

  private nodeCount(spec: ResolvedSpec): { ready: number; total: number } {
    const pool = (this.deps.nodes().list() as NodeView[]).filter((n) => inPool(n, spec.global.nodePool));
    return { total: pool.length, ready: pool.filter((n) => !isNotReady(n)).length };
  }

  private async observe(platform: OntoPlatform, replicas: number, sql: MemberSql): Promise<Observed> {
    const ns = platform.metadata.namespace;
    const key = `${ns}/${platform.metadata.name}`;
    const pods = new Map<string, Pod>();
    for (const pod of this.deps.pods(ns).byNamespace(ns) as Pod[]) {
      if (platformKeyOfPod(pod) !== key || pod.metadata?.labels?.[NAME_LABEL] !== COMPONENT) continue;
      pods.set(pod.metadata.name ?? "", pod);
    }
    const nodes = this.deps.nodes();
    const names = Array.from({ length: replicas }, (_, i) => `${COMPONENT}-${i}`);
    const members = await Promise.all(
      names.map(async (name): Promise<MemberView> => {
        const pod = pods.get(name);
        if (!pod) return { name, pod: "absent", nodeReady: false };
        const nodeName = pod.spec?.nodeName;
        const node = nodeName ? nodes.getByName("", nodeName) : undefined;
        const ip = pod.status?.podIP;
        return {
          name,
          // A pod whose containers have stopped is gone for Postgres, even before it is removed.
          pod: !isTerminating(pod) ? "present" : containersRunning(pod) ? "terminating" : "absent",
          nodeReady: node !== undefined && !isNotReady(node),
          label: pod.metadata?.labels?.[POSTGRES_ROLE_LABEL],
          sql: ip && !isTerminating(pod) ? await sql.observe(ip) : undefined,
          startedAt: startedAt(pod),
        };
      }),
    );
    return { members, pods };
  }

  private async applyLabels(ctx: ActionContext, observed: Observed, decision: HaDecision): Promise<void> {
    // Fenced and demoted first, so two pods never carry the primary label at once.
    const order = Object.entries(decision.labels).sort(([, a], [, b]) =>
      a === POSTGRES_ROLES.primary ? 1 : b === POSTGRES_ROLES.primary ? -1 : 0,
    );
    for (const [name, role] of order) {
      const pod = observed.pods.get(name);
      if (pod?.metadata?.labels?.[POSTGRES_ROLE_LABEL] === role) continue;
      await act(ctx, labelAction(ctx, name, role));
    }
  }

  private async demote(ctx: ActionContext, ns: string, pod: Pod, why: string): Promise<void> {
    const name = pod.metadata?.name ?? "";
    const uid = pod.metadata?.uid;
    await act(ctx, {
      verb: "delete",
      target: podRef(ns, name),
      reason: "PostgresDemoted",
      message: `Postgres ${name} answers as a primary but is not the primary (${why}): deleted so it rejoins as a standby`,
      warning: true,
      label: `demote ${name}`,
      // Only this pod: one made again meanwhile has already restarted.
      run: (client) => client.delete(podRef(ns, name), uid ? { preconditions: { uid } } : {}),
    });
  }

  private async rejoin(ctx: ActionContext, ns: string, pod: Pod, primary: string): Promise<void> {
    const name = pod.metadata?.name ?? "";
    const uid = pod.metadata?.uid;
    await act(ctx, {
      verb: "delete",
      target: podRef(ns, name),
      reason: STANDBY_REJOIN_REASON,
      message: `Postgres ${name} has answered as a standby without streaming from the primary ${primary} for ${STANDBY_REJOIN_AFTER_MS / 1000} s: deleted so it starts again, rewinds (or clones again) onto the primary's timeline and follows it`,
      warning: true,
      label: `rejoin ${name}`,
      run: (client) => client.delete(podRef(ns, name), uid ? { preconditions: { uid } } : {}),
    });
  }

  private async keepSlots(sql: MemberSql, observed: Observed, state: PostgresStatus): Promise<void> {
    const primary = state.currentPrimary;
    const ip = primary ? observed.pods.get(primary)?.status?.podIP : undefined;
    const answering = observed.members.find((m) => m.name === primary)?.sql;
    if (!ip || !answering || answering.inRecovery) return;
    const slots = observed.members.filter((m) => m.name !== primary).map((m) => slotOf(m.name));
    await sql
      .ensureSlots(ip, slots)
      .catch((err: unknown) =>
        this.deps.logger.warn({ error: String(err) }, "could not create replication slots on the primary"),
      );
  }

  /** pg_reload_conf() on each member whose files give a reloadable setting a value it does not run. */
  private async reloadChanged(
    ctx: ActionContext,
    sql: MemberSql,
    observed: Observed,
    uid: string,
    now: Date,
    certificateSerial: string | undefined,
  ): Promise<void> {
    for (const [key, at] of this.reloaded)
      if (now.getTime() - at.getTime() >= RELOAD_INTERVAL_MS) this.reloaded.delete(key);
    const last = new Map<string, Date>();
    for (const m of observed.members) {
      const at = this.reloaded.get(`${uid}/${m.name}`);
      if (at) last.set(m.name, at);
    }
    const due = reloadsDue({
      members: observed.members,
      lastReloadAt: last,
      now,
      intervalMs: RELOAD_INTERVAL_MS,
      certificateSerial,
    });
    for (const reload of due) {
      const ip = observed.pods.get(reload.member)?.status?.podIP;
      if (!ip) continue;
      // Counted whether it works or not: a member that fails is tried again an interval later.
      this.reloaded.set(`${uid}/${reload.member}`, now);
      await act(
        ctx,
        reloadAction(ctx, reload, () => sql.reload(ip)),
      );
    }
  }

  /** A promotion, step by step; resolves to the status to write. */
  private async carryOut(
    ctx: ActionContext,
    sql: MemberSql,
    promotion: Promotion,
    observed: Observed,
    state: PostgresStatus,
    now: Date,
  ): Promise<PostgresStatus> {
    const ns = ctx.platform.metadata?.namespace ?? "";
    const { from, to } = promotion;
    /** The promotion answers the switchover someone asked for (not one of a rolling update). */
    const asked = promotion.planned && promotion.reason === "Switchover";
    const fromIp = observed.pods.get(from)?.status?.podIP;
    const toIp = observed.pods.get(to)?.status?.podIP;
    const back = (message: string, outcome: "Refused" | undefined): PostgresStatus => {
      // A promotion that may have been asked for already stays written ahead: the next pass
      // completes it.
      if (promotion.resumed) {
        this.deps.logger.warn({ from, to }, `resuming the promotion waits: ${message}`);
        return state;
      }
      const next: PostgresStatus = {
        ...state,
        targetPrimary: from,
        ...(state.switchover && asked && outcome
          ? { switchover: { ...state.switchover, outcome, message } }
          : {}),
      };
      delete next.targetReason;
      return next;
    };
    if (!toIp) return back(`${to} has no address`, "Refused");

    if (promotion.planned && fromIp) {
      // No write is lost: the old primary stops taking writes, and the target is promoted only
      // once it has received everything the old primary wrote.
      let until: bigint;
      try {
        until = await sql.stopWrites(fromIp);
      } catch (err) {
        return back(`could not stop writes on ${from}: ${String(err)}`, "Refused");
      }
      const caughtUp = await this.waitCaughtUp(sql, toIp, until);
      if (!caughtUp) {
        await sql.resumeWrites(fromIp).catch(() => undefined);
        return back(`${to} did not receive the primary's last WAL within ${CATCH_UP_MS / 1000}s`, "Refused");
      }
    } else if (fromIp) {
      const again = await sql.observe(fromIp);
      const fromPresent = observed.pods.get(from);
      if (again && !again.inRecovery && fromPresent && !isTerminating(fromPresent)) {
        // The primary may have come back since it was looked at.
        const nodeLost = promotion.reason === "PrimaryNodeLost";
        if (!nodeLost && !promotion.resumed) return back(`${from} answers again`, undefined);
        // Its node is lost but it answers (no kubelet is left to stop it), or the target may be
        // promoting already: it is shut down over SQL, and the standby is promoted only once it
        // no longer answers.
        const why = nodeLost
          ? `still answers on its lost node ${fromPresent.spec?.nodeName ?? "?"}`
          : `answers as the primary while the promotion of ${to} asked for earlier may be under way`;
        const exited = await this.shutDown(ctx, sql, from, fromIp, {
          reason: "PostgresShutDown",
          message: `Postgres ${from} ${why}: shut down over SQL (fast shutdown) before ${to} is promoted, so it never takes writes beside it`,
          warning: true,
        });
        if (!exited) return back(`${from} ${why} and did not shut down`, undefined);
      }
    }

    const fromPod = observed.pods.get(from);
    if (fromPod && !isTerminating(fromPod)) await act(ctx, labelAction(ctx, from, POSTGRES_ROLES.fenced));
    if (fromPod && isTerminating(fromPod) && containersRunning(fromPod)) {
      // Deleted: its fast shutdown is under way; promote once it has handed over its last WAL.
      await this.waitStopped(ns, fromPod);
    }
    if (promotion.planned && fromPod && !isTerminating(fromPod)) {
      // The old primary stops before the target is promoted: its fast shutdown sends the shutdown
      // checkpoint to every standby, so none holds WAL past the new timeline's fork point (one
      // that did could not follow the new primary). Asked over SQL, its port closes as soon as that
      // is done, without waiting for the kubelet to stop the container and report it; the container
      // starts again, finds the new primary and rejoins as its standby (a rolling update replaces
      // its pod afterwards, as it does any standby on an old revision). When that cannot be asked,
      // its pod is deleted instead.
      const stepped =
        fromIp !== undefined &&
        (await this.shutDown(ctx, sql, from, fromIp, {
          reason: "PostgresSteppedDown",
          message: `Postgres switchover: ${from} shut down over SQL (fast shutdown) before ${to} is promoted; it starts again as a standby`,
          warning: false,
        }));
      if (!stepped) {
        await this.demote(ctx, ns, fromPod, "switched over");
        const stopped = await this.waitStopped(ns, fromPod);
        if (!stopped)
          this.deps.logger.warn({ from }, "the old primary did not stop in time; promoting anyway");
      }
    }
    const started = Date.now();
    let timeline = 0;
    const promoted = await act(ctx, {
      verb: "promote",
      target: podRef(ns, to),
      reason: promotion.planned ? "PostgresSwitchover" : "PostgresFailover",
      message: promotion.planned
        ? `Postgres switchover${asked ? "" : ` (${promotion.reason})`}: ${to} promoted, ${from} steps down`
        : `Postgres failover: ${from} lost (${promotion.reason}); ${to} (the most advanced standby) promoted`,
      warning: !promotion.planned,
      failure: { reason: "PostgresPromotionFailed", message: `Postgres: promoting ${to} failed` },
      label: `promote ${to}`,
      run: async () => {
        timeline = await sql.promote(toIp);
        return true;
      },
    });
    if (!promoted.ok) {
      // targetPrimary stays as written ahead: if the promotion went through after all, the next
      // pass finds the target answering as the primary and completes it.
      const message = `promoting ${to} did not confirm (${promoted.error}): looking again`;
      return {
        ...state,
        ...(state.switchover && asked ? { switchover: { ...state.switchover, message } } : {}),
      };
    }
    await act(ctx, labelAction(ctx, to, POSTGRES_ROLES.primary));
    await sql
      .checkpoint(toIp)
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { to, error: String(err) },
          "no checkpoint on the new primary after its promotion",
        ),
      );
    this.deps.metrics.promoted(promotion.reason, (Date.now() - started) / 1000);
    this.deps.logger.info({ from, to, reason: promotion.reason, timeline }, "postgres promoted");
    const members = (state.members ?? []).map((m) =>
      m.name === to
        ? { name: to, role: POSTGRES_ROLES.primary }
        : m.name === from
          ? { ...m, role: POSTGRES_ROLES.fenced }
          : m,
    );
    const next: PostgresStatus = {
      ...state,
      currentPrimary: to,
      targetPrimary: to,
      members,
      lastFailover: { at: now.toISOString(), from, to, reason: promotion.reason },
      ...(isAutomatic(promotion)
        ? { recentFailovers: [...(state.recentFailovers ?? []), now.toISOString()] }
        : {}),
    };
    delete next.targetReason;
    delete next.primaryUnreachableSince;
    delete next.failoverWithheld;
    if (timeline > 0) next.timeline = timeline;
    // A switchover resumed after its first promotion did not confirm is done too.
    if (
      state.switchover &&
      (asked || (state.switchover.outcome === "InProgress" && state.switchover.to === to))
    )
      next.switchover = {
        ...state.switchover,
        to,
        outcome: "Done",
        message: `${to} is the primary; ${from} rejoins as a standby`,
      };
    return next;
  }

  /**
   * A promotion an earlier pass wrote ahead and could not confirm (pg_promote() timed out, or the
   * operator stopped in between) went through: its Event, audit line and metric, as a promotion
   * confirmed at once has them.
   */
  private recordConfirmed(ctx: ActionContext, confirmed: NonNullable<HaDecision["confirmed"]>): void {
    const { from, to, reason } = confirmed;
    this.deps.metrics.confirmed(reason);
    record(ctx, {
      verb: "promote",
      target: podRef(ctx.platform.metadata?.namespace ?? "", to),
      reason: "PostgresPromotionConfirmed",
      message: `Postgres: ${to} answers as the primary; its promotion (${reason}) from ${from} went through though the pass that made it could not confirm it`,
    });
  }

  /**
   * Asks the member `name` at `ip` for a fast shutdown over SQL (recorded as `event`) and waits
   * until it has exited; true once it has.
   */
  private async shutDown(
    ctx: ActionContext,
    sql: MemberSql,
    name: string,
    ip: string,
    event: { reason: string; message: string; warning: boolean },
  ): Promise<boolean> {
    const shut = await act(ctx, {
      verb: "fence",
      target: podRef(ctx.platform.metadata?.namespace ?? "", name),
      ...event,
      label: `shut down ${name}`,
      run: async () => {
        await sql.shutDown(ip);
        return true;
      },
    });
    return shut.ok && (await this.waitExited(sql, ip));
  }

  /**
   * Waits until the server at `ip` has exited (its port closed): only then have its WAL senders
   * handed the standbys everything, the shutdown checkpoint included. Promoted when it merely
   * refused sessions, a standby missed that checkpoint while another received it, and that one
   * could then not follow the new timeline (it had WAL past the fork point).
   */
  private async waitExited(sql: MemberSql, ip: string): Promise<boolean> {
    const deadline = Date.now() + STOP_WAIT_MS;
    while (Date.now() < deadline) {
      if (await sql.exited(ip)) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  /** Waits until the old primary has stopped: its pod gone, replaced, or its containers stopped. */
  private async waitStopped(ns: string, pod: Pod): Promise<boolean> {
    const deadline = Date.now() + STOP_WAIT_MS;
    while (Date.now() < deadline) {
      const now = await this.deps.client
        .get<Pod>(podRef(ns, pod.metadata?.name ?? ""))
        .catch(() => undefined);
      if (!now || now.metadata?.uid !== pod.metadata?.uid) return true;
      if (!containersRunning(now)) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  private async waitCaughtUp(sql: MemberSql, host: string, until: bigint): Promise<boolean> {
    const deadline = Date.now() + CATCH_UP_MS;
    while (Date.now() < deadline) {
      const view = await sql.observe(host);
      const at = view?.receivedLsn ?? view?.replayLsn;
      if (at !== undefined && at >= until) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  /** Writes status.postgres; resolves to the platform to go on with. */
  private async writeState(
    client: KubeClient,
    platform: OntoPlatform,
    state: PostgresStatus,
  ): Promise<OntoPlatform> {
    const clean = JSON.parse(JSON.stringify(state)) as PostgresStatus; // drops undefined fields
    return (await this.status.write(client, platform, (current) => ({ ...current, postgres: clean })))
      .platform;
  }
}

/** Event reason (and audit reason) of a member replaced by a rolling update. */
export const ROLLING_UPDATE_REASON = "PostgresRollingUpdate";
/** Event reason of a standby restarted because it did not stream (decisions.ts, rejoin). */
const STANDBY_REJOIN_REASON = "PostgresStandbyRejoin";

/** Why HA must finish something of its own before a member is replaced, if it must. */
function busyWith(decision: HaDecision, state: PostgresStatus): string | undefined {
  if (decision.demote.length > 0) return `demoting ${decision.demote.join(", ")}`;
  if (decision.withheld) return `a failover is held back: ${decision.withheld}`;
  if (state.primaryUnreachableSince) return `the primary ${state.currentPrimary ?? "?"} does not answer`;
  if (state.targetPrimary && state.targetPrimary !== state.currentPrimary)
    return `promoting ${state.targetPrimary}`;
  if (state.switchover?.outcome === "InProgress") return "a switchover is in progress";
  return undefined;
}

/** When the pod's Postgres container started, while it runs. */
function startedAt(pod: Pod): string | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === COMPONENT)?.state?.running?.startedAt;
}

function containersRunning(pod: Pod): boolean {
  return pod.status?.containerStatuses?.some((c) => c.state?.running !== undefined) ?? false;
}

function podRef(namespace: string, name: string): ObjectRef {
  return { ...POD_REF, namespace, name };
}

function labelAction(ctx: ActionContext, name: string, role: string): ClusterAction {
  const ns = ctx.platform.metadata?.namespace ?? "";
  return {
    verb: role === POSTGRES_ROLES.fenced ? "fence" : "patch",
    target: podRef(ns, name),
    reason: "PostgresRole",
    message: `Postgres ${name} is ${role}`,
    label: `label ${name} ${role}`,
    run: async (client) => {
      await client.mergePatch(podRef(ns, name), { metadata: { labels: { [POSTGRES_ROLE_LABEL]: role } } });
      return true;
    },
  };
}

function reloadAction(ctx: ActionContext, reload: Reload, run: () => Promise<void>): ClusterAction {
  const ns = ctx.platform.metadata?.namespace ?? "";
  const changes = reload.settings.map((s) => `${s.name} ${s.running} -> ${s.file}`).join(", ");
  return {
    verb: "reload",
    target: podRef(ns, reload.member),
    reason: "PostgresConfigReloaded",
    message: `Postgres ${reload.member} reloaded its configuration (no restart): ${changes}`,
    failure: {
      reason: "PostgresConfigReloadFailed",
      message: `Postgres ${reload.member}: reloading its configuration failed (${changes})`,
    },
    label: `reload ${reload.member}`,
    run: async () => {
      await run();
      return true;
    },
  };
}

function switchoverRequest(platform: OntoPlatform): { requestedAt: string; to?: string } | undefined {
  const annotations = platform.metadata.annotations ?? {};
  const requestedAt = annotations[SWITCHOVER_REQUESTED_AT_ANNOTATION];
  if (!requestedAt) return undefined;
  const to = annotations[SWITCHOVER_TO_ANNOTATION];
  return { requestedAt, ...(to ? { to } : {}) };
}
