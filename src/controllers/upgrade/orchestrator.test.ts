// Decisions of the upgrade orchestrator from a platform's status and in-memory caches (the same
// Store the informers fill): when an upgrade starts, holds, is refused or blocked, and what each
// step renders. The cluster tests (test/cluster/upgrade-*.test.ts) run the same code for real.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatform, type OntoPlatformStatus } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import {
  BUILT_IN_RELEASES,
  PRODUCT_CATALOG,
  catalogFrom,
  releaseFor,
  releaseObject,
} from "../../release/index.js";
import { Store } from "../../runtime/index.js";
import { FORCE_ANNOTATION, RETRY_ANNOTATION, UpgradeOrchestrator, podUnderUpgrade } from "./orchestrator.js";

const NOW = new Date("2026-01-01T10:00:00Z");

/** 1.6.0's images as 1.6.0-pnr, whose kafka rollout cannot be undone. */
const POINT_RELEASES = catalogFrom(BUILT_IN_RELEASES, [
  {
    ...releaseObject(releaseFor("1.6.0")),
    metadata: { name: "pnr" },
    spec: {
      ...releaseObject(releaseFor("1.6.0")).spec,
      version: "1.6.0-pnr",
      upgradeFrom: [{ versions: "*", path: "Allowed" }],
      irreversible: [{ component: "kafka", step: "Rollout", reason: "metadata.version is raised" }],
    },
  },
]).catalog;

function orchestrator(objects: KubeObject[] = [], releases = POINT_RELEASES): UpgradeOrchestrator {
  const stores = new Map<string, Store<KubeObject>>();
  for (const o of objects) {
    const store = stores.get(o.kind ?? "") ?? new Store<KubeObject>();
    store.upsert(o);
    stores.set(o.kind ?? "", store);
  }
  return new UpgradeOrchestrator({
    cache: (kind) => stores.get(kind.kind) ?? new Store<KubeObject>(),
    registry: new Registry(),
    releases,
    now: () => NOW,
  });
}

function platform(
  version: string,
  status: OntoPlatformStatus,
  annotations: Record<string, string> = {},
): OntoPlatform {
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "p", namespace: "ns", uid: "u", generation: 2, annotations },
    spec: { version },
    status,
  };
}

const running = (extra: OntoPlatformStatus = {}): OntoPlatformStatus => ({
  phase: "Running",
  version: "1.5.0",
  ...extra,
});

