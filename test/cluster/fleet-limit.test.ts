// The fleet limit against the real API server (issue 17): two platforms under
// `--max-restarting-platforms 1` get a log-level change (a config roll of several workloads) at the
// same instant. The Deployments and StatefulSets of both are sampled throughout: the two never
// roll at the same time, the second starts only after the first's rolls finished, the one that
// waited shows cause FleetLimit (with since) in status.disruption.waiting and got one Event, and
// both end Running with the change applied. An operator restarted while the first rolls (a new
// leader starts with an empty slot table) still holds the second back: it counts the first's roll
// from its caches.
import { describe, expect, it } from "vitest";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import type { WorkloadStatus } from "../../src/controllers/shared/kube-views.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform, waitForPhase } from "../support/platform.js";

const NAME = "onto-minimal";
const fx = useOperator({
  namespaces: ["fleet-a", "fleet-b"],
  operator: { maxRestartingPlatforms: 1 },
  platform: (namespace) => loadSample("minimal.yaml", namespace),
});
const { client } = fx;

type Workload = KubeObject & { spec: { replicas?: number; template: unknown }; status?: WorkloadStatus };

async function workloads(namespace: string): Promise<Workload[]> {
  const lists = await Promise.all(
    ["Deployment", "StatefulSet"].map((kind) => client.list("apps/v1", kind, { namespace })),
  );
  return lists.flatMap((l) => l.items as Workload[]);
}

/** The test's own reading of "this workload's rollout is complete" (kubectl rollout status). */
function settled(w: Workload): boolean {
  const s = w.status ?? {};
  const want = w.spec.replicas ?? 1;
  if ((s.observedGeneration ?? 0) < (w.metadata?.generation ?? 0)) return false;
  if (w.kind === "StatefulSet")
    return (
      s.currentRevision === s.updateRevision &&
      (s.updatedReplicas ?? 0) >= want &&
      (s.readyReplicas ?? 0) >= want
    );
  return (s.updatedReplicas ?? 0) >= want && (s.replicas ?? 0) <= want && (s.availableReplicas ?? 0) >= want;
}

const id = (w: Workload) => `${w.kind}/${w.metadata?.name ?? ""}`;
const template = (w: Workload) => JSON.stringify(w.spec.template);

type Sample = { at: number; rolling: Map<string, string[]>; changed: Map<string, number> };
type Wait = { workload: string; cause: string; since: string };

/**
 * Patches the log level of both platforms at once and samples the workloads of both (and their
 * status) until both rolled and are Running; `meanwhile` runs once the first roll is seen.
 */
async function rollBoth(level: string, meanwhile?: () => Promise<void>) {
  const namespaces = fx.namespaces;
  // At rest first: nothing replacing pods in either platform.
  await eventually(
    "both platforms at rest",
    async () => {
      for (const ns of namespaces) if (!(await workloads(ns)).every(settled)) return undefined;
      return true;
    },
    180_000,
  );
  const baseline = new Map<string, Map<string, string>>();
  for (const ns of namespaces)
    baseline.set(ns, new Map((await workloads(ns)).map((w) => [id(w), template(w)])));

  const samples: Sample[] = [];
  const waits = new Map<string, Wait[]>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      const rolling = new Map<string, string[]>();
      const changed = new Map<string, number>();
      // One sample: every list and read of both platforms at once, so the sample is one instant
      // as nearly as the API server allows.
      const seen = await Promise.all(
        namespaces.map(async (ns) => ({
          ns,
          workloads: await workloads(ns),
          platform: await readPlatform(client, ns, NAME),
        })),
      );
      for (const { ns, workloads: all, platform } of seen) {
        const base = baseline.get(ns) ?? new Map<string, string>();
        const mine = all.filter((w) => base.get(id(w)) !== template(w));
        changed.set(ns, mine.length);
        rolling.set(ns, mine.filter((w) => !settled(w)).map(id));
        for (const w of platform.status?.disruption?.waiting ?? [])
          if (w.cause === "FleetLimit" && !waits.get(ns)?.some((x) => x.workload === w.workload))
            waits.set(ns, [...(waits.get(ns) ?? []), w]);
      }
      samples.push({ at, rolling, changed });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const patchedAt = Date.now();
  let finished: OntoPlatform[] = [];
  try {
    await Promise.all(
      namespaces.map((namespace) =>
        client.mergePatch(
          { ...PLATFORM_REF, namespace, name: NAME },
          { spec: { observability: { logging: { level } } } },
        ),
      ),
    );
    if (meanwhile) {
      await eventually("a first roll", async () =>
        samples.some((s) => namespaces.some((ns) => (s.rolling.get(ns) ?? []).length > 0)) ? true : undefined,
      );
      await meanwhile();
    }
    // Both end with the change applied and every workload settled.
    finished = await eventually(
      "both platforms rolled",
      async () => {
        const last = samples.at(-1);
        if (!last || last.at < patchedAt) return undefined;
        const done = namespaces.every(
          (ns) => (last.changed.get(ns) ?? 0) > 0 && (last.rolling.get(ns) ?? []).length === 0,
        );
        return done
          ? Promise.all(namespaces.map((ns) => waitForPhase(client, ns, NAME, "Running")))
          : undefined;
      },
      300_000,
      1_000,
    );
  } finally {
    sampling = false;
    await sampler;
  }

  const firstChanged = (ns: string) => samples.find((s) => (s.changed.get(ns) ?? 0) > 0)?.at ?? Infinity;
  const lastRolling = (ns: string) =>
    samples.filter((s) => (s.rolling.get(ns) ?? []).length > 0).at(-1)?.at ?? -Infinity;
  const [first = "", second = ""] = [...namespaces].sort((a, b) => firstChanged(a) - firstChanged(b));
  const rolled = (ns: string) => Math.max(0, ...samples.map((s) => s.changed.get(ns) ?? 0));
  const overlap = samples.filter((s) => namespaces.every((ns) => (s.rolling.get(ns) ?? []).length > 0));
  console.log(
    `fleet limit 1, log level ${level}: ${samples.length} samples; overlap samples ${overlap.length}; ` +
      `${first}: started ${firstChanged(first) - patchedAt} ms after the patch, rolls finished at ${lastRolling(first) - patchedAt} ms (${rolled(first)} workloads rolled); ` +
      `${second}: waited, started ${firstChanged(second) - patchedAt} ms after the patch (${firstChanged(second) - lastRolling(first)} ms after ${first}'s rolls finished), finished at ${lastRolling(second) - patchedAt} ms (${rolled(second)} workloads rolled)`,
  );
  console.log(`FleetLimit waits seen: ${JSON.stringify(Object.fromEntries(waits))}`);
  return { samples, waits, patchedAt, finished, first, second, overlap, firstChanged, lastRolling };
}

