// Decisions of the platform reconciler from in-memory caches (the same Store the informers fill):
// the gates, what apply, prune, the namespace labels and the stuck-pod rule plan, the write-ahead's
// status update, the reconciler's memory of its own writes, and the status read from workloads.
// The cluster tests (test/cluster/platform-*.test.ts) run the same code against the API server.
import { describe, expect, it } from "vitest";
import {
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  PLATFORM_REF,
  resolveSpec,
  type OntoPlatform,
  type OntoPlatformStatus,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { PRODUCT_CATALOG } from "../../release/index.js";
import { GENERATED_SECRET_LABEL, MANAGED_KINDS, type RenderedObject } from "../../render/index.js";
import { Store } from "../../runtime/index.js";
import { StaleStatusError } from "../shared/platform-status.js";
import { planApply } from "./apply.js";
import { withAppliedHash } from "./drift.js";
import { checkGates } from "./gates.js";
import { planNamespaceLabels } from "./namespace-labels.js";
import { planPrune } from "./prune.js";
import { tlsProblems } from "./spec-problems.js";
import { componentWorkloads } from "./status-input.js";
import { StatusWriter, olderThan } from "../shared/status-writer.js";
import { planStuckPodReplacement, unschedulableMessages } from "./stuck-pods.js";
import { aheadUpdate } from "./write-ahead.js";

const NOW = new Date("2026-01-01T10:00:00Z");
const NS = "ns";

function platform(extra: Partial<OntoPlatform["metadata"]> = {}, status?: OntoPlatformStatus): OntoPlatform {
  return {
    ...PLATFORM_REF,
    metadata: {
      name: "p",
      namespace: NS,
      uid: "uid-p",
      generation: 3,
      creationTimestamp: "2026-01-01T09:00:00Z",
      ...extra,
    },
    spec: { version: "1.5.0" },
    ...(status ? { status } : {}),
  };
}

function store(...objects: KubeObject[]): Store<KubeObject> {
  const s = new Store<KubeObject>();
  for (const o of objects) s.upsert(o);
  return s;
}

function owned(kind: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
    kind,
    metadata: {
      name,
      namespace: NS,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [INSTANCE_LABEL]: "p", ...labels },
      ownerReferences: [
        { apiVersion: PLATFORM_REF.apiVersion, kind: PLATFORM_REF.kind, name: "p", uid: "uid-p" },
      ],
    },
  };
}

function configMap(name: string, data: Record<string, string>): RenderedObject {
  return withAppliedHash({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: NS, labels: {}, ownerReferences: [] },
    data,
  });
}

describe("gates", () => {
  it("opens with the resolved spec for a valid platform alone in its namespace", () => {
    const gate = checkGates(platform(), store(platform()), PRODUCT_CATALOG, NOW);
    expect(gate.open && gate.spec.version).toBe("1.5.0");
  });

  it("closes for the younger of two platforms in a namespace, with NamespaceTaken and phase Error", () => {
    const older = platform({ name: "first", creationTimestamp: "2026-01-01T08:00:00Z" });
    const gate = checkGates(platform(), store(older, platform()), PRODUCT_CATALOG, NOW);
    expect(gate.open).toBe(false);
    if (gate.open) return;
    const status = gate.status({ phase: "Running", conditions: [] });
    expect(status.phase).toBe("Error");
    expect(status.observedGeneration).toBe(3);
    expect(status.conditions?.[0]).toMatchObject({
      type: "Degraded",
      status: "True",
      reason: "NamespaceTaken",
    });
    expect(status.conditions?.[0]?.message).toContain("OntoPlatform first already manages namespace ns");
    // The older one is not blocked by the younger; a terminating older one blocks nobody.
    expect(
      checkGates(older, store(older as KubeObject, platform() as KubeObject), PRODUCT_CATALOG, NOW).open,
    ).toBe(true);
    const leaving = { ...older, metadata: { ...older.metadata, deletionTimestamp: "2026-01-01T09:59:00Z" } };
    expect(checkGates(platform(), store(leaving as KubeObject), PRODUCT_CATALOG, NOW).open).toBe(true);
  });

  it("closes on a version no release describes, with UnknownRelease: Error before it ever ran, Degraded after", () => {
    const unknown = { ...platform(), spec: { version: "9.9.9" } } as OntoPlatform;
    const gate = checkGates(unknown, store(), PRODUCT_CATALOG, NOW);
    expect(gate.open).toBe(false);
    if (gate.open) return;
    const first = gate.status({});
    expect(first.phase).toBe("Error");
    const degraded = first.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "UnknownRelease" });
    expect(degraded?.message).toContain("9.9.9");
    expect(gate.status({ version: "1.5.0" }).phase).toBe("Degraded");
  });
});

