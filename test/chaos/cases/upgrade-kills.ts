// SIGKILLs at random moments (seeded) of upgrades and rollbacks: the operator process is killed
// and a new one started, again and again, while 1.5.0 -> 1.6.0 runs (it must succeed) and while
// 1.6.0 -> 1.6.1-kafka-crashloop runs (its kafka canary crash-loops: it must roll back). Each end
// state must be the uninterrupted run's, with no step done twice (no canary created twice).
// Platforms are used in pairs of cycles until `kills` kills have been done.
import fc from "fast-check";
import type { OntoPlatform } from "../../../src/api/index.js";
import type { KubeClient } from "../../../src/kube/index.js";
import { createTestNamespace, eventually } from "../../support/cluster.js";
import { readPlatform } from "../../support/platform.js";
import { applyFaultReleases, setVersion, upgradeSample } from "../../cluster/upgrade-support.js";
import { duplicatedCanaries, operatorSlot, settledProblems, type OperatorSlot } from "../operator.js";
import { sleep, type CaseResult } from "../support.js";

const NAME = "onto-minimal";

interface Cycle {
  to: string;
  /** The phase the uninterrupted run ends in, and the version the platform then runs. */
  phase: "Succeeded" | "Failed";
  settlesOn: string;
  /** Delays between kills (ms): an upgrade takes a minute or two, the kafka rollback seconds. */
  delays: { min: number; max: number };
  /** Most kills in one run of the cycle. */
  most: number;
}

const CYCLES: Cycle[] = [
  { to: "1.6.0", phase: "Succeeded", settlesOn: "1.6.0", delays: { min: 1_500, max: 7_000 }, most: 8 },
  {
    to: "1.6.1-kafka-crashloop",
    phase: "Failed",
    settlesOn: "1.6.0",
    delays: { min: 300, max: 2_500 },
    most: 3,
  },
];

/** Kills during one upgrade at the seeded delays until it ends; returns the kills done. */
async function killDuring(
  client: KubeClient,
  slot: OperatorSlot,
  cycle: Cycle,
  delays: number[],
): Promise<{ kills: number; platform: OntoPlatform; durationMs: number }> {
  const started = performance.now();
  await setVersion(client, slot.namespace, NAME, cycle.to);
  let kills = 0;
  const ended = async (): Promise<OntoPlatform | undefined> => {
    const p = await readPlatform(client, slot.namespace, NAME);
    const u = p.status?.upgrade;
    return u?.to === cycle.to &&
      (u.phase === "Failed" || u.phase === "Succeeded") &&
      p.status?.phase === "Running"
      ? p
      : undefined;
  };
  for (const delay of delays) {
    await sleep(delay);
    if (await ended()) break;
    await slot.kill();
    kills++;
    await slot.start();
  }
  const platform = await eventually(`the upgrade to ${cycle.to} to end`, ended, 600_000, 500);
  return { kills, platform, durationMs: performance.now() - started };
}

export async function upgradeKills(
  client: KubeClient,
  opts: { kills: number; seed: number },
): Promise<CaseResult> {
  let seed = opts.seed;
  let kills = 0;
  let cycles = 0;
  const problems: string[] = [];
  const durations: number[] = [];
  // 1.6.1-kafka-crashloop is a test release: an OntoRelease the operator reads from the cluster.
  await applyFaultReleases(client);
  while (kills < opts.kills) {
    const namespace = await createTestNamespace("chaos-upgrade");
    const slot = await operatorSlot(client, namespace);
    try {
      await slot.start();
      await client.apply(upgradeSample("minimal.yaml", namespace, { soakSeconds: 3 }));
      await eventually(
        "the platform to run 1.5.0",
        async () =>
          (await readPlatform(client, namespace, NAME)).status?.version === "1.5.0" ? true : undefined,
        300_000,
        500,
      );
      for (const cycle of CYCLES) {
        const since = new Date().toISOString();
        // The upgrade takes all but one of the kills left (up to its most), the rollback the rest.
        const left = opts.kills - kills;
        const budget = Math.max(1, Math.min(cycle.most, cycle.phase === "Succeeded" ? left - 1 : left));
        const delays = fc.sample(fc.integer(cycle.delays), { numRuns: budget, seed: seed++ });
        const run = await killDuring(client, slot, cycle, delays);
        kills += run.kills;
        cycles++;
        durations.push(run.durationMs);
        const u = run.platform.status?.upgrade;
        if (u?.phase !== cycle.phase) problems.push(`${cycle.to}: ended ${u?.phase}, not ${cycle.phase}`);
        if (run.platform.status?.version !== cycle.settlesOn)
          problems.push(`${cycle.to}: runs ${run.platform.status?.version}, not ${cycle.settlesOn}`);
        for (const p of await settledProblems(client, run.platform, cycle.settlesOn))
          problems.push(`${cycle.to}: ${p}`);
        for (const name of duplicatedCanaries(slot.auditLog, since))
          problems.push(`${cycle.to}: canary ${name} created twice`);
        console.log(
          `[chaos] upgrade to ${cycle.to}: ${run.kills} SIGKILLs, ended ${u?.phase} in ${Math.round(run.durationMs / 1000)} s`,
        );
      }
    } finally {
      await slot.kill();
      await slot.revoke().catch(() => undefined);
    }
  }
  return {
    name: "SIGKILL during upgrades and rollbacks",
    did: `${kills} SIGKILLs of the operator at seeded random moments (seed ${opts.seed}) over ${cycles} upgrades (1.5.0 -> 1.6.0, and a rollback of 1.6.1-kafka-crashloop)`,
    found:
      problems.length === 0
        ? "every upgrade ended as the uninterrupted run does; no step done twice"
        : problems.slice(0, 5).join("; "),
    figures: {
      "kills survived": problems.length === 0 ? kills : `${kills} (with ${problems.length} problems)`,
      "upgrade minutes (median)": (
        durations.sort((a, b) => a - b)[Math.floor(durations.length / 2)]! / 60_000
      ).toFixed(1),
    },
    ok: problems.length === 0,
  };
}
