// Which pod restarts wait: an operator-side template change (always, until opted in or a window),
// a spec-driven one outside every maintenance window; a crash-looping workload's fix never waits,
// an OOM-looping one (the memory raise) does.
import { describe, expect, it } from "vitest";
import {
  resolveSpec,
  type CertificateState,
  type OntoPlatform,
  type OntoPlatformSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { TEMPLATE_REVISION_ANNOTATION, withTlsRevision, type RenderedObject } from "../../render/index.js";
import { goldenCases, renderGolden } from "../../../test/support/golden.js";
import type { FleetAnswer } from "../shared/fleet-limit.js";
import { replacingPods, type WorkloadView } from "../shared/kube-views.js";
import { TLS_RELOADING_COMPONENTS } from "./certificates.js";
import {
  APPROVE_RESTARTS_ANNOTATION,
  certificateDeadline,
  decideDisruption,
  holdForFleet,
  wantsFleetSlot,
} from "./disruption.js";

const cases = goldenCases();
function production() {
  const found = cases["production"];
  if (!found) throw new Error("no production case");
  return structuredClone(found);
}
const NOW = new Date("2026-12-01T12:00:00Z");
const CLOSED = [{ start: "0 2 * * *", duration: "1h", timeZone: "UTC" }];
const OPEN = [{ start: "0 11 * * *", duration: "2h", timeZone: "UTC" }];

function platformOf(annotations?: Record<string, string>): OntoPlatform {
  const input = production();
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { ...input.platform, ...(annotations ? { annotations } : {}) },
    spec: input.spec,
  };
}

