// The order in which the operator replaces Postgres members after their pod template changed
// (image, config, resources), as a pure rule. With standbys the StatefulSet is OnDelete: it makes
// a deleted pod again from the new revision but deletes none itself, so the operator chooses,
// one member per step:
//   1. a member on an old revision that is not Ready (it serves nothing; the primary only when no
//      standby streams, since it cannot take writes either way then);
//   2. the other non-primary members, those not streaming first, then the streaming standbys,
//      highest ordinal first; each only once every member already replaced is Ready and, with a
//      primary known, streaming again;
//   3. the primary last, through the planned switchover (no acknowledged write lost) to a Ready
//      streaming standby, an updated one when there is one; the switchover deletes the old
//      primary's pod once the standby has its last WAL, and the pod comes back on the new revision.
// Never the primary while a healthy standby could take over without a switchover, never two
// members at once, never an ordinal below the partition (an upgrade's canary replaces only the
// highest one).
//
// When no member has ever answered as the primary (status.postgres names none: a platform whose
// members have not started yet, or simulated pods that answer no SQL), there is no role to order
// by, and by design HA does nothing automatic then. Replacing nothing would leave such a platform
// on its old revision for good (an upgrade would wait for it until it timed out), so the rule falls
// back to what the StatefulSet's RollingUpdate did: highest ordinal first, one at a time, each once
// the one before is Ready. No member is known to take writes, so this ordering loses none.

/** One member as the rolling rule sees it. */
export interface RollingMember {
  name: string;
  ordinal: number;
  pod: "present" | "terminating" | "absent";
  /** The pod's uid: the delete's precondition, so a pod made again meanwhile is never deleted. */
  uid?: string | undefined;
  /** The pod was made from the StatefulSet's update revision. */
  updated: boolean;
  ready: boolean;
  /** Streams from the primary within the lag limit (role standby) as decided this pass. */
  streaming: boolean;
}

export interface RollingInput {
  members: readonly RollingMember[];
  /** status.postgres.currentPrimary; undefined while no member has ever answered as the primary. */
  primary: string | undefined;
  /** Ordinals below this keep their revision (an upgrade's canary step). */
  partition: number;
  /** Why HA is busy this pass (a promotion, a switchover, a failover due, a demotion), if it is. */
  busy?: string | undefined;
}

export type RollingDecision =
  /** Every member from the partition up is on the update revision. */
  | { action: "done" }
  | { action: "wait"; why: string }
  | { action: "delete"; member: string; uid: string; why: string }
  /** The primary is replaced last: a planned switchover to `to`, which deletes `from`'s pod. */
  | { action: "switchover"; from: string; to: string; why: string };

/** How a step's reason ends when it replaces a standby that streams (the tests read it back). */
export const STREAMING_STANDBY = "a streaming standby";

/** Highest ordinal first. */
const descending = (a: RollingMember, b: RollingMember): number => b.ordinal - a.ordinal;

function remove(m: RollingMember, why: string): RollingDecision {
  if (!m.uid) return { action: "wait", why: `${m.name} has no uid yet` };
  return { action: "delete", member: m.name, uid: m.uid, why };
}

export function decideRolling(input: RollingInput): RollingDecision {
  const { members, primary, partition } = input;
  const outdated = members.filter((m) => m.ordinal >= partition && m.pod === "present" && !m.updated);
  if (outdated.length === 0) return { action: "done" };
  if (input.busy) return { action: "wait", why: input.busy };
  const away = members.find((m) => m.pod !== "present");
  if (away) return { action: "wait", why: `${away.name} is being replaced (${away.pod})` };

  const healthyStandby = members.some((m) => m.name !== primary && m.ready && m.streaming);
  // 1. Not Ready on an old revision: it serves nothing.
  const idle = outdated
    .filter((m) => !m.ready && (m.name !== primary || !healthyStandby))
    .sort(descending)[0];
  if (idle) return remove(idle, `${idle.name} is not Ready on an old revision`);

  // Each member already replaced is back before the next goes.
  for (const m of members) {
    if (!m.updated || m.name === primary) continue;
    if (!m.ready) return { action: "wait", why: `${m.name} (replaced) is not Ready yet` };
    if (primary !== undefined && !m.streaming)
      return { action: "wait", why: `${m.name} (replaced) is not streaming from the primary yet` };
  }

  // No role known: the StatefulSet's own order.
  if (primary === undefined) {
    const next = [...outdated].sort(descending)[0] as RollingMember;
    return remove(next, `no member has answered as the primary: ${next.name} in ordinal order`);
  }

  // 2. The other members, those that serve no reads first, then the streaming standbys.
  const others = outdated.filter((m) => m.name !== primary);
  const next =
    others.filter((m) => !m.streaming).sort(descending)[0] ??
    others.filter((m) => m.streaming).sort(descending)[0];
  if (next) return remove(next, `${next.name} is ${next.streaming ? STREAMING_STANDBY : "not streaming"}`);

  // 3. Only the primary is left: hand over first.
  const targets = members.filter((m) => m.name !== primary && m.ready && m.streaming);
  const to = targets.filter((m) => m.updated).sort(descending)[0] ?? targets.sort(descending)[0];
  if (!to)
    return {
      action: "wait",
      why: `the primary ${primary} is the last to replace and no standby streams to switch over to`,
    };
  return {
    action: "switchover",
    from: primary,
    to: to.name,
    why: `the primary ${primary} is replaced last: switching over to ${to.updated ? "the updated" : "the"} standby ${to.name}`,
  };
}