describe("apply plan", () => {
  it("creates what is missing, updates what the spec changed, reverts drift, and leaves the rest", () => {
    const same = configMap("same", { a: "1" });
    const missing = configMap("missing", { a: "1" });
    const changed = configMap("changed", { a: "2" });
    const drifted = configMap("drifted", { a: "1" });
    const live = new Map<string, KubeObject>([
      ["same", same],
      ["changed", configMap("changed", { a: "1" })],
      ["drifted", { ...drifted, data: { a: "edited" } } as KubeObject],
    ]);
    const plan = planApply([same, missing, changed, drifted], (o) => live.get(o.metadata.name));
    expect(plan.map((a) => [a.verb, a.reason, a.message])).toEqual([
      ["create", "Missing", "created ConfigMap/missing"],
      ["update", "SpecChanged", "updated ConfigMap/changed to the spec"],
      ["update", "Drift", "reverted manual change of ConfigMap/drifted at .data.a"],
    ]);
    expect(plan[0]?.failure).toEqual({ reason: "ApplyFailed", message: "could not apply ConfigMap/missing" });
    expect(plan.map((a) => a.label)).toEqual(["ConfigMap/missing", "ConfigMap/changed", "ConfigMap/drifted"]);
  });

  it("plans nothing when every live object matches", () => {
    const objects = [configMap("a", { x: "1" }), configMap("b", { y: "2" })];
    expect(planApply(objects, (o) => o)).toEqual([]);
  });
});

describe("prune plan", () => {
  const kinds = MANAGED_KINDS.filter((k) => k.kind === "ConfigMap" || k.kind === "Secret");
  const spec = (secrets: "Retain" | "Delete") =>
    resolveSpec({ version: "1.5.0", retentionPolicy: { secrets } });

  it("deletes only this platform's objects that the spec no longer asks for", () => {
    const caches = {
      ConfigMap: store(
        owned("ConfigMap", "kept"),
        owned("ConfigMap", "dropped"),
        {
          ...owned("ConfigMap", "foreign"),
          metadata: { ...owned("ConfigMap", "foreign").metadata, ownerReferences: [] },
        },
        owned("ConfigMap", "other-instance", { [INSTANCE_LABEL]: "q" }),
      ),
      Secret: store(),
    };
    const plan = planPrune(platform(), spec("Retain"), [configMap("kept", {})], kinds, (k) =>
      k.kind === "Secret" ? caches.Secret : caches.ConfigMap,
    );
    expect(plan.map((a) => [a.verb, a.target.name, a.reason, a.label])).toEqual([
      ["delete", "dropped", "Pruned", "prune ConfigMap/dropped"],
    ]);
  });

  it("keeps generated Secrets under retentionPolicy Retain, and prunes them under Delete", () => {
    const secret = owned("Secret", "postgres-credentials", { [GENERATED_SECRET_LABEL]: "true" });
    const cache = (k: { kind: string }) => (k.kind === "Secret" ? store(secret) : store());
    expect(planPrune(platform(), spec("Retain"), [], kinds, cache)).toEqual([]);
    expect(planPrune(platform(), spec("Delete"), [], kinds, cache).map((a) => a.target.name)).toEqual([
      "postgres-credentials",
    ]);
  });
});

describe("namespace labels", () => {
  const tenant = resolveSpec({ version: "1.5.0", tenancy: { mode: "namespace" } });
  const labels = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
    "pod-security.kubernetes.io/audit": "restricted",
    "pod-security.kubernetes.io/warn": "restricted",
  };
  const namespace = (l: Record<string, string>): KubeObject => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS, labels: l },
  });

  it("labels a tenant namespace that lacks a Pod Security label, once", () => {
    const plan = planNamespaceLabels(NS, tenant, store(namespace({})));
    expect(plan.map((a) => [a.verb, a.reason, a.label])).toEqual([
      ["patch", "PodSecurityRestricted", "Namespace/ns"],
    ]);
    expect(planNamespaceLabels(NS, tenant, store(namespace(labels)))).toEqual([]);
  });

  it("leaves the namespace of a platform that is no tenant alone", () => {
    expect(planNamespaceLabels(NS, resolveSpec({ version: "1.5.0" }), store(namespace({})))).toEqual([]);
  });
});

