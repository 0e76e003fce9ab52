// Postgres high availability as pure decisions: from what each member answered (or did not), the
// Kubernetes view of its pod and node, and status.postgres, decide each pod's role label, whether
// to promote a standby (failover, or a switchover someone asked for), and which members to demote.
// No I/O and no clock: the effect layer (ha.ts, sql.ts) observes, calls decide(), and carries the
// decision out through act(). The properties that matter (one primary, never promote a standby
// that is behind a fresher one, nothing when most nodes are down) are checked with fast-check in
// decisions.test.ts.
import {
  POSTGRES_ROLES,
  type PostgresMemberStatus,
  type PostgresRole,
  type PostgresStatus,
} from "../../api/index.js";
import { budgetSpentBy, rateLimitRetryMs, rateLimited, type RecentAction } from "../shared/healing-budget.js";

/** What a member answered over SQL. */
export interface SqlView {
  inRecovery: boolean;
  /** A primary: pg_current_wal_lsn(); a standby: pg_last_wal_receive_lsn() (absent before any WAL arrived). */
  receivedLsn?: bigint | undefined;
  /** A standby: pg_last_wal_replay_lsn(). */
  replayLsn?: bigint | undefined;
  /** A standby: its WAL receiver streams from a primary right now. */
  streaming: boolean;
  /** The WAL timeline the member writes (primary) or replays (standby). */
  timeline: number;
  /** Each reloadable setting its configuration files give (absent: not read). See reloads.ts. */
  fileSettings?: FileSetting[] | undefined;
  /** The serial of the certificate it serves (upper-case hex); absent: it serves no TLS. */
  certificateSerial?: string | undefined;
}

/** One setting of POSTGRES.reloadableSettings on one member: its files' value and the value it runs. */
export interface FileSetting {
  name: string;
  /** pg_file_settings.setting of the entry that applies (the files as they are now, e.g. "5120MB"). */
  file: string;
  /** pg_settings.setting: the value the server runs, in `unit`. */
  running: string;
  /** pg_settings.unit ("MB", "8kB", "s"); absent for a setting without one. */
  unit?: string | undefined;
  /** pg_settings.source: "command line" when a server flag sets it (a flag outranks every file). */
  source: string;
  /** current_setting(): the running value as Postgres shows it, for messages. */
  shown: string;
}

export interface MemberView {
  /** Pod name, e.g. postgres-1. */
  name: string;
  pod: "present" | "terminating" | "absent";
  /** The pod's node is Ready (false also when the pod has no node). */
  nodeReady: boolean;
  /** The pod's role label now. */
  label?: string | undefined;
  /** Absent: the member did not answer. */
  sql?: SqlView | undefined;
  /** When its Postgres container started (absent: not running). */
  startedAt?: string | undefined;
}

export interface HaSettings {
  /** spec.infrastructure.postgres.failoverDelaySeconds, in ms. */
  failoverDelayMs: number;
  maxLagBytes: number;
  /** No automatic failover sooner than this after the last promotion (no failover storm). */
  cooldownMs: number;
  /** spec.selfHealing.enabled: automatic failover is a healing action. */
  automatic: boolean;
  /** spec.selfHealing.maxActionsPerHour: the budget automatic failovers share with the healer. */
  maxActionsPerHour: number;
}

export interface SwitchoverRequest {
  requestedAt: string;
  to?: string | undefined;
}

export interface HaInput {
  /** Every ordinal the StatefulSet asks for, in order (absent pods included). */
  members: MemberView[];
  state: PostgresStatus | undefined;
  now: Date;
  settings: HaSettings;
  /** The nodes the platform's pods may run on. */
  nodes: { ready: number; total: number };
  switchover?: SwitchoverRequest | undefined;
  /** The healer's actions of the last hour (status.healing.recentActions). */
  healerActions?: readonly RecentAction[] | undefined;
}

