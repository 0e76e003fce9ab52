// Leader chaos: two replicas of leader-writer.child.ts on one Lease; the leader writes every
// 20 ms. Kill: SIGKILL the leader, the standby must take over. Freeze: SIGSTOP the leader for
// longer than the lease, let the standby take over, SIGCONT the old leader: it must not write
// once the other holds the lease, and must exit (as controller-runtime does) instead of leading
// on. A split-brain write is a ConfigMap write by the old leader that the API server ordered after
// the Lease write that made the other replica its holder: the server's own order, no clocks.
import type { KubeClient } from "../../../src/kube/index.js";
import type { Lease } from "../../../src/runtime/index.js";
import { createTestNamespace } from "../../support/cluster.js";
import {
  count,
  lineAt,
  median,
  recordWrites,
  sleep,
  startChild,
  waitFor,
  type CaseResult,
  type Child,
  type ServerEvent,
} from "../support.js";

const SCRIPT = new URL("../leader-writer.child.ts", import.meta.url).pathname;

export interface LeaderTimings {
  leaseMs: number;
  renewMs: number;
  retryMs: number;
}

export const FAST_LEASE: LeaderTimings = { leaseMs: 4_000, renewMs: 3_000, retryMs: 1_000 };

interface Cluster {
  client: KubeClient;
  kubeconfig: string;
}

function start(identity: string, namespace: string, cluster: Cluster, t: LeaderTimings): Child {
  return startChild(identity, SCRIPT, {
    NAMESPACE: namespace,
    IDENTITY: identity,
    KUBECONFIG_PATH: cluster.kubeconfig,
    LEASE_MS: String(t.leaseMs),
    RENEW_MS: String(t.renewMs),
    RETRY_MS: String(t.retryMs),
  });
}

/** The first Lease write that made `identity` the holder, after `after` (a resourceVersion). */
function acquiredAt(events: ServerEvent[], identity: string, after: bigint): bigint | undefined {
  return events.find(
    (e) => e.kind === "Lease" && e.rv > after && (e.object as Lease).spec?.holderIdentity === identity,
  )?.rv;
}

function writesBy(events: ServerEvent[], identity: string, after: bigint): ServerEvent[] {
  return events.filter(
    (e) => e.kind === "ConfigMap" && e.rv > after && e.object.metadata?.annotations?.writer === identity,
  );
}

async function setup(
  cluster: Cluster,
  t: LeaderTimings,
): Promise<{ namespace: string; record: ReturnType<typeof recordWrites>; replicas: Child[] }> {
  const namespace = await createTestNamespace("chaos-leader");
  await cluster.client.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "target", namespace, labels: { chaos: "leader" } },
  });
  const record = recordWrites(cluster.client, namespace, [
    { apiVersion: "v1", kind: "ConfigMap" },
    { apiVersion: "coordination.k8s.io/v1", kind: "Lease" },
  ]);
  await record.ready;
  const first = start("replica-0", namespace, cluster, t);
  await waitFor("replica-0 to lead", () => lineAt(first, "became leader"), 60_000);
  const second = start("replica-1", namespace, cluster, t);
  await waitFor("replica-1 to campaign", () => lineAt(second, "campaigning for leadership"), 60_000);
  return { namespace, record, replicas: [first, second] };
}

const leaderOf = (replicas: Child[]): Child | undefined =>
  replicas.filter((r) => r.alive()).sort((a, b) => (lastLead(b) ?? 0) - (lastLead(a) ?? 0))[0];
const lastLead = (r: Child): number | undefined =>
  r.lines.filter((l) => l.msg === "became leader").at(-1)?.at;

/**
 * SIGSTOP the leader past the lease, SIGCONT it after the standby took over; `rounds` times,
 * each round with a fresh standby. Counts the old leader's writes after the takeover.
 */
