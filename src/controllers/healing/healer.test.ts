// Decisions of a healing pass from in-memory caches and pods: what it raises, diagnoses, deletes
// and holds back, and the status it writes over a fresher one. The executor and the status write
// are the healer's; the cluster tests (test/cluster/healing-*.test.ts) run the whole path.
import { describe, expect, it } from "vitest";
import {
  NAME_LABEL,
  resolveSpec,
  type ComponentInfo,
  type OntoPlatform,
  type OntoPlatformStatus,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { Store } from "../../runtime/index.js";
import type { NodeView, PodView, WorkloadView } from "../shared/kube-views.js";
import { diagnoseCrashLoops, diagnosisLookups } from "./crash-diagnoses.js";
import { healOom, needsRender, reconsiderOverrides } from "./memory.js";
import { Pass, type HealingView } from "./pass.js";
import { planEvictedCleanup, planNodeLoss, planStuckOomReplacements } from "./pod-remedies.js";

const NOW = new Date("2026-11-30T03:00:00Z");

function platform(spec: Record<string, unknown> = {}, status: OntoPlatformStatus = {}): OntoPlatform {
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "p", namespace: "ns", uid: "u", generation: 2, resourceVersion: "10" },
    spec: { version: "1.5.0", ...spec },
    status,
  };
}

function pass(spec: Record<string, unknown> = {}, status: OntoPlatformStatus = {}): Pass {
  const p = platform(spec, status);
  return new Pass(p, resolveSpec(p.spec), NOW);
}

function pod(
  name: string,
  component: string,
  status: PodView["status"],
  extra: Partial<PodView> = {},
): PodView {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      labels: { [NAME_LABEL]: component },
      ...extra.metadata,
    },
    spec: { containers: [{ name: component, resources: { limits: { memory: "4Gi" } } }], ...extra.spec },
    status,
  };
}

function oomKilled(name: string): PodView {
  return pod(name, "ontology-service", {
    phase: "Running",
    containerStatuses: [
      {
        name: "ontology-service",
        restartCount: 1,
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137, finishedAt: "2026-11-30T02:59:00Z" } },
      },
    ],
  });
}

function view(extra: Partial<HealingView> = {}, workloads: Record<string, WorkloadView> = {}): HealingView {
  return {
    pods: [],
    nodes: [],
    secrets: new Store<KubeObject>(),
    configMaps: new Store<KubeObject>(),
    workload: (info: ComponentInfo) => workloads[info.name],
    ...extra,
  };
}