describe("two platforms under a fleet limit of 1", () => {
  it("never roll at the same time: the second starts after the first's rolls finished", async () => {
    const run = await rollBoth("DEBUG");
    const { first, second, patchedAt, waits } = run;
    expect(run.overlap).toEqual([]);
    expect(run.firstChanged(second)).toBeGreaterThan(run.lastRolling(first));
    // The second one waited, and said so in its status (with since) ...
    const shown = waits.get(second) ?? [];
    expect(shown.length).toBeGreaterThan(0);
    for (const w of shown)
      expect(Date.parse(w.since)).toBeGreaterThanOrEqual(Math.floor(patchedAt / 1000) * 1000);
    expect(waits.get(first)).toBeUndefined();
    // ... and with one Event.
    const events = (await client.list("events.k8s.io/v1", "Event", { namespace: second })).items.filter(
      (e) => (e as KubeObject & { reason?: string }).reason === "WaitingForFleetLimit",
    ) as (KubeObject & { note?: string; series?: { count?: number } })[];
    console.log(
      `Events: ${events.map((e) => `${e.note ?? ""} (series ${e.series?.count ?? 1})`).join("; ")}`,
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.series).toBeUndefined();
    // Both Running with DEBUG rendered and nothing left waiting.
    for (const p of run.finished) {
      expect(p.status?.phase).toBe("Running");
      expect(p.status?.disruption?.waiting).toBeUndefined();
      const maps = (await client.list("v1", "ConfigMap", { namespace: p.metadata.namespace }))
        .items as (KubeObject & {
        data?: Record<string, string>;
      })[];
      expect(maps.some((m) => m.data?.["LOG_LEVEL"] === "DEBUG")).toBe(true);
    }
  });

  it("an operator restarted while the first rolls (a new leader, an empty slot table) still holds the second back", async () => {
    // Each platform's ontology-service is made slow to roll (a new pod counts as available only
    // after 25 s), so the first roll outlasts the operator's restart. Another field manager sets
    // it: the operator does not own minReadySeconds and keeps it; the pod template is unchanged.
    const tester = new KubeClient(loadKubeConfig({ path: kubeconfigPath() }), { fieldManager: "fleet-test" });
    for (const namespace of fx.namespaces)
      await tester.mergePatch(
        { apiVersion: "apps/v1", kind: "Deployment", namespace, name: "ontology-service" },
        { spec: { minReadySeconds: 25 } },
      );
    let restartedAt = 0;
    const run = await rollBoth("WARN", async () => {
      await fx.restartOperator();
      restartedAt = Date.now();
    });
    const firstStillRolling = run.samples.some(
      (s) => s.at >= restartedAt && (s.rolling.get(run.first) ?? []).length > 0,
    );
    console.log(
      `operator restarted ${restartedAt - run.patchedAt} ms after the patch; ${run.first} still rolling then: ${firstStillRolling}`,
    );
    expect(firstStillRolling).toBe(true);
    expect(run.overlap).toEqual([]);
    expect(run.firstChanged(run.second)).toBeGreaterThan(run.lastRolling(run.first));
    for (const p of run.finished) expect(p.status?.phase).toBe("Running");
  }, 420_000);
});
