import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { POSTGRES_ROLES } from "../../api/index.js";
import {
  STANDBY_REJOIN_AFTER_MS,
  SWITCHOVER_TARGET_WAIT_MS,
  decide,
  formatLsn,
  parseLsn,
  type HaInput,
  type MemberView,
} from "./decisions.js";

/** A switchover postgres-0 -> postgres-1 in progress, as status records it. */
function switchoverInProgress() {
  const switchover = {
    requestedAt: "2026-12-01T11:59:00Z",
    to: "postgres-1",
    outcome: "InProgress",
    message: "",
  };
  return { switchover, state: { currentPrimary: "postgres-0", targetPrimary: "postgres-1", switchover } };
}

const NOW = new Date("2026-12-01T12:00:00Z");
const SETTINGS = {
  failoverDelayMs: 5_000,
  maxLagBytes: 1024,
  cooldownMs: 30_000,
  automatic: true,
  maxActionsPerHour: 10,
};

const sqlArb = fc.option(
  fc.record({
    inRecovery: fc.boolean(),
    receivedLsn: fc.option(fc.bigInt({ min: 0n, max: 1n << 40n }), { nil: undefined }),
    replayLsn: fc.option(fc.bigInt({ min: 0n, max: 1n << 40n }), { nil: undefined }),
    streaming: fc.boolean(),
    timeline: fc.integer({ min: 1, max: 9 }),
  }),
  { nil: undefined },
);

const memberArb = (i: number) =>
  fc.record({
    name: fc.constant(`postgres-${i}`),
    pod: fc.constantFrom<MemberView["pod"]>("present", "present", "present", "terminating", "absent"),
    nodeReady: fc.boolean(),
    label: fc.option(fc.constantFrom(...Object.values(POSTGRES_ROLES)), { nil: undefined }),
    sql: sqlArb,
  });

const inputArb: fc.Arbitrary<HaInput> = fc
  .integer({ min: 1, max: 5 })
  .chain((n) =>
    fc.record({
      members: fc.tuple(...Array.from({ length: n }, (_, i) => memberArb(i))),
      primary: fc.integer({ min: 0, max: n - 1 }),
      target: fc.integer({ min: 0, max: n - 1 }),
      unreachableForMs: fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined }),
      lastFailoverAgoMs: fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
      nodesTotal: fc.integer({ min: 1, max: 7 }),
      nodesDown: fc.integer({ min: 0, max: 7 }),
      switchoverTo: fc.option(fc.integer({ min: 0, max: n + 1 }), { nil: undefined }),
    }),
  )
  .map((g) => ({
    members: g.members,
    state: {
      currentPrimary: `postgres-${g.primary}`,
      targetPrimary: `postgres-${g.target}`,
      ...(g.unreachableForMs !== undefined
        ? { primaryUnreachableSince: new Date(NOW.getTime() - g.unreachableForMs).toISOString() }
        : {}),
      ...(g.lastFailoverAgoMs !== undefined
        ? {
            lastFailover: {
              at: new Date(NOW.getTime() - g.lastFailoverAgoMs).toISOString(),
              from: "postgres-0",
              to: "postgres-1",
              reason: "PrimaryPodGone",
            },
          }
        : {}),
    },
    now: NOW,
    settings: SETTINGS,
    nodes: { total: g.nodesTotal, ready: Math.max(0, g.nodesTotal - g.nodesDown) },
    ...(g.switchoverTo !== undefined
      ? { switchover: { requestedAt: "2026-12-01T11:59:59Z", to: `postgres-${g.switchoverTo}` } }
      : {}),
  }));

const lsnOf = (m: MemberView | undefined) => m?.sql?.receivedLsn ?? m?.sql?.replayLsn;