export async function leaderFreeze(cluster: Cluster, rounds: number, t = FAST_LEASE): Promise<CaseResult> {
  const { namespace, record, replicas } = await setup(cluster, t);
  const failovers: number[] = [];
  const exits: number[] = [];
  let splitWrites = 0;
  /** What each write by an old leader after the takeover was, to find where it slipped through. */
  const splitDetails: string[] = [];
  let refusedAfterThaw = 0;
  let kept = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const leader = leaderOf(replicas)!;
      await waitFor(
        `${leader.name} to write`,
        () => (count(leader, "write accepted") > 3 ? true : undefined),
        60_000,
      );
      const before = record.events.at(-1)?.rv ?? 0n;
      const stoppedAt = performance.now();
      leader.process.kill("SIGSTOP");
      // The next round's standby starts now, while the lease runs out (a process start is slow).
      if (round < rounds - 1) replicas.push(start(`replica-${replicas.length}`, namespace, cluster, t));
      const [standby, took] = await waitFor(
        "a standby to take over",
        () => {
          const next = replicas.find(
            (r) => r !== leader && lineAt(r, "became leader", stoppedAt) !== undefined,
          );
          return next ? ([next, lineAt(next, "became leader", stoppedAt)!] as const) : undefined;
        },
        60_000,
      );
      failovers.push(took - stoppedAt);
      // Keep the old leader frozen a moment longer: the new one is writing by now.
      await sleep(t.retryMs);
      const thawedAt = performance.now();
      leader.process.kill("SIGCONT");
      const exited = await Promise.race([
        leader.exited.then(() => performance.now()),
        sleep(4 * t.leaseMs).then(() => undefined),
      ]);
      if (exited === undefined) kept++;
      else exits.push(exited - thawedAt);
      await sleep(500); // the watch delivers the last writes
      const acquired = acquiredAt(record.events, standby.name, before);
      const split = acquired === undefined ? [] : writesBy(record.events, leader.name, acquired);
      splitWrites += split.length;
      const lastBefore = leader.lines.filter((l) => l.msg === "write accepted" && l.at < stoppedAt).at(-1);
      const afterThaw = leader.lines.filter((l) => l.at >= thawedAt).map((l) => l.msg);
      for (const write of split) {
        splitDetails.push(
          `round ${round + 1}: ${leader.name} seq ${write.object.metadata?.annotations?.seq ?? "?"} at rv ${write.rv} (lease taken at rv ${String(acquired)}); its last write logged before the freeze: seq ${typeof lastBefore?.seq === "number" ? lastBefore.seq : "none"}; its lines after the thaw: ${afterThaw.join(", ") || "none"}`,
        );
      }
      refusedAfterThaw += count(leader, "write refused", thawedAt);
      if (leader.alive()) {
        leader.process.kill("SIGKILL");
        await leader.exited;
      }
    }
  } finally {
    record.stop();
    for (const r of replicas) if (r.alive()) r.process.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
  }
  return {
    name: "leader freeze (SIGSTOP past the lease, SIGCONT)",
    did: `${rounds} rounds: leader frozen until the standby took over (lease ${t.leaseMs} ms), then thawed`,
    found:
      splitWrites === 0 && kept === 0
        ? `no write by an old leader after the takeover; every thawed leader exited`
        : `${splitWrites} writes by old leaders after the takeover; ${kept} thawed leaders kept running${splitDetails.length ? ` (${splitDetails.join("; ")})` : ""}`,
    figures: {
      "split-brain writes": splitWrites,
      "writes refused by the thawed leader": refusedAfterThaw,
      "failover median ms": Math.round(median(failovers)),
      "failover max ms": Math.round(Math.max(...failovers)),
      "exit after SIGCONT median ms": exits.length ? Math.round(median(exits)) : "n/a",
      "thawed leaders still running": kept,
    },
    ok: splitWrites === 0 && kept === 0,
  };
}

/** SIGKILL the leader `rounds` times; the standby takes over within the lease (plus retries). */
export async function leaderKill(cluster: Cluster, rounds: number, t = FAST_LEASE): Promise<CaseResult> {
  const { namespace, record, replicas } = await setup(cluster, t);
  const failovers: number[] = [];
  let overlap = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const leader = leaderOf(replicas)!;
      await waitFor(
        `${leader.name} to write`,
        () => (count(leader, "write accepted") > 3 ? true : undefined),
        60_000,
      );
      const before = record.events.at(-1)?.rv ?? 0n;
      const killedAt = performance.now();
      leader.process.kill("SIGKILL");
      if (round < rounds - 1) replicas.push(start(`replica-${replicas.length}`, namespace, cluster, t));
      await leader.exited;
      const [standby, took] = await waitFor(
        "a standby to take over",
        () => {
          const next = replicas.find(
            (r) => r !== leader && lineAt(r, "became leader", killedAt) !== undefined,
          );
          return next ? ([next, lineAt(next, "became leader", killedAt)!] as const) : undefined;
        },
        60_000,
      );
      failovers.push(took - killedAt);
      await sleep(300);
      const acquired = acquiredAt(record.events, standby.name, before);
      if (acquired !== undefined) overlap += writesBy(record.events, leader.name, acquired).length;
    }
  } finally {
    record.stop();
    for (const r of replicas) if (r.alive()) r.process.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
  }
  return {
    name: "leader kill (SIGKILL)",
    did: `${rounds} rounds: leader SIGKILLed while writing (lease ${t.leaseMs} ms)`,
    found:
      overlap === 0
        ? "the standby took over every time, no overlapping writes"
        : `${overlap} overlapping writes`,
    figures: {
      "failover median ms": Math.round(median(failovers)),
      "failover max ms": Math.round(Math.max(...failovers)),
      "overlapping writes": overlap,
    },
    ok: overlap === 0,
  };
}