const PROMOTION_REASONS = [
  "PrimaryPodGone",
  "PrimaryNodeLost",
  "PrimaryNotAnswering",
  "PrimaryInRecovery",
  "Switchover",
  // A planned switchover of the rolling update (rolling.ts): the primary is replaced last.
  "RollingUpdate",
] as const;
export type PromotionReason = (typeof PROMOTION_REASONS)[number];

function isPromotionReason(reason: string): reason is PromotionReason {
  return (PROMOTION_REASONS as readonly string[]).includes(reason);
}

export interface Promotion {
  from: string;
  to: string;
  reason: PromotionReason;
  /** A switchover: the old primary is made read-only and the target catches up before it is promoted. */
  planned: boolean;
  /**
   * An earlier pass wrote this promotion ahead and may have asked the target to promote already
   * (pg_promote() that timed out, or an operator stopped in between). A promotion asked for cannot
   * be called back, so it is completed, never undone: the old primary steps down even when it
   * answers again.
   */
  resumed?: boolean;
}

export interface HaDecision {
  /** status.postgres to write (the effect layer adds the outcome of a promotion). */
  state: PostgresStatus;
  /** The role label each present pod should carry. */
  labels: Record<string, PostgresRole>;
  promote?: Promotion | undefined;
  /** Pods to delete: they answer as a primary but are not the primary (they rejoin as standbys). */
  demote: string[];
  /**
   * Pods to delete: standbys that answered without streaming from a healthy primary for
   * STANDBY_REJOIN_AFTER_MS. One that received WAL past a promotion's fork point never follows
   * the new timeline by itself; started again, it rewinds (or clones again) and follows.
   */
  rejoin: string[];
  /** A failover is due but held back, and why. */
  withheld?: string | undefined;
  /** The switchover request was refused, and why. */
  refused?: string | undefined;
  /**
   * A promotion written ahead on an earlier pass whose target now answers as the primary: it went
   * through though that pass could not confirm it (recorded in lastFailover; the effect layer
   * records its Event and metric).
   */
  confirmed?: { from: string; to: string; reason: string } | undefined;
}

/** The reasons of automatic failovers (recorded in targetReason and lastFailover). */
const AUTOMATIC_REASONS: readonly string[] = [
  "PrimaryPodGone",
  "PrimaryNodeLost",
  "PrimaryNotAnswering",
  "PrimaryInRecovery",
] satisfies PromotionReason[];

/** A failover the operator decides by itself: it counts against the healing budget. */
export function isAutomatic(promotion: Pick<Promotion, "planned" | "reason">): boolean {
  return !promotion.planned && AUTOMATIC_REASONS.includes(promotion.reason);
}