describe("Postgres HA decisions (properties)", () => {
  it("label at most one pod primary, and never one that answers as a standby or one being replaced", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decide(input);
        const primaries = Object.entries(d.labels).filter(([, r]) => r === POSTGRES_ROLES.primary);
        expect(primaries.length).toBeLessThanOrEqual(1);
        for (const [name] of primaries) {
          expect(name).toBe(d.state.currentPrimary);
          expect(input.members.find((m) => m.name === name)?.sql?.inRecovery).not.toBe(true);
          expect(d.promote?.from).not.toBe(name);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("promote only a present standby on a Ready node, and never one behind a fresher candidate", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decide(input);
        if (!d.promote) return;
        const to = input.members.find((m) => m.name === d.promote?.to);
        expect(to?.pod).toBe("present");
        expect(to?.nodeReady).toBe(true);
        expect(to?.sql?.inRecovery).toBe(true);
        expect(d.promote.to).not.toBe(d.promote.from);
        // A switchover goes where it is asked to; a promotion written ahead is completed.
        if (d.promote.planned || d.promote.resumed) return;
        const mine = lsnOf(to);
        for (const other of input.members) {
          if (other.name === d.promote.from || other.pod !== "present" || !other.nodeReady) continue;
          if (!other.sql?.inRecovery) continue;
          const theirs = lsnOf(other);
          if (theirs !== undefined) expect(mine !== undefined && mine >= theirs).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("take no automatic action while most nodes are NotReady", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const down = input.nodes.total - input.nodes.ready;
        fc.pre(down > input.nodes.total / 2);
        const d = decide(input);
        expect(d.demote).toEqual([]);
        if (d.promote) expect(d.promote.planned).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("never fail over while the primary answers as a primary, nor within the cooldown", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decide(input);
        if (!d.promote || d.promote.planned) return;
        if (d.promote.resumed) {
          // A promotion an earlier pass wrote ahead may be under way: it is completed, whatever the
          // primary answers now.
          expect(d.promote.to).toBe(input.state?.targetPrimary);
          return;
        }
        const from = input.members.find((m) => m.name === d.promote?.from);
        expect(from?.pod === "present" && from.nodeReady && from.sql && !from.sql.inRecovery).toBeFalsy();
        const last = input.state?.lastFailover;
        if (last) expect(NOW.getTime() - Date.parse(last.at)).toBeGreaterThanOrEqual(SETTINGS.cooldownMs);
      }),
      { numRuns: 2000 },
    );
  });

  it("demote every other member that answers as a primary", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(input.nodes.total - input.nodes.ready <= input.nodes.total / 2);
        const d = decide(input);
        for (const m of input.members) {
          const writer = m.pod === "present" && m.sql && !m.sql.inRecovery;
          if (writer && m.name !== d.state.currentPrimary) expect(d.demote).toContain(m.name);
          if (writer && m.name !== d.state.currentPrimary)
            expect(d.labels[m.name]).toBe(POSTGRES_ROLES.fenced);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("restart only a standby that answers without streaming, never the primary, and only while no promotion is in flight", () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: 0, max: 3 * STANDBY_REJOIN_AFTER_MS }), (input, stuckMs) => {
        const since = new Date(NOW.getTime() - stuckMs).toISOString();
        const state = {
          ...input.state,
          members: input.members.map((m) => ({ name: m.name, role: "lagging", notStreamingSince: since })),
        };
        const d = decide({ ...input, state });
        for (const name of d.rejoin) {
          const m = input.members.find((x) => x.name === name);
          expect(m?.pod).toBe("present");
          expect(m?.nodeReady).toBe(true);
          expect(m?.sql?.inRecovery).toBe(true);
          expect(m?.sql?.streaming).toBe(false);
          expect(name).not.toBe(d.state.currentPrimary);
          expect(d.promote).toBeUndefined();
          expect(stuckMs).toBeGreaterThanOrEqual(STANDBY_REJOIN_AFTER_MS);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("with no primary recorded (a new or re-created platform), never fail over, and name only a member answering as the primary", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decide({ ...input, state: undefined });
        // A switchover someone asked for still goes ahead when a primary answers.
        if (d.promote) expect(d.promote.planned).toBe(true);
        const named = input.members.find((m) => m.name === d.state.currentPrimary);
        if (d.state.currentPrimary !== undefined) expect(named?.sql?.inRecovery).toBe(false);
        else
          expect(input.members.some((m) => m.pod === "present" && m.sql?.inRecovery === false)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

const member = (
  i: number,
  sql: Partial<NonNullable<MemberView["sql"]>> | undefined,
  extra: Partial<MemberView> = {},
): MemberView => ({
  name: `postgres-${i}`,
  pod: "present",
  nodeReady: true,
  ...(sql ? { sql: { inRecovery: true, streaming: true, timeline: 1, ...sql } } : {}),
  ...extra,
});

const base = (members: MemberView[], extra: Partial<HaInput> = {}): HaInput => ({
  members,
  state: { currentPrimary: "postgres-0", targetPrimary: "postgres-0" },
  now: NOW,
  settings: SETTINGS,
  nodes: { ready: 3, total: 3 },
  ...extra,
});

describe("Postgres HA decisions (cases)", () => {
  it("parse and print WAL positions", () => {
    expect(parseLsn("16/B374D848")).toBe((0x16n << 32n) | 0xb374d848n);
    expect(formatLsn(parseLsn("16/B374D848") ?? 0n)).toBe("16/B374D848");
    expect(parseLsn(null)).toBeUndefined();
  });

  it("label a healthy set: the primary, a streaming standby, one behind the lag limit", () => {
    const d = decide(
      base([
        member(0, { inRecovery: false, receivedLsn: 10_000n }),
        member(1, { receivedLsn: 10_000n, replayLsn: 9_500n }),
        member(2, { receivedLsn: 5_000n, replayLsn: 5_000n }),
      ]),
    );
    expect(d.labels).toEqual({ "postgres-0": "primary", "postgres-1": "standby", "postgres-2": "lagging" });
    expect(d.promote).toBeUndefined();
    expect(d.state.members?.map((m) => m.lagBytes)).toEqual([undefined, 500, 5000]);
  });

  it("restart a standby that answers without streaming from a healthy primary for a minute, once per minute", () => {
    const members = [
      member(0, { inRecovery: false, receivedLsn: 10_000n, timeline: 4 }),
      member(1, { receivedLsn: 10_000n, replayLsn: 10_000n, timeline: 4 }),
      // Received WAL past the fork point of the promotion to timeline 4: it never streams again.
      member(2, { receivedLsn: 9_000n, streaming: false, timeline: 3 }),
    ];
    const first = decide(base(members));
    expect(first.rejoin).toEqual([]);
    expect(first.state.members?.[2]?.notStreamingSince).toBe(NOW.toISOString());
    expect(first.state.members?.[1]?.notStreamingSince).toBeUndefined();
    const at = (ms: number) => new Date(NOW.getTime() + ms);
    const before = decide(base(members, { state: first.state, now: at(STANDBY_REJOIN_AFTER_MS - 1) }));
    expect(before.rejoin).toEqual([]);
    expect(before.state.members?.[2]?.notStreamingSince).toBe(NOW.toISOString());
    const due = decide(base(members, { state: before.state, now: at(STANDBY_REJOIN_AFTER_MS) }));
    expect(due.rejoin).toEqual(["postgres-2"]);
    expect(due.labels["postgres-2"]).toBe("lagging");
    // The clock starts again from the restart, so the next pass does not restart it again.
    expect(due.state.members?.[2]?.notStreamingSince).toBe(at(STANDBY_REJOIN_AFTER_MS).toISOString());
    const next = decide(base(members, { state: due.state, now: at(STANDBY_REJOIN_AFTER_MS + 1_000) }));
    expect(next.rejoin).toEqual([]);
    // Streaming again clears the clock.
    const back = decide(
      base([members[0]!, members[1]!, member(2, { receivedLsn: 10_000n, timeline: 4 })], {
        state: next.state,
        now: at(STANDBY_REJOIN_AFTER_MS + 2_000),
      }),
    );
    expect(back.state.members?.[2]?.notStreamingSince).toBeUndefined();
  });

  it("keep a stuck standby's clock over a missed look, and start it again after its container restarted", () => {
    const primary = member(0, { inRecovery: false, receivedLsn: 10_000n });
    const streaming = member(1, { receivedLsn: 10_000n });
    const startedAt = "2026-12-01T11:00:00Z";
    const stuck = member(2, { receivedLsn: 9_000n, streaming: false }, { startedAt });
    const at = (ms: number) => new Date(NOW.getTime() + ms);
    const first = decide(base([primary, streaming, stuck]));
    // A look that timed out keeps the clock: it still runs out a minute after the first answer.
    const missed = decide(
      base([primary, streaming, member(2, undefined, { startedAt })], {
        state: first.state,
        now: at(30_000),
      }),
    );
    expect(missed.state.members?.[2]?.notStreamingSince).toBe(NOW.toISOString());
    const due = decide(
      base([primary, streaming, stuck], { state: missed.state, now: at(STANDBY_REJOIN_AFTER_MS) }),
    );
    expect(due.rejoin).toEqual(["postgres-2"]);
    // Its container started again (a clone of minutes while it did not answer): the first answer
    // after that starts the clock again instead of finding it run out.
    const silent = decide(
      base([primary, streaming, member(2, undefined)], {
        state: due.state,
        now: at(5 * STANDBY_REJOIN_AFTER_MS),
      }),
    );
    const restarted = member(
      2,
      { receivedLsn: 9_000n, streaming: false },
      { startedAt: at(2 * STANDBY_REJOIN_AFTER_MS).toISOString() },
    );
    const answers = decide(
      base([primary, streaming, restarted], { state: silent.state, now: at(6 * STANDBY_REJOIN_AFTER_MS) }),
    );
    expect(answers.rejoin).toEqual([]);
    expect(answers.state.members?.[2]?.notStreamingSince).toBe(at(6 * STANDBY_REJOIN_AFTER_MS).toISOString());
  });

  it("keep a standby that does not stream while the primary does not answer or self-healing is off", () => {
    const stuck = member(2, { receivedLsn: 9_000n, streaming: false });
    const state = {
      currentPrimary: "postgres-0",
      targetPrimary: "postgres-0",
      members: [{ name: "postgres-2", role: "lagging", notStreamingSince: "2026-12-01T11:50:00Z" }],
    };
    const primaryDown = decide(
      base([member(0, undefined, { label: "primary" }), member(1, { receivedLsn: 1n }), stuck], { state }),
    );
    expect(primaryDown.rejoin).toEqual([]);
    // The clock is kept: the standby is restarted once the primary answers again.
    expect(primaryDown.state.members?.[2]?.notStreamingSince).toBe("2026-12-01T11:50:00Z");
    const healthy = [
      member(0, { inRecovery: false, receivedLsn: 10_000n }),
      member(1, { receivedLsn: 1n }),
      stuck,
    ];
    expect(decide(base(healthy, { state, settings: { ...SETTINGS, automatic: false } })).rejoin).toEqual([]);
    expect(decide(base(healthy, { state })).rejoin).toEqual(["postgres-2"]);
  });

  it("promote the standby with the most WAL at once when the primary's pod is gone", () => {
    const d = decide(
      base([
        member(0, undefined, { pod: "absent" }),
        member(1, { receivedLsn: 900n, streaming: false }),
        member(2, { receivedLsn: 1000n, streaming: false }),
      ]),
    );
    expect(d.promote).toEqual({
      from: "postgres-0",
      to: "postgres-2",
      reason: "PrimaryPodGone",
      planned: false,
    });
    expect(d.state.targetPrimary).toBe("postgres-2");
  });

  it("wait failoverDelaySeconds for a primary that does not answer, then fail over", () => {
    const members = [member(0, undefined, { label: "primary" }), member(1, { receivedLsn: 1n })];
    const first = decide(base(members));
    expect(first.promote).toBeUndefined();
    expect(first.labels["postgres-0"]).toBe("primary");
    expect(first.state.primaryUnreachableSince).toBe(NOW.toISOString());
    const later = decide(base(members, { state: first.state, now: new Date(NOW.getTime() + 5_000) }));
    expect(later.promote?.reason).toBe("PrimaryNotAnswering");
    expect(later.labels["postgres-0"]).toBe("fenced");
  });

  it("refuse a switchover to a member that does not exist or does not stream, saying why", () => {
    const members = [
      member(0, { inRecovery: false, receivedLsn: 100n }),
      member(1, { receivedLsn: 100n, streaming: false }),
    ];
    const requestedAt = "2026-12-01T11:59:00Z";
    expect(decide(base(members, { switchover: { requestedAt, to: "postgres-7" } })).refused).toBe(
      "postgres-7 is not a Postgres member (members: postgres-0, postgres-1)",
    );
    const notStreaming = decide(base(members, { switchover: { requestedAt, to: "postgres-1" } }));
    expect(notStreaming.refused).toBe("postgres-1 is not streaming from the primary");
    expect(notStreaming.state.switchover).toMatchObject({ outcome: "Refused", requestedAt });
    expect(notStreaming.promote).toBeUndefined();
  });

  it("switch over to a streaming standby once per request", () => {
    const members = [member(0, { inRecovery: false, receivedLsn: 100n }), member(1, { receivedLsn: 100n })];
    const switchover = { requestedAt: "2026-12-01T11:59:00Z", to: "postgres-1" };
    const d = decide(base(members, { switchover }));
    expect(d.promote).toEqual({ from: "postgres-0", to: "postgres-1", reason: "Switchover", planned: true });
    const again = decide(base(members, { switchover, state: { ...d.state, targetPrimary: "postgres-0" } }));
    expect(again.promote).toBeUndefined();
  });

  it("complete a promotion written ahead when its target answers as the primary", () => {
    const d = decide(
      base(
        [
          member(0, { inRecovery: false, receivedLsn: 5n }),
          member(1, { inRecovery: false, receivedLsn: 9n, timeline: 2 }),
        ],
        { state: { currentPrimary: "postgres-0", targetPrimary: "postgres-1" } },
      ),
    );
    expect(d.state.currentPrimary).toBe("postgres-1");
    expect(d.state.timeline).toBe(2);
    expect(d.labels).toEqual({ "postgres-0": "fenced", "postgres-1": "primary" });
    expect(d.demote).toEqual(["postgres-0"]);
  });

  it("record a promotion a later pass finds done: lastFailover with the reason written ahead, and the budget", () => {
    const members = [
      member(0, undefined, { pod: "absent" }),
      member(1, { inRecovery: false, receivedLsn: 9n, timeline: 2 }),
    ];
    const d = decide(
      base(members, {
        state: { currentPrimary: "postgres-0", targetPrimary: "postgres-1", targetReason: "PrimaryPodGone" },
      }),
    );
    expect(d.confirmed).toEqual({ from: "postgres-0", to: "postgres-1", reason: "PrimaryPodGone" });
    expect(d.state.lastFailover).toEqual({
      at: NOW.toISOString(),
      from: "postgres-0",
      to: "postgres-1",
      reason: "PrimaryPodGone",
    });
    expect(d.state.recentFailovers).toEqual([NOW.toISOString()]);
    expect(d.state.targetReason).toBeUndefined();
    // The next pass sees it done: nothing is recorded twice.
    const next = decide(base(members, { state: d.state, now: new Date(NOW.getTime() + 1_000) }));
    expect(next.confirmed).toBeUndefined();
    expect(next.state.lastFailover).toEqual(d.state.lastFailover);
    // A rolling update's switchover found done is recorded, and is not a failover of the budget.
    const rolled = decide(
      base(members, {
        state: { currentPrimary: "postgres-0", targetPrimary: "postgres-1", targetReason: "RollingUpdate" },
      }),
    );
    expect(rolled.confirmed?.reason).toBe("RollingUpdate");
    expect(rolled.state.recentFailovers).toBeUndefined();
  });

  it("write the reason of a promotion ahead with its target", () => {
    const d = decide(base([member(0, undefined, { pod: "absent" }), member(1, { receivedLsn: 1n })]));
    expect(d.state).toMatchObject({ targetPrimary: "postgres-1", targetReason: "PrimaryPodGone" });
  });

  it("hold a failover back while the hourly healing budget is spent (healer actions and failovers together)", () => {
    const members = [member(0, undefined, { pod: "absent" }), member(1, { receivedLsn: 1n })];
    const ago = (min: number): string => new Date(NOW.getTime() - min * 60_000).toISOString();
    const healerActions = Array.from({ length: 6 }, (_, i) => ({
      at: ago(50 - i),
      component: "data-service",
      action: "restart",
    }));
    const failovers = [ago(59), ago(40), ago(30), ago(20)];
    const spent = decide(
      base(members, {
        healerActions,
        state: { currentPrimary: "postgres-0", targetPrimary: "postgres-0", recentFailovers: failovers },
      }),
    );
    expect(spent.promote).toBeUndefined();
    expect(spent.withheld).toBe(
      `the hourly budget of 10 healing actions is spent (6 by the healer, 4 failovers in the last hour): no failover until ${new Date(Date.parse(ago(59)) + 3_600_000).toISOString()}`,
    );
    // A failover older than an hour leaves the window and the budget: the failover goes ahead.
    const later = decide(
      base(members, {
        healerActions,
        now: new Date(NOW.getTime() + 61_000),
        state: { currentPrimary: "postgres-0", targetPrimary: "postgres-0", recentFailovers: failovers },
      }),
    );
    expect(later.promote?.to).toBe("postgres-1");
    expect(later.state.recentFailovers).toEqual(failovers.slice(1));
  });

  it("fail over at once from a primary whose node is lost, whether it still answers or not", () => {
    const standby = member(1, { receivedLsn: 1n });
    const silent = decide(base([member(0, undefined, { nodeReady: false, label: "primary" }), standby]));
    expect(silent.promote).toEqual({
      from: "postgres-0",
      to: "postgres-1",
      reason: "PrimaryNodeLost",
      planned: false,
    });
    // The kubelet is gone but the server answers: failed over from too (ha.ts shuts it down first).
    const serving = decide(
      base([member(0, { inRecovery: false, receivedLsn: 1n }, { nodeReady: false }), standby]),
    );
    expect(serving.promote).toMatchObject({ to: "postgres-1", reason: "PrimaryNodeLost" });
    expect(serving.labels["postgres-0"]).toBe("fenced");
  });

  it("hold a failover back while most nodes are down, and say so", () => {
    const d = decide(
      base([member(0, undefined, { pod: "absent" }), member(1, { receivedLsn: 1n })], {
        nodes: { ready: 1, total: 3 },
      }),
    );
    expect(d.promote).toBeUndefined();
    expect(d.withheld).toBe("2 of 3 nodes are NotReady: no failover while most nodes are down");
  });

  it("answer a switchover request only once the primary answers again or its failover is due, not at one missed look", () => {
    const requestedAt = "2026-12-01T11:59:30Z";
    const missed = [
      member(0, undefined, { label: "primary" }),
      member(1, { receivedLsn: 10n }),
      member(2, { receivedLsn: 10n }),
    ];
    const first = decide(base(missed, { switchover: { requestedAt, to: "postgres-1" } }));
    expect(first.refused).toBeUndefined();
    expect(first.promote).toBeUndefined();
    expect(first.state.switchover).toBeUndefined();
    expect(first.labels["postgres-0"]).toBe("primary");
    // The primary answers at the next look: the switchover goes ahead.
    const answering = [
      member(0, { inRecovery: false, receivedLsn: 10n }, { label: "primary" }),
      ...missed.slice(1),
    ];
    const next = decide(
      base(answering, { state: first.state, switchover: { requestedAt, to: "postgres-1" } }),
    );
    expect(next.promote).toEqual({
      from: "postgres-0",
      to: "postgres-1",
      reason: "Switchover",
      planned: true,
    });
    // It does not answer for failoverDelaySeconds: failed over from, and the request refused with the reason.
    const later = decide(
      base(missed, {
        state: first.state,
        now: new Date(NOW.getTime() + SETTINGS.failoverDelayMs),
        switchover: { requestedAt, to: "postgres-1" },
      }),
    );
    expect(later.promote?.reason).toBe("PrimaryNotAnswering");
    expect(later.state.switchover?.outcome).toBe("Refused");
    expect(later.refused).toMatch(/postgres-0 is not healthy/);
  });

  it("wait a little for the member a switchover names when it missed a look, then refuse with the reason", () => {
    const requestedAt = NOW.toISOString();
    const primary = member(0, { inRecovery: false, receivedLsn: 10n }, { label: "primary" });
    const silent = [primary, member(1, undefined, { label: "standby" }), member(2, { receivedLsn: 10n })];
    const first = decide(base(silent, { switchover: { requestedAt, to: "postgres-1" } }));
    expect(first.refused).toBeUndefined();
    expect(first.promote).toBeUndefined();
    expect(first.state.switchover).toBeUndefined();
    // It answers at the next look: the switchover goes ahead.
    const answering = [primary, member(1, { receivedLsn: 10n }), member(2, { receivedLsn: 10n })];
    const next = decide(
      base(answering, {
        state: first.state,
        now: new Date(NOW.getTime() + 2_000),
        switchover: { requestedAt, to: "postgres-1" },
      }),
    );
    expect(next.promote).toEqual({
      from: "postgres-0",
      to: "postgres-1",
      reason: "Switchover",
      planned: true,
    });
    // Still silent when the wait is over: refused, saying why.
    const late = decide(
      base(silent, {
        state: first.state,
        now: new Date(NOW.getTime() + SWITCHOVER_TARGET_WAIT_MS),
        switchover: { requestedAt, to: "postgres-1" },
      }),
    );
    expect(late.promote).toBeUndefined();
    expect(late.state.switchover?.outcome).toBe("Refused");
    expect(late.refused).toBe("postgres-1 does not answer");
    // A member whose node is NotReady is not waited for.
    const lost = [primary, member(1, undefined, { nodeReady: false }), member(2, { receivedLsn: 10n })];
    expect(decide(base(lost, { switchover: { requestedAt, to: "postgres-1" } })).refused).toBe(
      "postgres-1 is not running on a Ready node",
    );
  });

  it("on retained volumes with an empty status, wait for the former primary instead of promoting a standby", () => {
    // postgres-1 was the primary; the standbys start first and answer; it has not started yet.
    const waiting = [
      member(0, { receivedLsn: 900n, streaming: false }),
      member(1, undefined),
      member(2, { receivedLsn: 900n, streaming: false }),
    ];
    const first = decide(base(waiting, { state: undefined }));
    expect(first.promote).toBeUndefined();
    expect(first.demote).toEqual([]);
    expect(first.state.currentPrimary).toBeUndefined();
    expect(first.labels).toEqual({
      "postgres-0": "lagging",
      "postgres-1": "unknown",
      "postgres-2": "lagging",
    });
    const much = decide(base(waiting, { state: first.state, now: new Date(NOW.getTime() + 600_000) }));
    expect(much.promote).toBeUndefined();
    const refused = decide(
      base(waiting, {
        state: first.state,
        switchover: { requestedAt: "2026-12-01T11:59:00Z", to: "postgres-0" },
      }),
    );
    expect(refused.refused).toBe(
      "no member answers as the primary yet: a switchover needs a running primary",
    );
    const started = decide(
      base(
        [
          waiting[0] as MemberView,
          member(1, { inRecovery: false, receivedLsn: 1000n }),
          waiting[2] as MemberView,
        ],
        {
          state: first.state,
        },
      ),
    );
    expect(started.state.currentPrimary).toBe("postgres-1");
    expect(started.labels["postgres-1"]).toBe("primary");
  });

  it("with two members answering as the primary at the first look, name the newest timeline and demote the other", () => {
    const d = decide(
      base(
        [
          member(0, { inRecovery: false, receivedLsn: 9_000n, timeline: 1 }),
          member(1, { inRecovery: false, receivedLsn: 5_000n, timeline: 2 }),
          member(2, { receivedLsn: 5_000n, streaming: false, timeline: 2 }),
        ],
        { state: undefined },
      ),
    );
    expect(d.state.currentPrimary).toBe("postgres-1");
    expect(d.demote).toEqual(["postgres-0"]);
    expect(d.labels["postgres-0"]).toBe("fenced");
  });

  it("fail over at once when the primary's pod was replaced between two looks (no role label, not answering)", () => {
    const d = decide(
      base([
        member(0, undefined),
        member(1, { receivedLsn: 900n, streaming: false }),
        member(2, { receivedLsn: 1000n, streaming: false }),
      ]),
    );
    expect(d.promote).toEqual({
      from: "postgres-0",
      to: "postgres-2",
      reason: "PrimaryPodGone",
      planned: false,
    });
    // The same pod labelled (seen before) and not answering: failoverDelaySeconds first.
    expect(
      decide(base([member(0, undefined, { label: "primary" }), member(1, { receivedLsn: 1n })])).promote,
    ).toBeUndefined();
  });

  it("promote a switchover's target again when its promotion did not confirm after the old primary stepped down", () => {
    const { state, switchover } = switchoverInProgress();
    const members = [
      member(0, undefined, { pod: "absent" }),
      member(1, { receivedLsn: 900n, streaming: false }),
      member(2, { receivedLsn: 1000n, streaming: false }),
    ];
    const d = decide(base(members, { state, switchover }));
    expect(d.promote).toEqual({
      from: "postgres-0",
      to: "postgres-1",
      reason: "Switchover",
      planned: false,
      resumed: true,
    });
    expect(d.state.switchover?.outcome).toBe("InProgress");
  });

  it("complete a failover written ahead whose target is still a standby, though the old primary answers again", () => {
    // A pass promoted postgres-2 (postgres-0 missed its looks on a loaded node) and pg_promote()
    // timed out; postgres-2 may be promoting. Undone, postgres-0 would go on writable beside it.
    const members = [
      member(0, { inRecovery: false, receivedLsn: 100n }, { label: "fenced" }),
      member(1, { receivedLsn: 100n }),
      member(2, { receivedLsn: 90n }),
    ];
    const state = {
      currentPrimary: "postgres-0",
      targetPrimary: "postgres-2",
      targetReason: "PrimaryNotAnswering",
    };
    const d = decide(base(members, { state }));
    expect(d.promote).toEqual({
      from: "postgres-0",
      to: "postgres-2",
      reason: "PrimaryNotAnswering",
      planned: false,
      resumed: true,
    });
    expect(d.state).toMatchObject({ currentPrimary: "postgres-0", targetPrimary: "postgres-2" });
    expect(d.labels["postgres-0"]).toBe(POSTGRES_ROLES.fenced);
    // A target that can no longer be promoting (its pod gone) is forgotten: the primary goes on.
    const gone = decide(
      base([members[0] as MemberView, members[1] as MemberView, member(2, undefined, { pod: "absent" })], {
        state,
      }),
    );
    expect(gone.promote).toBeUndefined();
    expect(gone.state.targetPrimary).toBe("postgres-0");
  });

  it("answer a switchover in progress when the primary is lost and another member is promoted", () => {
    const { state, switchover } = switchoverInProgress();
    const members = [
      member(0, undefined, { pod: "absent" }),
      member(1, undefined, { pod: "absent" }),
      member(2, { receivedLsn: 1000n, streaming: false }),
    ];
    const d = decide(base(members, { state, switchover }));
    expect(d.promote?.to).toBe("postgres-2");
    expect(d.state.switchover).toMatchObject({
      outcome: "Refused",
      message:
        "the primary postgres-0 was lost during the switchover (PrimaryPodGone): failing over to postgres-2",
    });
    // The target forgotten while the primary goes on answering: refused, not left in progress.
    const kept = decide(
      base(
        [
          member(0, { inRecovery: false, receivedLsn: 5n }, { label: "primary" }),
          member(1, undefined, { pod: "absent" }),
        ],
        {
          state,
          switchover,
        },
      ),
    );
    expect(kept.state.switchover).toMatchObject({
      outcome: "Refused",
      message: "promoting postgres-1 did not confirm: postgres-0 stays the primary",
    });
  });
});