describe("memory", () => {
  it("raises the limit of an OOMKilled component by the factor, notes it for after the write, and counts it", () => {
    const p = pass();
    healOom(p, [oomKilled("ontology-service-a")]);
    expect(p.overrides["ontology-service"]).toMatchObject({ memoryLimit: "6Gi", raises: 1 });
    expect(p.afterWrite.map((n) => [n.action, n.reason, n.target.name])).toEqual([
      ["raise-memory", "OOMKilled", "ontology-service"],
    ]);
    expect(p.recent).toEqual([
      { at: "2026-11-30T03:00:00Z", component: "ontology-service", action: "raise-memory" },
    ]);
    expect(p.conditions.find((c) => c.type === "MemoryRaised")).toMatchObject({
      status: "True",
      reason: "OOMKilled",
    });
  });

  it("holds the raise back when the hourly budget is spent, and says why", () => {
    const recentActions = [{ at: "2026-11-30T02:30:00Z", component: "kafka", action: "force-delete" }];
    const p = pass({ selfHealing: { maxActionsPerHour: 1 } }, { healing: { recentActions } });
    healOom(p, [oomKilled("ontology-service-a")]);
    expect(p.overrides).toEqual({});
    expect(p.withheld).toEqual([
      "raise the memory limit of ontology-service: rate limit of 1 healing actions per hour reached",
    ]);
    expect(p.requeueMs).toBe(30 * 60_000);
  });

  it("counts Postgres's automatic failovers of the last hour in the same budget", () => {
    const postgres = { recentFailovers: ["2026-11-30T02:20:00Z", "2026-11-30T01:40:00Z"] };
    const p = pass({ selfHealing: { maxActionsPerHour: 1 } }, { postgres });
    healOom(p, [oomKilled("ontology-service-a")]);
    expect(p.overrides).toEqual({});
    expect(p.withheld).toEqual([
      "raise the memory limit of ontology-service: rate limit of 1 healing actions per hour reached",
    ]);
    // 02:20's failover leaves the window at 03:20 (the one of 01:40 already has).
    expect(p.requeueMs).toBe(20 * 60_000);
    const free = pass({ selfHealing: { maxActionsPerHour: 2 } }, { postgres });
    healOom(free, [oomKilled("ontology-service-a")]);
    expect(free.withheld).toEqual([]);
  });

  it("drops an override once the spec's own limit passes it", () => {
    const memoryOverrides = {
      "ontology-service": { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:00:00Z", raises: 1, atCap: false },
    };
    const p = pass(
      { controlPlane: { ontologyService: { resources: { limits: { memory: "8Gi" } } } } },
      { healing: { memoryOverrides } },
    );
    reconsiderOverrides(p);
    expect(p.overrides).toEqual({});
    expect(p.afterWrite[0]).toMatchObject({ action: "drop-override", reason: "SpecLimitChanged" });
  });

  it("asks for a render while a workload does not carry the override in status yet", () => {
    const memoryOverrides = {
      "ontology-service": { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:00:00Z", raises: 1, atCap: false },
    };
    const p = pass({}, { healing: { memoryOverrides } });
    const deployment = (memory: string): WorkloadView => ({
      metadata: { name: "ontology-service" },
      spec: {
        template: { spec: { containers: [{ name: "ontology-service", resources: { limits: { memory } } }] } },
      },
    });
    expect(needsRender(p, view({}, { "ontology-service": deployment("4Gi") }))).toBe(true);
    expect(needsRender(p, view({}, { "ontology-service": deployment("6144Mi") }))).toBe(false);
  });
});

describe("crash loops", () => {
  const looping = pod(
    "schema-registry-a",
    "schema-registry",
    {
      phase: "Running",
      containerStatuses: [
        {
          name: "schema-registry",
          restartCount: 4,
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { exitCode: 1, message: "cannot read /tls/tls.crt" } },
        },
      ],
    },
    { spec: { volumes: [{ name: "tls", secret: { secretName: "onto-tls" } }] } },
  );

  it("names the missing Secret in the CrashLoop condition and an Event, once per diagnosis", () => {
    const p = pass();
    diagnoseCrashLoops(p, [looping], diagnosisLookups(p, view()));
    const condition = p.conditions.find((c) => c.type === "CrashLoop");
    expect(condition).toMatchObject({ status: "True", reason: "MissingSecret" });
    expect(condition?.message).toContain("Secret onto-tls");
    expect(p.afterWrite).toHaveLength(1);
    expect(p.requeueMs).toBe(30_000);
    // The next pass finds the same diagnosis in status: no second Event.
    const again = pass({}, { conditions: p.conditions });
    diagnoseCrashLoops(again, [looping], diagnosisLookups(again, view()));
    expect(again.afterWrite).toEqual([]);
  });

  it("names the missing Secret of a pod the kubelet cannot start, with the kubelet's words", () => {
    const waiting = pod(
      "auth-service-b",
      "auth-service",
      {
        phase: "Pending",
        containerStatuses: [
          {
            name: "auth-service",
            restartCount: 0,
            state: { waiting: { reason: "ContainerCreating", message: "" } },
          },
        ],
      },
      { spec: { volumes: [{ name: "tls", secret: { secretName: "onto-tls" } }] } },
    );
    const p = pass();
    diagnoseCrashLoops(p, [waiting], diagnosisLookups(p, view()));
    const condition = p.conditions.find((c) => c.type === "CrashLoop");
    expect(condition).toMatchObject({ status: "True", reason: "MissingSecret" });
    expect(condition?.message).toContain("cannot start, ContainerCreating");
    expect(condition?.message).toContain("Secret onto-tls");
    // ContainerCreating with every reference present is a pod starting: nothing to say.
    const present = pass();
    const secrets = new Store<KubeObject>();
    secrets.upsert({ apiVersion: "v1", kind: "Secret", metadata: { name: "onto-tls", namespace: "ns" } });
    diagnoseCrashLoops(present, [waiting], diagnosisLookups(present, view({ secrets })));
    expect(present.conditions).toEqual([]);
  });

  it("clears the condition when no pod crash-loops any more (and adds none to a healthy platform)", () => {
    const p = pass();
    diagnoseCrashLoops(p, [looping], diagnosisLookups(p, view()));
    const healed = pass({}, { conditions: p.conditions });
    diagnoseCrashLoops(healed, [], diagnosisLookups(healed, view()));
    expect(healed.conditions.find((c) => c.type === "CrashLoop")).toMatchObject({
      status: "False",
      reason: "NoCrashLoop",
    });
    const healthy = pass();
    diagnoseCrashLoops(healthy, [], diagnosisLookups(healthy, view()));
    expect(healthy.conditions).toEqual([]);
  });
});

describe("pod remedies", () => {
  const ready = (name: string, status: string, since: string, extra: Partial<NodeView> = {}): NodeView => ({
    metadata: { name, labels: {} },
    status: { conditions: [{ type: "Ready", status, lastTransitionTime: since, lastHeartbeatTime: since }] },
    ...extra,
  });

  it("deletes an evicted pod, naming the pressure its node reports", () => {
    const evicted = pod(
      "auth-service-a",
      "auth-service",
      { phase: "Failed", reason: "Evicted", message: "low on disk" },
      { spec: { nodeName: "w1" } },
    );
    const node: NodeView = {
      metadata: { name: "w1" },
      status: {
        conditions: [
          { type: "Ready", status: "True" },
          { type: "DiskPressure", status: "True" },
        ],
      },
    };
    const plan = planEvictedCleanup(
      pass(),
      [evicted, pod("other", "auth-service", { phase: "Running" })],
      [node],
    );
    expect(plan.map((a) => [a.verb, a.target.name, a.reason, a.warning])).toEqual([
      ["delete", "auth-service-a", "Evicted", true],
    ]);
    expect(plan[0]?.message).toBe(
      "deleted evicted pod auth-service-a (low on disk); node w1 reports DiskPressure=True",
    );
    expect(plan[0]?.budget).toBeUndefined();
  });

  it("force-deletes a StatefulSet pod stranded on a node lost past the grace, within the budget", () => {
    const nodes = [
      ready("w1", "Unknown", "2026-11-30T02:50:00Z"),
      ready("w2", "True", "2026-11-30T02:00:00Z"),
      ready("w3", "True", "2026-11-30T02:00:00Z"),
    ];
    const stranded = pod(
      "postgres-0",
      "postgres",
      { phase: "Running" },
      {
        metadata: {
          name: "postgres-0",
          creationTimestamp: "2026-11-30T01:00:00Z",
          ownerReferences: [
            { apiVersion: "apps/v1", kind: "StatefulSet", name: "postgres", uid: "s", controller: true },
          ],
        },
        spec: { nodeName: "w1" },
      },
    );
    const replicaSetPod = pod("gateway-a", "gateway", { phase: "Running" }, { spec: { nodeName: "w1" } });
    const plan = planNodeLoss(pass(), [stranded, replicaSetPod], nodes, () => false);
    expect(plan.map((a) => [a.verb, a.target.name, a.reason])).toEqual([
      ["force-delete", "postgres-0", "NodeLost"],
    ]);
    expect(plan[0]?.budget).toEqual({
      what: "force-delete pod postgres-0 on lost node w1",
      component: "postgres",
      uid: "uid-postgres-0",
    });
    // Freed lately: not again.
    expect(planNodeLoss(pass(), [stranded], nodes, () => true)).toEqual([]);
  });

  it("deletes a StatefulSet pod OOM-killed at its old limit once the template carries the raise", () => {
    const stuck = (ready: boolean, revision: string): PodView =>
      pod(
        "redis-0",
        "redis",
        {
          phase: "Running",
          conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
          containerStatuses: [
            {
              name: "redis",
              restartCount: 4,
              lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
            },
          ],
        },
        {
          metadata: {
            name: "redis-0",
            labels: { [NAME_LABEL]: "redis", "controller-revision-hash": revision },
          },
          spec: { containers: [{ name: "redis", resources: { limits: { memory: "40Mi" } } }] },
        },
      );
    const redis: WorkloadView = {
      metadata: { name: "redis" },
      spec: {
        template: { spec: { containers: [{ name: "redis", resources: { limits: { memory: "60Mi" } } }] } },
      },
      status: { updateRevision: "redis-new" },
    };
    const plan = planStuckOomReplacements(pass(), [stuck(false, "redis-old")], view({}, { redis }));
    expect(plan.map((a) => [a.verb, a.target.name, a.reason, a.budget])).toEqual([
      ["delete", "redis-0", "OOMKilled", undefined],
    ]);
    expect(plan[0]?.message).toContain("old memory limit 40Mi");
    // Already on the new revision, or Ready: the StatefulSet rolls it by itself.
    expect(planStuckOomReplacements(pass(), [stuck(false, "redis-new")], view({}, { redis }))).toEqual([]);
    expect(planStuckOomReplacements(pass(), [stuck(true, "redis-old")], view({}, { redis }))).toEqual([]);
  });

  it("holds back when most of the pool is NotReady, and says so", () => {
    const nodes = [
      ready("w1", "Unknown", "2026-11-30T02:50:00Z"),
      ready("w2", "Unknown", "2026-11-30T02:50:00Z"),
      ready("w3", "True", "2026-11-30T02:00:00Z"),
    ];
    const p = pass();
    const onLost = pod("postgres-0", "postgres", { phase: "Running" }, { spec: { nodeName: "w1" } });
    expect(planNodeLoss(p, [onLost], nodes, () => false)).toEqual([]);
    expect(p.withheld[0]).toContain("2 of 3 nodes of the platform's pool are NotReady");
  });
});

describe("the status a pass writes", () => {
  it("carries its healing record and its own conditions, every other field as the fresher status has it", () => {
    const p = pass();
    healOom(p, [oomKilled("ontology-service-a")]);
    const fresher: OntoPlatformStatus = {
      phase: "Running",
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "AllComponentsReady",
          message: "13/13",
          lastTransitionTime: "2026-11-30T02:59:59Z",
        },
      ],
    };
    const status = p.statusOver(fresher);
    expect(status.phase).toBe("Running");
    expect(status.conditions?.map((c) => c.type)).toEqual(["Available", "MemoryRaised"]);
    expect(status.healing?.memoryOverrides?.["ontology-service"]?.memoryLimit).toBe("6Gi");
    expect(pass().statusOver({ phase: "Running" })).toEqual({ phase: "Running" });
  });
});