const LSN = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** A WAL position as Postgres prints it ("16/B374D848") as a number. */
export function parseLsn(text: string | null | undefined): bigint | undefined {
  const m = LSN.exec(text ?? "");
  if (!m?.[1] || !m[2]) return undefined;
  return (BigInt(`0x${m[1]}`) << 32n) | BigInt(`0x${m[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * How long a switchover request waits for the member it names to answer when that member runs on
 * a Ready node but missed a look (a connection that timed out on a loaded node), before it is
 * refused with "does not answer".
 */
export const SWITCHOVER_TARGET_WAIT_MS = 15_000;

/**
 * How long a standby may answer without streaming from a healthy primary before its pod is
 * restarted. A standby that follows a promotion streams again within seconds (its WAL receiver
 * retries every 5 s); one that cannot follow (WAL past the fork point) never does.
 */
export const STANDBY_REJOIN_AFTER_MS = 60_000;

const writable = (m: MemberView): boolean => m.pod === "present" && m.sql !== undefined && !m.sql.inRecovery;

/** Why the member named primary cannot take writes, or undefined while it can. */
function primaryTrouble(m: MemberView | undefined): PromotionReason | undefined {
  if (!m || m.pod !== "present") return "PrimaryPodGone";
  // The operator labels every pod it sees; one without a role label that does not answer is a pod
  // the StatefulSet made since: the primary's pod was deleted and replaced between two looks.
  if (!m.sql && m.label === undefined) return "PrimaryPodGone";
  // Its node lost: the kubelet that would stop or replace the pod is gone, and the healer frees the
  // pods stranded there after nodeLossGraceSeconds. It is failed over from at once; one that still
  // answers is first shut down over SQL by the effect layer (ha.ts), so it never serves beside
  // the standby promoted.
  if (!m.nodeReady) return "PrimaryNodeLost";
  if (!m.sql) return "PrimaryNotAnswering";
  if (m.sql.inRecovery) return "PrimaryInRecovery";
  return undefined;
}

/**
 * A pod gone (or deleted) or its node lost is certain at once; a member that does not answer may
 * be slow. The effect layer waits for a deleted primary's fast shutdown before it promotes: that
 * sends every WAL record, the shutdown checkpoint included, to the standbys, and a standby promoted
 * before it would leave the others with WAL past its fork point.
 */
const immediate = (reason: PromotionReason): boolean =>
  reason === "PrimaryPodGone" || reason === "PrimaryNodeLost";

/** Standbys that could be promoted: present, on a Ready node, answering, in recovery. */
function promotable(members: readonly MemberView[], except: string): MemberView[] {
  return members.filter(
    (m) => m.name !== except && m.pod === "present" && m.nodeReady && m.sql?.inRecovery === true,
  );
}

/** The most advanced standby by received WAL (ties: the lower ordinal, i.e. the first listed). */
export function freshest(candidates: readonly MemberView[]): MemberView | undefined {
  let best: MemberView | undefined;
  for (const m of candidates) {
    const lsn = m.sql?.receivedLsn ?? m.sql?.replayLsn;
    if (lsn === undefined) continue;
    const bestLsn = best?.sql?.receivedLsn ?? best?.sql?.replayLsn;
    if (bestLsn === undefined || lsn > bestLsn) best = m;
  }
  return best;
}

function lagOf(m: MemberView, primaryLsn: bigint | undefined): bigint | undefined {
  const at = m.sql?.replayLsn ?? m.sql?.receivedLsn;
  if (primaryLsn === undefined || at === undefined) return undefined;
  return primaryLsn > at ? primaryLsn - at : 0n;
}

/** The role label of a member, given who the primary is. */
function roleOf(
  m: MemberView,
  primary: string,
  primaryLsn: bigint | undefined,
  maxLag: number,
): PostgresRole {
  if (m.sql === undefined) {
    // The primary not answering for a moment keeps its label until a failover is decided: a blip
    // is not a reason to stop every write. A fenced member stays fenced until it answers as a standby.
    if (m.name === primary && m.label === POSTGRES_ROLES.primary) return POSTGRES_ROLES.primary;
    if (m.label === POSTGRES_ROLES.fenced) return POSTGRES_ROLES.fenced;
    return POSTGRES_ROLES.unknown;
  }
  if (!m.sql.inRecovery) return m.name === primary ? POSTGRES_ROLES.primary : POSTGRES_ROLES.fenced;
  if (!m.sql.streaming) return POSTGRES_ROLES.lagging;
  const lag = lagOf(m, primaryLsn);
  return lag !== undefined && lag > BigInt(maxLag) ? POSTGRES_ROLES.lagging : POSTGRES_ROLES.standby;
}

/**
 * Whom `input` names as the primary: status; or, at the first look (a new platform, or one
 * re-created on retained volumes, whose status is empty), the member that answers as one; with
 * several (a primary failed over from while it was stopped), the newest: the highest timeline,
 * then the most WAL. Until a member answers as the primary none is named, so nothing is failed
 * over from: the members decide among themselves at start (the former primary goes on as one).
 */
function namedPrimary(input: HaInput): string | undefined {
  const current = input.state?.currentPrimary;
  if (current) return current; // scaled away or renamed: trouble is PrimaryPodGone
  let newest: MemberView | undefined;
  for (const m of input.members.filter(writable)) {
    const [a, b] = [m.sql, newest?.sql];
    if (!a) continue;
    if (
      !b ||
      a.timeline > b.timeline ||
      (a.timeline === b.timeline && (a.receivedLsn ?? 0n) > (b.receivedLsn ?? 0n))
    )
      newest = m;
  }
  return newest?.name;
}

function memberStatus(
  m: MemberView,
  role: PostgresRole,
  primaryLsn: bigint | undefined,
  notStreamingSince: string | undefined,
): PostgresMemberStatus {
  const lag = m.sql?.inRecovery ? lagOf(m, primaryLsn) : undefined;
  const lsn = m.sql?.receivedLsn;
  return {
    name: m.name,
    role,
    ...(lag !== undefined ? { lagBytes: Math.min(Number(lag), Number.MAX_SAFE_INTEGER) } : {}),
    ...(lsn !== undefined ? { receivedLsn: formatLsn(lsn) } : {}),
    ...(notStreamingSince !== undefined ? { notStreamingSince } : {}),
  };
}

/**
 * Since when `m` has answered as a standby without streaming, or undefined while it streams, is
 * the primary or has no pod. A look it missed keeps the clock (on a loaded node a look times out
 * now and then, and a clock started again at each would never run out); a container started since
 * the clock began (a restart, a clone that took minutes) starts it again at the first answer.
 */
function notStreamingSince(
  m: MemberView,
  primary: string,
  previous: PostgresStatus,
  now: Date,
): string | undefined {
  if (m.name === primary || m.pod !== "present") return undefined;
  const kept = previous.members?.find((p) => p.name === m.name)?.notStreamingSince;
  if (m.sql === undefined) return kept;
  if (!m.sql.inRecovery || m.sql.streaming) return undefined;
  const restarted =
    kept !== undefined && m.startedAt !== undefined && Date.parse(m.startedAt) > Date.parse(kept);
  return kept === undefined || restarted ? now.toISOString() : kept;
}

/** Why `to` cannot be switched over to now, or undefined. */
function switchoverProblem(
  input: HaInput,
  primary: string,
  to: MemberView | undefined,
  name: string,
): string | undefined {
  const names = input.members.map((m) => m.name).join(", ");
  if (!to || to.pod === "absent") return `${name} is not a Postgres member (members: ${names})`;
  if (to.name === primary) return `${name} is already the primary`;
  if (to.pod !== "present" || !to.nodeReady) return `${name} is not running on a Ready node`;
  if (!to.sql) return `${name} does not answer`;
  if (!to.sql.inRecovery) return `${name} is not a standby`;
  if (!to.sql.streaming) return `${name} is not streaming from the primary`;
  return undefined;
}

export function decide(input: HaInput): HaDecision {
  const { members, settings, now } = input;
  const byName = new Map(members.map((m) => [m.name, m]));
  let primary = namedPrimary(input) ?? "";
  const previous = input.state ?? {};
  const demote: string[] = [];
  let promote: Promotion | undefined;
  let withheld: string | undefined;
  let refused: string | undefined;
  let switchover = previous.switchover;
  const state: PostgresStatus = { ...previous };
  let confirmed: HaDecision["confirmed"];
  const failovers = budgetSpentBy([], previous.recentFailovers, now).map((a) => a.at);
  if (failovers.length > 0) state.recentFailovers = failovers;
  else delete state.recentFailovers;

  // A promotion in flight (written ahead, then interrupted): the target answering as a primary
  // completes it; otherwise the named primary stays and the target is forgotten.
  const target = previous.targetPrimary;
  const targetReason =
    previous.targetReason ?? (switchover?.outcome === "InProgress" ? "Switchover" : "Unknown");
  /** A promotion written ahead whose target is still a standby that could be promoted. */
  let unfinished: MemberView | undefined;
  if (target && target !== primary) {
    const t = byName.get(target);
    if (t && writable(t)) {
      confirmed = { from: primary, to: target, reason: targetReason };
      state.lastFailover = { at: now.toISOString(), from: primary, to: target, reason: targetReason };
      if (AUTOMATIC_REASONS.includes(targetReason)) state.recentFailovers = [...failovers, now.toISOString()];
      primary = target;
      if (switchover?.outcome === "InProgress")
        switchover = { ...switchover, outcome: "Done", message: `${target} is the primary` };
    } else if (t && promotable([t], primary).length === 1) {
      unfinished = t;
    }
  }

  const nodesMostlyDown =
    input.nodes.total > 0 && input.nodes.total - input.nodes.ready > input.nodes.total / 2;
  const current = byName.get(primary);
  // At the first look the member named answered as the primary just now: it is recorded, and
  // failed over from (if it must be) only from the next pass on.
  const firstLook = !previous.currentPrimary;
  const trouble = firstLook ? undefined : primaryTrouble(current);
  /** A failover is due this pass (whether or not it is made). */
  let due = false;

  if (trouble === undefined) {
    delete state.primaryUnreachableSince;
  } else {
    const since = previous.primaryUnreachableSince ?? now.toISOString();
    state.primaryUnreachableSince = since;
    due = immediate(trouble) || now.getTime() - Date.parse(since) >= settings.failoverDelayMs;
  }
  if (unfinished && !nodesMostlyDown) {
    // A promotion written ahead did not confirm (a connection that timed out, or the operator
    // stopped in between) and its target is still a standby: the target may be promoting right
    // now, so it is promoted again, not another standby, and the primary named does not go on
    // beside it even when it answers again (it was taken for the primary and written to).
    promote = {
      from: primary,
      to: unfinished.name,
      reason: isPromotionReason(targetReason) ? targetReason : "Switchover",
      planned: false,
      resumed: true,
    };
  } else if (trouble !== undefined) {
    const last = previous.lastFailover ? Date.parse(previous.lastFailover.at) : Number.NaN;
    const cooling = Number.isFinite(last) && now.getTime() - last < settings.cooldownMs;
    if (due) {
      const candidate = freshest(promotable(members, primary));
      const budget = budgetSpentBy(input.healerActions, failovers, now);
      if (!settings.automatic) withheld = "spec.selfHealing.enabled is false: automatic failover is off";
      else if (nodesMostlyDown)
        withheld = `${input.nodes.total - input.nodes.ready} of ${input.nodes.total} nodes are NotReady: no failover while most nodes are down`;
      else if (cooling)
        withheld = `the last promotion was ${Math.round((now.getTime() - last) / 1000)}s ago: no failover within ${settings.cooldownMs / 1000}s of another`;
      else if (rateLimited(budget, settings.maxActionsPerHour))
        withheld = `the hourly budget of ${settings.maxActionsPerHour} healing actions is spent (${budget.length - failovers.length} by the healer, ${failovers.length} failovers in the last hour): no failover until ${new Date(now.getTime() + rateLimitRetryMs(budget, now)).toISOString()}`;
      else if (!candidate) withheld = `the primary ${primary} is lost (${trouble}) and no standby answers`;
      else promote = { from: primary, to: candidate.name, reason: trouble, planned: false };
    }
  }

  // A switchover asked for (each request answered once). While the primary has missed a look but
  // no failover is due yet (a connection that timed out on a loaded node), the request waits for
  // a later pass: the primary answers again and the switchover goes ahead, or the failover is
  // due and the request is refused with the reason.
  // The same for the member asked for: running on a Ready node but silent at this look, the
  // request waits up to SWITCHOVER_TARGET_WAIT_MS for it to answer before it is refused.
  const request = input.switchover;
  const primaryBlip = trouble === "PrimaryNotAnswering" && !due && !promote;
  const asked = request?.to !== undefined ? byName.get(request.to) : undefined;
  const targetBlip =
    primary !== "" &&
    trouble === undefined &&
    !promote &&
    asked !== undefined &&
    asked.pod === "present" &&
    asked.nodeReady &&
    asked.sql === undefined &&
    now.getTime() - Date.parse(request?.requestedAt ?? "") < SWITCHOVER_TARGET_WAIT_MS;
  if (request && request.requestedAt !== previous.switchover?.requestedAt && !primaryBlip && !targetBlip) {
    let to: MemberView | undefined;
    if (primary === "") {
      refused = "no member answers as the primary yet: a switchover needs a running primary";
    } else if (promote || trouble !== undefined) {
      refused = `the primary ${primary} is not healthy (${trouble ?? "failing over"}): a switchover needs a running primary`;
    } else if (request.to !== undefined) {
      to = byName.get(request.to);
      refused = switchoverProblem(input, primary, to, request.to);
    } else {
      const streaming = members.filter((m) => m.name !== primary && m.sql?.inRecovery && m.sql.streaming);
      to = freshest(streaming.filter((m) => m.pod === "present" && m.nodeReady));
      if (!to) refused = "no standby is streaming from the primary";
    }
    if (!refused && to) promote = { from: primary, to: to.name, reason: "Switchover", planned: true };
    switchover = {
      requestedAt: request.requestedAt,
      ...(request.to !== undefined ? { to: request.to } : to ? { to: to.name } : {}),
      outcome: refused ? "Refused" : "InProgress",
      message: refused ?? `switching over from ${primary} to ${to?.name ?? "?"}`,
    };
  }
  // A request in progress is always answered: the primary lost meanwhile and another member
  // promoted, or the target forgotten while the primary goes on.
  if (switchover?.outcome === "InProgress" && switchover.requestedAt === previous.switchover?.requestedAt) {
    if (promote && !promote.planned && promote.to !== switchover.to)
      switchover = {
        ...switchover,
        outcome: "Refused",
        message: `the primary ${primary} was lost during the switchover (${promote.reason}): failing over to ${promote.to}`,
      };
    else if (!promote && !unfinished && trouble === undefined && target !== undefined && target !== primary)
      switchover = {
        ...switchover,
        outcome: "Refused",
        message: `promoting ${target} did not confirm: ${primary} stays the primary`,
      };
  }
  if (switchover) state.switchover = switchover;

  const primaryLsn = current && writable(current) ? current.sql?.receivedLsn : undefined;
  // A standby is restarted for not streaming only from a primary that takes writes, with no
  // promotion in flight: during a failover every standby stops streaming for a while.
  const steady =
    settings.automatic &&
    current !== undefined &&
    writable(current) &&
    trouble === undefined &&
    !promote &&
    !unfinished &&
    !nodesMostlyDown &&
    (target === undefined || target === primary);
  const labels: Record<string, PostgresRole> = {};
  const statuses: PostgresMemberStatus[] = [];
  const rejoin: string[] = [];
  for (const m of members) {
    let role = roleOf(m, primary, primaryLsn, settings.maxLagBytes);
    // While promoting, the old primary is fenced before the new one is named.
    if (promote && m.name === promote.from && role === POSTGRES_ROLES.primary) role = POSTGRES_ROLES.fenced;
    if (m.pod === "present") labels[m.name] = role;
    let since = notStreamingSince(m, primary, previous, now);
    if (
      since !== undefined &&
      m.sql?.inRecovery === true &&
      !m.sql.streaming &&
      steady &&
      m.nodeReady &&
      now.getTime() - Date.parse(since) >= STANDBY_REJOIN_AFTER_MS
    ) {
      rejoin.push(m.name);
      // The clock starts again: the pod answers again only once it is back.
      since = now.toISOString();
    }
    statuses.push(memberStatus(m, role, primaryLsn, since));
    if (m.name !== primary && writable(m) && !nodesMostlyDown) demote.push(m.name);
  }

  if (primary) {
    state.currentPrimary = primary;
    state.targetPrimary = promote?.to ?? primary;
  }
  if (promote) state.targetReason = promote.reason;
  else if (state.targetPrimary === undefined || state.targetPrimary === state.currentPrimary)
    delete state.targetReason;
  if (current && writable(current) && current.sql) state.timeline = current.sql.timeline;
  state.members = statuses;
  return { state, labels, promote, demote, rejoin, withheld, refused, confirmed };
}
