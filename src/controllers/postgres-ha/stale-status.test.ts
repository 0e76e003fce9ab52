import { describe, expect, it } from "vitest";
import type { PostgresStatus } from "../../api/index.js";
import { decide, type MemberView } from "./decisions.js";

const NOW = new Date("2026-12-01T12:00:00Z");
/** Before postgres-0's pod was deleted. */
const BEFORE: PostgresStatus = { currentPrimary: "postgres-0", targetPrimary: "postgres-0", timeline: 1 };
/** Written ahead of promoting postgres-1. */
const AHEAD: PostgresStatus = { ...BEFORE, targetPrimary: "postgres-1" };
/** Written once postgres-1 answered as the primary. */
const PROMOTED: PostgresStatus = {
  currentPrimary: "postgres-1",
  targetPrimary: "postgres-1",
  timeline: 2,
  lastFailover: {
    at: "2026-12-01T11:59:58.000Z",
    from: "postgres-0",
    to: "postgres-1",
    reason: "PrimaryPodGone",
  },
};

// Why Postgres HA decides from the status it last wrote (shared/status-writer.ts) until the cache
// shows it: decide() from an older status.postgres records the failover twice or fails over twice.
describe("a pass decided from a status older than the controller's last write", () => {
  it("is needed: a pass decided from the status before the promotion's write records it twice or fails over twice", () => {
    // postgres-0's pod is gone; postgres-1 was just promoted; postgres-2 streams.
    const members: MemberView[] = [
      { name: "postgres-0", pod: "absent", nodeReady: false },
      {
        name: "postgres-1",
        pod: "present",
        nodeReady: true,
        label: "primary",
        sql: { inRecovery: false, receivedLsn: 200n, streaming: false, timeline: 2 },
      },
      {
        name: "postgres-2",
        pod: "present",
        nodeReady: true,
        label: "standby",
        sql: { inRecovery: true, receivedLsn: 190n, replayLsn: 190n, streaming: true, timeline: 2 },
      },
    ];
    const input = (state: PostgresStatus) => ({
      members,
      state,
      now: NOW,
      settings: {
        failoverDelayMs: 5_000,
        maxLagBytes: 1 << 20,
        cooldownMs: 30_000,
        automatic: true,
        maxActionsPerHour: 10,
      },
      nodes: { ready: 1, total: 1 },
    });
    // From the status as written: nothing to do, the cooldown holds.
    const fromWritten = decide(input(PROMOTED));
    expect(fromWritten.promote).toBeUndefined();
    expect(fromWritten.state.lastFailover).toEqual(PROMOTED.lastFailover);
    // From the write-ahead copy: the promotion is found done again and recorded a second time, at
    // this pass's time (a second Event, and a second failover in the hourly budget).
    const fromAhead = decide(input({ ...AHEAD, targetReason: "PrimaryPodGone" }));
    expect(fromAhead.state.currentPrimary).toBe("postgres-1");
    expect(fromAhead.confirmed).toBeDefined();
    expect(fromAhead.state.lastFailover?.at).not.toBe(PROMOTED.lastFailover?.at);
    expect(fromAhead.state.recentFailovers).toHaveLength(1);
    // From the copy before the write-ahead: postgres-2 promoted too, and the new primary demoted.
    const fromBefore = decide(input(BEFORE));
    expect(fromBefore.promote).toMatchObject({ from: "postgres-0", to: "postgres-2" });
    expect(fromBefore.demote).toEqual(["postgres-1"]);
  });
});