describe("stuck and unschedulable pods", () => {
  const sts: KubeObject = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "kafka", namespace: NS, labels: { [INSTANCE_LABEL]: "p" } },
    spec: { updateStrategy: { rollingUpdate: { partition: 1 } } },
    status: { updateRevision: "kafka-new" },
  } as KubeObject;
  const pod = (name: string, revision: string, scheduled: string, phase = "Pending"): KubeObject =>
    ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace: NS,
        labels: {
          [INSTANCE_LABEL]: "p",
          "app.kubernetes.io/name": "kafka",
          "controller-revision-hash": revision,
        },
      },
      status: {
        phase,
        conditions: [
          {
            type: "PodScheduled",
            status: scheduled,
            message: "0/8 nodes are available: 8 node(s) didn't match.\nmore",
          },
        ],
      },
    }) as KubeObject;

  it("replaces an unschedulable pod of an outdated revision at or above the partition, nothing else", () => {
    const pods = [
      pod("kafka-0", "kafka-old", "False"), // below the partition: kept on purpose
      pod("kafka-1", "kafka-old", "False"), // stuck: replaced
      pod("kafka-2", "kafka-new", "False"), // current revision: the scheduler's problem, not a stuck pod
      pod("kafka-3", "kafka-old", "True", "Running"),
    ];
    const plan = planStuckPodReplacement(platform(), [sts], pods);
    expect(plan.map((a) => [a.verb, a.target.name, a.reason, a.label])).toEqual([
      ["delete", "kafka-1", "StuckPodReplaced", "Pod/kafka-1"],
    ]);
  });

  it("gives each component the first line of the scheduler's message, for its status", () => {
    const messages = unschedulableMessages(platform(), [pod("kafka-1", "kafka-old", "False")]);
    expect(messages.get("kafka")).toBe("0/8 nodes are available: 8 node(s) didn't match.");
    const workloads = componentWorkloads(platform(), { Deployment: [], StatefulSet: [sts] }, [
      pod("kafka-1", "x", "False"),
    ]);
    expect(workloads.get("kafka")).toMatchObject({
      kind: "StatefulSet",
      unschedulable: messages.get("kafka"),
    });
  });
});

describe("spec problems", () => {
  it("names the ingress's own TLS Secret when it does not exist; the platform certificate is issued, not a problem", () => {
    const spec = resolveSpec({
      version: "1.5.0",
      global: { tlsEnabled: true, tlsSecretName: "onto-tls" },
      gateway: { ingress: { enabled: true, host: "onto.example.com", tls: true, tlsSecretName: "edge-tls" } },
    });
    expect(tlsProblems(NS, spec, store())).toEqual([
      {
        field: "spec.gateway.ingress.tlsSecretName",
        reason: "MissingTLSSecret",
        message: "Secret ns/edge-tls does not exist",
      },
    ]);
    const tls: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "edge-tls", namespace: NS },
    };
    expect(tlsProblems(NS, spec, store(tls))).toEqual([]);
    const shared = resolveSpec({ ...spec, gateway: { ingress: { enabled: true, host: "h", tls: true } } });
    expect(tlsProblems(NS, shared, store())).toEqual([]);
  });
});

describe("write-ahead", () => {
  const decision = {
    upgrade: {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress" as const,
      startedAt: "2026-01-01T10:00:00Z",
      completedComponents: [],
    },
    condition: { status: "True" as const, reason: "Upgrading" as const, message: "upgrading 1.5.0 -> 1.6.0" },
  };

  it("writes the decision's upgrade record and Upgrading condition over the current status", () => {
    const update = aheadUpdate(platform({}, { phase: "Running" }), decision, NOW);
    const status = update?.({ phase: "Running", conditions: [] });
    expect(status?.upgrade).toEqual(decision.upgrade);
    expect(status?.conditions).toEqual([
      {
        type: "Upgrading",
        status: "True",
        reason: "Upgrading",
        message: "upgrading 1.5.0 -> 1.6.0",
        lastTransitionTime: "2026-01-01T10:00:00Z",
        observedGeneration: 3,
      },
    ]);
  });

  it("refuses a status whose upgrade record changed since the decision, and writes nothing for an empty one", () => {
    const update = aheadUpdate(platform({}, { phase: "Running" }), decision, NOW);
    expect(() => update?.({ upgrade: { ...decision.upgrade, phase: "Failed" } })).toThrow(StaleStatusError);
    expect(aheadUpdate(platform(), { requeueAfterMs: 5 }, NOW)).toBeUndefined();
  });
});

describe("own writes", () => {
  it("compares etcd resource versions as numbers, and trusts the cache for any other form", () => {
    expect(olderThan("9", "10")).toBe(true);
    expect(olderThan("10", "10")).toBe(false);
    expect(olderThan(undefined, "10")).toBe(true);
    expect(olderThan("abc", "10")).toBe(false);
  });

  it("reads a platform with its own last status until the cache holds that write", () => {
    const writer = new StatusWriter();
    const cached = platform({ resourceVersion: "5" }, { phase: "Provisioning" });
    expect(writer.latest(cached)).toBe(cached);
    const written = platform({ resourceVersion: "7" }, { phase: "Running" });
    const next = writer.remember(cached, written, { phase: "Running" });
    expect(next.metadata.resourceVersion).toBe("7");
    // The cache is behind (a version before the write): the write wins, with its resourceVersion.
    const behind = writer.latest(platform({ resourceVersion: "6" }, { phase: "Provisioning" }));
    expect([behind.status?.phase, behind.metadata.resourceVersion]).toEqual(["Running", "7"]);
    // The cache caught up: it is trusted again, and the memory is dropped.
    const caughtUp = platform({ resourceVersion: "7" }, { phase: "Running" });
    expect(writer.latest(caughtUp)).toBe(caughtUp);
    expect(writer.latest(cached)).toBe(cached);
  });
});