function decide(opts: {
  live: RenderedObject[];
  edit?: (spec: OntoPlatformSpec) => void;
  windows?: typeof CLOSED;
  annotations?: Record<string, string>;
  pods?: KubeObject[];
  /** The serial of the platform certificate the desired pods start with. */
  serial?: string;
  certificates?: Record<string, CertificateState>;
}) {
  const input = production();
  opts.edit?.(input.spec);
  input.spec.maintenance = { windows: opts.windows ?? [] };
  const rendered = renderGolden(input);
  const desired = opts.serial ? withSerial(rendered, opts.serial) : rendered;
  const platform: OntoPlatform = {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { ...input.platform, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: input.spec,
  };
  const byKey = new Map(opts.live.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  return decideDisruption({
    platform,
    spec: resolveSpec(input.spec),
    desired,
    live: (o) => byKey.get(`${o.kind}/${o.metadata.name}`),
    pods: opts.pods ?? [],
    ...(opts.certificates ? { certificates: opts.certificates } : {}),
    now: NOW,
  });
}

const withSerial = (objects: RenderedObject[], serial: string) =>
  withTlsRevision(objects, "onto-tls", serial, TLS_RELOADING_COMPONENTS);

/** The live objects as an older operator left them: kafka's template differs, revision 0. */
function olderOperator(): RenderedObject[] {
  const live = renderGolden(production());
  const kafka = live.find((o) => o.kind === "StatefulSet" && o.metadata.name === "kafka");
  if (!kafka) throw new Error("no kafka");
  kafka.metadata.annotations = { [TEMPLATE_REVISION_ANNOTATION]: "0" };
  (
    kafka.spec as { template: { spec: Record<string, unknown> } }
  ).template.spec.terminationGracePeriodSeconds = 5;
  return live;
}

const moreCpu = (spec: OntoPlatformSpec) => {
  spec.gateway = { ...spec.gateway, resources: { requests: { cpu: "900m", memory: "512Mi" } } };
};

const crashPod = (component: string, lastReason: string): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${component}-0`,
      labels: { "app.kubernetes.io/name": component, "app.kubernetes.io/instance": "onto-production" },
    },
    status: {
      containerStatuses: [
        {
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { reason: lastReason } },
        },
      ],
    },
  }) as KubeObject;

describe("disruption control", () => {
  it("holds an operator-side pod-template change without any window, and says why", () => {
    const d = decide({ live: olderOperator() });
    expect([...d.held]).toEqual(["StatefulSet/kafka"]);
    expect(d.status?.waiting).toEqual([
      {
        workload: "StatefulSet/kafka",
        reasons: ["template"],
        cause: "OperatorChange",
        since: NOW.toISOString(),
      },
    ]);
  });

  it("lets it through when the user opts in, or inside a window", () => {
    expect(
      decide({ live: olderOperator(), annotations: { [APPROVE_RESTARTS_ANNOTATION]: "true" } }).held.size,
    ).toBe(0);
    expect(decide({ live: olderOperator(), windows: OPEN }).held.size).toBe(0);
    expect(decide({ live: olderOperator(), windows: CLOSED }).held.size).toBe(1);
  });

  it("holds a spec change that restarts pods only when windows exist and none is open", () => {
    const live = renderGolden(production());
    expect(decide({ live, edit: moreCpu }).held.size).toBe(0);
    expect(decide({ live, edit: moreCpu, windows: OPEN }).held.size).toBe(0);
    const closed = decide({ live, edit: moreCpu, windows: CLOSED });
    expect([...closed.held]).toEqual(["Deployment/gateway"]);
    expect(closed.status?.waiting?.[0]).toMatchObject({ cause: "MaintenanceWindow", reasons: ["resources"] });
    expect(closed.status?.nextWindow).toBe("2026-12-02T02:00:00.000Z");
    expect(closed.requeueAfterMs).toBe(14 * 3600_000);
  });

  it("applies a crash-looping workload's fix at once (recorded), but an OOM-looping one waits", () => {
    const live = renderGolden(production());
    const crash = decide({ live, edit: moreCpu, windows: CLOSED, pods: [crashPod("gateway", "Error")] });
    expect(crash.held.size).toBe(0);
    expect(crash.bypassed.map((b) => b.message)).toEqual([
      "Deployment/gateway crash-loops: its change (resources) is applied now, without waiting (MaintenanceWindow)",
    ]);
    const oom = decide({ live, edit: moreCpu, windows: CLOSED, pods: [crashPod("gateway", "OOMKilled")] });
    expect([...oom.held]).toEqual(["Deployment/gateway"]);
  });

  it("names an invalid window's field", () => {
    const d = decide({
      live: [],
      windows: [{ start: "0 2 * * *", duration: "1h", timeZone: "Nowhere/City" }],
    });
    expect(d.problems).toEqual([
      {
        field: "spec.maintenance.windows[0].timeZone",
        reason: "InvalidMaintenanceWindow",
        message: '"Nowhere/City" is not an IANA time zone',
      },
    ]);
  });
});

const REFUSED: FleetAnswer = { admitted: false, limit: 1, restarting: ["other/onto-production"], ahead: 0 };

describe("the fleet limit in the disruption decision", () => {
  it("a config or resources roll asks for a slot; refused, it waits with cause FleetLimit and since", () => {
    const live = renderGolden(production());
    const d = decide({ live, edit: moreCpu });
    expect(d.held.size).toBe(0);
    expect(wantsFleetSlot(d)).toBe(true);
    expect(d.restarts.map((r) => r.reasons)).toEqual([["resources"]]);
    const held = holdForFleet(d, REFUSED, platformOf(), NOW);
    expect([...held.held]).toEqual(["Deployment/gateway"]);
    expect(held.status?.waiting).toEqual([
      {
        workload: "Deployment/gateway",
        reasons: ["resources"],
        cause: "FleetLimit",
        since: NOW.toISOString(),
      },
    ]);
    expect(held.requeueAfterMs).toBe(15_000);
    expect(holdForFleet(d, { admitted: true }, platformOf(), NOW)).toBe(d);
  });

  it("keeps the since of an earlier FleetLimit wait (its place in the queue)", () => {
    const live = renderGolden(production());
    const earlier = "2026-12-01T11:00:00.000Z";
    const platform = platformOf();
    platform.status = {
      disruption: {
        waiting: [
          { workload: "Deployment/gateway", reasons: ["resources"], cause: "FleetLimit", since: earlier },
        ],
      },
    };
    const input = production();
    moreCpu(input.spec);
    const d = decideDisruption({
      platform: { ...platform, spec: input.spec },
      spec: resolveSpec(input.spec),
      desired: renderGolden(input),
      live: (o) => live.find((l) => l.kind === o.kind && l.metadata.name === o.metadata.name),
      pods: [],
      now: NOW,
    });
    expect(d.fleetSince?.toISOString()).toBe(earlier);
    expect(holdForFleet(d, REFUSED, platform, NOW).status?.waiting?.[0]?.since).toBe(earlier);
  });

  it("an OOM raise (a memory change on an OOM-looping workload) waits; a crash loop's fix does not, and is recorded", () => {
    const live = renderGolden(production());
    const oom = decide({ live, edit: moreCpu, pods: [crashPod("gateway", "OOMKilled")] });
    expect(wantsFleetSlot(oom)).toBe(true);
    expect([...holdForFleet(oom, REFUSED, platformOf(), NOW).held]).toEqual(["Deployment/gateway"]);
    const crash = decide({ live, edit: moreCpu, pods: [crashPod("gateway", "Error")] });
    expect(wantsFleetSlot(crash)).toBe(false);
    const letThrough = holdForFleet(crash, REFUSED, platformOf(), NOW);
    expect(letThrough.held.size).toBe(0);
    expect(letThrough.bypassed.map((b) => b.message)).toEqual([
      "Deployment/gateway crash-loops: its change (resources) is applied now, without waiting (FleetLimit: 1 other platform(s) restarting pods (limit 1))",
    ]);
  });

  it("the opt-in does not lift the fleet limit; a change held for its window does not ask for a slot", () => {
    const live = olderOperator();
    const approved = decide({ live, annotations: { [APPROVE_RESTARTS_ANNOTATION]: "true" } });
    expect(wantsFleetSlot(approved)).toBe(true);
    expect([...holdForFleet(approved, REFUSED, platformOf(), NOW).held]).toEqual(["StatefulSet/kafka"]);
    const windowed = decide({ live: renderGolden(production()), edit: moreCpu, windows: CLOSED });
    expect(wantsFleetSlot(windowed)).toBe(false);
  });

  it("a platform whose workloads replace pods is rolling (it keeps its slot); one at rest is not", () => {
    const live = renderGolden(production());
    expect(decide({ live }).rolling).toBe(false);
    const gateway = live.find((o) => o.kind === "Deployment" && o.metadata.name === "gateway");
    if (!gateway) throw new Error("no gateway");
    gateway.metadata = { ...gateway.metadata, generation: 3 } as typeof gateway.metadata;
    (gateway as { status?: object }).status = { observedGeneration: 2, replicas: 2, updatedReplicas: 2 };
    const d = decide({ live });
    expect(d.rolling).toBe(true);
    expect(d.status?.restarting).toEqual(["Deployment/gateway"]);
  });
});

describe("replacingPods", () => {
  const deployment = (status: object, generation = 2): WorkloadView => ({
    kind: "Deployment",
    metadata: { name: "d", generation },
    spec: { replicas: 2 },
    status,
  });
  const done = {
    observedGeneration: 2,
    replicas: 2,
    updatedReplicas: 2,
    availableReplicas: 2,
    conditions: [{ type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" }],
  };
  it("a Deployment: the latest spec unseen, old pods left, or the new ReplicaSet not yet available", () => {
    expect(replacingPods(deployment(done))).toBe(false);
    expect(replacingPods(deployment(done, 3))).toBe(true);
    expect(replacingPods(deployment({ ...done, replicas: 3 }))).toBe(true);
    expect(replacingPods(deployment({ ...done, updatedReplicas: 1 }))).toBe(true);
    expect(
      replacingPods(
        deployment({
          ...done,
          conditions: [{ type: "Progressing", status: "True", reason: "ReplicaSetUpdated" }],
        }),
      ),
    ).toBe(true);
    // A pod unready after the rollout completed is a fault, not a restart.
    expect(replacingPods(deployment({ ...done, availableReplicas: 1 }))).toBe(false);
  });
  it("a StatefulSet: until its currentRevision is the updateRevision", () => {
    const sts = (status: object): WorkloadView => ({
      kind: "StatefulSet",
      metadata: { name: "s", generation: 1 },
      spec: { replicas: 1 },
      status,
    });
    const base = { observedGeneration: 1, replicas: 1, updatedReplicas: 1 };
    expect(replacingPods(sts({ ...base, currentRevision: "r2", updateRevision: "r2" }))).toBe(false);
    expect(replacingPods(sts({ ...base, currentRevision: "r1", updateRevision: "r2" }))).toBe(true);
    expect(
      replacingPods(sts({ ...base, updatedReplicas: 0, currentRevision: "r2", updateRevision: "r2" })),
    ).toBe(true);
  });
  it("a StatefulSet the operator updates (OnDelete): until every pod is on the update revision", () => {
    // Kubernetes never moves currentRevision under OnDelete: the count of updated pods decides.
    const sts = (updatedReplicas: number): WorkloadView => ({
      kind: "StatefulSet",
      metadata: { name: "postgres", generation: 1 },
      spec: { replicas: 3, updateStrategy: { type: "OnDelete" } },
      status: {
        observedGeneration: 1,
        replicas: 3,
        updatedReplicas,
        currentRevision: "r1",
        updateRevision: "r2",
      },
    });
    expect(replacingPods(sts(2))).toBe(true);
    expect(replacingPods(sts(3))).toBe(false);
  });
});

const HOUR = 3600_000;
/** status.certificates after renewals: 0b replaced 0a (a 90 h certificate renewed at 60 h), and 09 before it. */
function renewed(oldExpiresInMs: number): Record<string, CertificateState> {
  const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
  return {
    "onto-tls": {
      issuer: "operator",
      serial: "0b",
      notAfter: at(oldExpiresInMs + 60 * HOUR),
      renewAt: at(oldExpiresInMs + 30 * HOUR),
      replaced: [
        { serial: "0a", notAfter: at(oldExpiresInMs), renewAt: at(oldExpiresInMs - 30 * HOUR) },
        { serial: "09", notAfter: at(oldExpiresInMs - 1), renewAt: at(oldExpiresInMs - 30 * HOUR) },
      ],
    },
  };
}

describe("a certificate about to expire", () => {
  const live = () => withSerial(renderGolden(production()), "0a");

  it("is due half the renewal margin before it expires", () => {
    expect(
      certificateDeadline({
        notAfter: "2026-12-02T00:00:00Z",
        renewAt: "2026-12-01T00:00:00Z",
      }).toISOString(),
    ).toBe("2026-12-01T12:00:00.000Z");
  });

  it("waits for the window while the old certificate has time, and looks again at its deadline", () => {
    const d = decide({ live: live(), serial: "0b", windows: CLOSED, certificates: renewed(16 * HOUR) });
    expect(d.held.size).toBeGreaterThan(0);
    expect(d.status?.waiting?.every((w) => w.reasons.includes("certificate"))).toBe(true);
    expect(d.bypassed).toEqual([]);
    // The deadline (16 h - 15 h) comes before the next window (14 h).
    expect(d.requeueAfterMs).toBe(1 * HOUR);
  });

  it("goes ahead at once within half the margin, recorded with the certificate and its expiry", () => {
    const d = decide({ live: live(), serial: "0b", windows: CLOSED, certificates: renewed(14 * HOUR) });
    expect(d.held.size).toBe(0);
    expect(d.bypassed.length).toBeGreaterThan(0);
    const expiry = new Date(NOW.getTime() + 14 * HOUR).toISOString();
    for (const { workload, message } of d.bypassed)
      expect(message).toBe(
        `${workload.kind}/${workload.metadata.name} runs with certificate 0a of Secret onto-tls, which expires at ${expiry} (in 50400 s, within half its renewal margin): its change (certificate) is applied now, without waiting (MaintenanceWindow)`,
      );
  });

  it("is held neither by the fleet limit nor by an operator-side change", () => {
    const fleet = decide({ live: live(), serial: "0b", certificates: renewed(14 * HOUR) });
    expect(wantsFleetSlot(fleet)).toBe(false);
    const through = holdForFleet(fleet, REFUSED, platformOf(), NOW);
    expect(through.held.size).toBe(0);
    expect(through.bypassed[0]?.message).toContain("without waiting (FleetLimit: ");
    const older = live().map((o) =>
      o.kind === "Deployment" || o.kind === "StatefulSet"
        ? { ...o, metadata: { ...o.metadata, annotations: { [TEMPLATE_REVISION_ANNOTATION]: "0" } } }
        : o,
    );
    const operator = decide({ live: older, serial: "0b", certificates: renewed(14 * HOUR) });
    expect(operator.held.size).toBe(0);
    expect(operator.bypassed[0]?.message).toContain("without waiting (OperatorChange)");
  });

  it("is not judged when the running serial is unknown to the status: the restart waits", () => {
    const d = decide({
      live: withSerial(renderGolden(production()), "08"),
      serial: "0b",
      windows: CLOSED,
      certificates: renewed(1 * HOUR),
    });
    expect(d.held.size).toBeGreaterThan(0);
    expect(d.bypassed).toEqual([]);
  });
});