describe("UpgradeOrchestrator.decide", () => {
  it("does nothing before the platform ever ran fully, or when the version is unchanged", () => {
    const o = orchestrator();
    expect(
      o.decide(platform("1.6.0", { phase: "Provisioning" }), resolveSpec({ version: "1.6.0" })),
    ).toBeUndefined();
    expect(o.decide(platform("1.5.0", running()), resolveSpec({ version: "1.5.0" }))).toBeUndefined();
  });

  it("starts with the first planned component's canary, the rest pinned on the old version", () => {
    const d = orchestrator().decide(platform("1.6.0", running()), resolveSpec({ version: "1.6.0" }));
    expect(d?.upgrade).toMatchObject({
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress",
      component: "postgres",
      group: "infrastructure",
      step: "Canary",
      progress: "0/12", // temporal is off by default
      completedComponents: [],
    });
    expect(d?.step?.postgres).toEqual({ version: "1.6.0", partition: 0 });
    expect(d?.step?.["ontology-service"]).toEqual({ version: "1.5.0" });
    expect(d?.condition).toMatchObject({ status: "True", reason: "Upgrading" });
    expect(d?.notes?.map((n) => n.reason)).toEqual(["UpgradeStarted", "CanaryCreated"]);
  });

  it("goes straight to the rollout without a canary when upgradeStrategy.canary is false", () => {
    const spec = resolveSpec({ version: "1.6.0", upgradeStrategy: { canary: false } });
    const d = orchestrator().decide(platform("1.6.0", running()), spec);
    expect(d?.upgrade).toMatchObject({ component: "postgres", step: "Rollout" });
    expect(d?.step?.postgres).toEqual({ version: "1.6.0" });
    expect(d?.notes?.map((n) => n.reason)).toEqual(["UpgradeStarted", "RolloutStarted"]);
  });

  it("refuses a downgrade and holds every component where it is, unless forced", () => {
    const spec = resolveSpec({ version: "1.4.2" });
    const d = orchestrator().decide(platform("1.4.2", running()), spec);
    expect(d?.upgrade).toBeUndefined();
    expect(d?.condition).toMatchObject({ status: "False", reason: "UpgradeRefused" });
    expect(d?.condition?.message).toMatch(/^upgrade 1\.5\.0 -> 1\.4\.2: a downgrade.*: needs force/);
    expect(d?.step?.postgres).toEqual({ version: "1.5.0" });
    const forced = orchestrator().decide(platform("1.4.2", running(), { [FORCE_ANNOTATION]: "true" }), spec);
    expect(forced?.upgrade?.phase).toBe("InProgress");
  });

  it("does not start while the platform is Degraded unless forced", () => {
    const spec = resolveSpec({ version: "1.6.0" });
    const d = orchestrator().decide(platform("1.6.0", running({ phase: "Degraded" })), spec);
    expect(d?.condition).toMatchObject({ status: "False", reason: "UpgradeBlocked" });
    expect(d?.requeueAfterMs).toBeGreaterThan(0);
    const forcedSpec = resolveSpec({ version: "1.6.0", upgradeStrategy: { force: true } });
    expect(
      orchestrator().decide(platform("1.6.0", running({ phase: "Degraded" })), forcedSpec)?.upgrade?.phase,
    ).toBe("InProgress");
  });

  it("after a failure holds until the version changes or a new retry value is set", () => {
    const failed: OntoPlatformStatus["upgrade"] = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "Failed",
      startedAt: "2026-01-01T09:00:00Z",
      completedComponents: ["postgres"],
      planned: { postgres: "1.5.0", redis: "1.5.0" },
      component: "redis",
      failure: { component: "redis", reason: "CrashLoopBackOff", message: "x" },
      retryRequest: "1",
    };
    const spec = resolveSpec({ version: "1.6.0" });
    const held = orchestrator().decide(platform("1.6.0", running({ upgrade: failed })), spec);
    expect(held?.upgrade).toBeUndefined();
    expect(held?.step?.postgres).toEqual({ version: "1.6.0" });
    expect(held?.step?.redis).toEqual({ version: "1.5.0" });
    const sameRetry = orchestrator().decide(
      platform("1.6.0", running({ upgrade: failed }), { [RETRY_ANNOTATION]: "1" }),
      spec,
    );
    expect(sameRetry?.upgrade).toBeUndefined();
    const retried = orchestrator().decide(
      platform("1.6.0", running({ upgrade: failed }), { [RETRY_ANNOTATION]: "2" }),
      spec,
    );
    expect(retried?.upgrade).toMatchObject({ phase: "InProgress", component: "redis", retryRequest: "2" });
    expect(Object.keys(retried?.upgrade?.planned ?? {})).not.toContain("postgres");
  });

  it("renders a promoted component on the target whatever the cache shows (write-ahead wins)", () => {
    const inFlight: OntoPlatformStatus["upgrade"] = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress",
      startedAt: "2026-01-01T09:59:00Z",
      stepStartedAt: "2026-01-01T09:59:59Z",
      completedComponents: [],
      planned: { "ontology-service": "1.5.0", gateway: "1.5.0" },
      component: "ontology-service",
      step: "Rollout",
    };
    const d = orchestrator().decide(
      platform("1.6.0", running({ upgrade: inFlight })),
      resolveSpec({ version: "1.6.0" }),
    );
    expect(d?.upgrade).toBeUndefined();
    expect(d?.step?.["ontology-service"]).toEqual({ version: "1.6.0" });
    expect(d?.step?.gateway).toEqual({ version: "1.5.0" });
    expect(d?.step?.postgres).toEqual({ version: "1.6.0" });
  });

  it("fails a canary step at the health timeout and rolls the component back", () => {
    const canary: OntoPlatformStatus["upgrade"] = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress",
      startedAt: "2026-01-01T09:00:00Z",
      stepStartedAt: "2026-01-01T09:00:00Z",
      completedComponents: [],
      planned: { "ontology-service": "1.5.0" },
      component: "ontology-service",
      step: "Canary",
    };
    const d = orchestrator().decide(
      platform("1.6.0", running({ upgrade: canary })),
      resolveSpec({ version: "1.6.0" }),
    );
    expect(d?.upgrade).toMatchObject({
      phase: "RollingBack",
      step: "Rollback",
      failure: { component: "ontology-service", reason: "CanaryNotReady" },
    });
    expect(d?.step?.["ontology-service"]).toEqual({ version: "1.5.0" });
  });
});

