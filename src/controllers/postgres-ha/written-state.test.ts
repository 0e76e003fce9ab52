import { describe, expect, it } from "vitest";
import type { OntoPlatform, PostgresStatus } from "../../api/index.js";
import { decide, type MemberView } from "./decisions.js";
import { WrittenState } from "./written-state.js";

function platform(uid: string, resourceVersion: string, postgres: PostgresStatus | undefined): OntoPlatform {
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "p", namespace: "ns", uid, resourceVersion },
    spec: {},
    ...(postgres ? { status: { postgres } } : {}),
  } as OntoPlatform;
}

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

describe("WrittenState", () => {
  it("says a cached platform is behind until it shows the status.postgres last written, whatever its key order", () => {
    const w = new WrittenState();
    expect(w.behind(platform("u1", "10", BEFORE))).toBe(false); // nothing written yet
    w.remember(platform("u1", "12", PROMOTED));
    expect(w.behind(platform("u1", "11", AHEAD))).toBe(true);
    expect(w.behind(platform("u1", "10", BEFORE))).toBe(true);
    expect(w.behind(platform("u1", "12", PROMOTED))).toBe(false);
    // A later write by another controller (another resourceVersion) that kept status.postgres.
    const reordered = JSON.parse(
      JSON.stringify({
        lastFailover: PROMOTED.lastFailover,
        timeline: 2,
        targetPrimary: "postgres-1",
        currentPrimary: "postgres-1",
      }),
    ) as PostgresStatus;
    expect(w.behind(platform("u1", "13", reordered))).toBe(false);
    // Another platform, and one re-created under the same name (a new uid).
    expect(w.behind(platform("u2", "11", AHEAD))).toBe(false);
    w.forget("u1");
    expect(w.behind(platform("u1", "11", AHEAD))).toBe(false);
  });

  it("is needed: a pass decided from the status before the promotion's write loses lastFailover or fails over twice", () => {
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
      settings: { failoverDelayMs: 5_000, maxLagBytes: 1 << 20, cooldownMs: 30_000, automatic: true },
      nodes: { ready: 1, total: 1 },
    });
    // From the status as written: nothing to do, the cooldown holds.
    const fromWritten = decide(input(PROMOTED));
    expect(fromWritten.promote).toBeUndefined();
    expect(fromWritten.state.lastFailover).toEqual(PROMOTED.lastFailover);
    // From the write-ahead copy: the promotion completes again, but the record of it is lost.
    const fromAhead = decide(input(AHEAD));
    expect(fromAhead.state.currentPrimary).toBe("postgres-1");
    expect(fromAhead.state.lastFailover).toBeUndefined();
    // From the copy before the write-ahead: postgres-2 promoted too, and the new primary demoted.
    const fromBefore = decide(input(BEFORE));
    expect(fromBefore.promote).toMatchObject({ from: "postgres-0", to: "postgres-2" });
    expect(fromBefore.demote).toEqual(["postgres-1"]);
  });
});