describe("points of no return", () => {
  const spec = resolveSpec({ version: "1.6.0-pnr" });
  const base = {
    from: "1.5.0",
    to: "1.6.0-pnr",
    startedAt: "2026-01-01T09:00:00Z",
    planned: { kafka: "1.5.0", "ontology-service": "1.5.0", gateway: "1.5.0" },
  };

  it("records the point when the marked step starts, and says so", () => {
    const canary: OntoPlatformStatus["upgrade"] = {
      ...base,
      phase: "InProgress",
      stepStartedAt: "2026-01-01T09:59:00Z",
      completedComponents: [],
      component: "kafka",
      step: "Canary",
    };
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "kafka", namespace: "ns" },
      spec: {
        replicas: 3,
        template: { spec: { containers: [{ name: "kafka", image: "apache/kafka:3.8.1" }] } },
      },
    } as KubeObject;
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "kafka-2",
        namespace: "ns",
        labels: { "app.kubernetes.io/instance": "p", "app.kubernetes.io/name": "kafka" },
      },
      spec: { containers: [{ name: "kafka", image: "apache/kafka:3.8.1" }] },
      status: {
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T09:59:00Z" }],
        containerStatuses: [{ name: "kafka", ready: true, restartCount: 0, state: { running: {} } }],
      },
    } as KubeObject;
    const d = orchestrator([sts, pod]).decide(platform("1.6.0-pnr", running({ upgrade: canary })), spec);
    expect(d?.upgrade).toMatchObject({
      step: "Rollout",
      pointOfNoReturn: { component: "kafka", step: "Rollout", version: "1.6.0-pnr" },
    });
    expect(d?.notes?.map((n) => n.reason)).toContain("PointOfNoReturn");
  });

  it("does not roll back a failure past the point: ForwardFix, the failed step kept as it is", () => {
    const past: OntoPlatformStatus["upgrade"] = {
      ...base,
      phase: "InProgress",
      stepStartedAt: "2026-01-01T09:00:00Z",
      completedComponents: ["kafka"],
      component: "ontology-service",
      step: "Canary",
      pointOfNoReturn: {
        component: "kafka",
        step: "Rollout",
        version: "1.6.0-pnr",
        reason: "metadata.version is raised",
        at: "2026-01-01T09:00:00Z",
      },
    };
    const d = orchestrator().decide(platform("1.6.0-pnr", running({ upgrade: past })), spec);
    expect(d?.upgrade).toMatchObject({
      phase: "ForwardFix",
      failure: { component: "ontology-service", reason: "CanaryNotReady" },
    });
    expect(d?.condition).toMatchObject({ status: "False", reason: "ForwardFixRequired" });
    expect(d?.condition?.message).toMatch(/not rolled back: kafka Rollout of 1\.6\.0-pnr cannot be undone/);
    expect(d?.notes?.[0]).toMatchObject({ reason: "ForwardFixRequired", warning: true });
    // The canary stays (nothing rolls back), kafka stays on the new version.
    expect(d?.step?.["ontology-service"]).toEqual({ version: "1.5.0", canaryVersion: "1.6.0-pnr" });
    expect(d?.step?.kafka).toEqual({ version: "1.6.0-pnr" });

    // Then it holds, frozen, until a fix: no new record, the same step.
    const stopped = { ...past, ...d?.upgrade } as OntoPlatformStatus["upgrade"];
    const held = orchestrator().decide(platform("1.6.0-pnr", running({ upgrade: stopped })), spec);
    expect(held?.upgrade).toBeUndefined();
    expect(held?.step?.["ontology-service"]).toEqual({ version: "1.5.0", canaryVersion: "1.6.0-pnr" });

    // A rollback by hand, even forced, is refused with the reason, and nothing moves.
    const back = orchestrator().decide(
      platform("1.5.0", running({ phase: "Degraded", upgrade: stopped }), { [FORCE_ANNOTATION]: "true" }),
      resolveSpec({ version: "1.5.0" }),
    );
    expect(back?.upgrade).toBeUndefined();
    expect(back?.condition).toMatchObject({ status: "False", reason: "RollbackRefused" });
    expect(back?.condition?.message).toMatch(
      /refusing 1\.6\.0-pnr -> 1\.5\.0: .*kafka Rollout of 1\.6\.0-pnr/,
    );
    expect(back?.step?.kafka).toEqual({ version: "1.6.0-pnr" });

    // A forward fix (a newer release) starts although the platform is Degraded, and keeps the point.
    const fix = orchestrator([], POINT_RELEASES).decide(
      platform("1.6.1", running({ phase: "Degraded", upgrade: stopped })),
      resolveSpec({ version: "1.6.1" }),
    );
    expect(fix?.upgrade).toMatchObject({
      phase: "InProgress",
      to: "1.6.1",
      pointOfNoReturn: { component: "kafka" },
    });
  });

  it("refuses a forced downgrade across a built-in point of no return (temporal's schema in 1.6.0)", () => {
    const spec150 = resolveSpec({
      version: "1.5.0",
      intelligencePlane: { agentRuntime: { temporal: { enabled: true } } },
    });
    const d = orchestrator([], PRODUCT_CATALOG).decide(
      platform("1.5.0", { phase: "Running", version: "1.6.1" }, { [FORCE_ANNOTATION]: "true" }),
      spec150,
    );
    expect(d?.condition).toMatchObject({ reason: "RollbackRefused" });
    expect(d?.condition?.message).toMatch(/temporal Canary of 1\.6\.0/);
    // Without Temporal there is nothing irreversible on the way down: force is enough.
    const plain = orchestrator([], PRODUCT_CATALOG).decide(
      platform("1.5.0", { phase: "Running", version: "1.6.1" }, { [FORCE_ANNOTATION]: "true" }),
      resolveSpec({ version: "1.5.0" }),
    );
    expect(plain?.upgrade?.phase).toBe("InProgress");
  });
});

describe("podUnderUpgrade", () => {
  const pod = (labels: Record<string, string>): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "x", namespace: "ns", labels: { "app.kubernetes.io/instance": "p", ...labels } },
  });
  const inFlight = platform(
    "1.6.0",
    running({
      upgrade: {
        from: "1.5.0",
        to: "1.6.0",
        phase: "InProgress",
        startedAt: "2026-01-01T09:00:00Z",
        completedComponents: [],
        component: "kafka",
        step: "Canary",
      },
    }),
  );

  it("claims canaries and the pods of the component in flight, nothing else", () => {
    expect(podUnderUpgrade(inFlight, pod({ "app.kubernetes.io/name": "kafka" }))).toBe(true);
    expect(podUnderUpgrade(inFlight, pod({ "app.kubernetes.io/name": "redis" }))).toBe(false);
    expect(
      podUnderUpgrade(inFlight, pod({ "app.kubernetes.io/name": "gateway", "onto.paas/track": "canary" })),
    ).toBe(true);
    expect(podUnderUpgrade(platform("1.5.0", running()), pod({ "app.kubernetes.io/name": "kafka" }))).toBe(
      false,
    );
  });
});
