// Which pod restarts wait: an operator-side template change (always, until opted in or a window),
// a spec-driven one outside every maintenance window; a crash-looping workload's fix never waits,
// an OOM-looping one (the memory raise) does.
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatform, type OntoPlatformSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { TEMPLATE_REVISION_ANNOTATION, type RenderedObject } from "../../render/index.js";
import { goldenCases, renderGolden } from "../../../test/support/golden.js";
import { APPROVE_RESTARTS_ANNOTATION, decideDisruption } from "./disruption.js";

const cases = goldenCases();
function production() {
  const found = cases["production"];
  if (!found) throw new Error("no production case");
  return structuredClone(found);
}
const NOW = new Date("2026-12-01T12:00:00Z");
const CLOSED = [{ start: "0 2 * * *", duration: "1h", timeZone: "UTC" }];
const OPEN = [{ start: "0 11 * * *", duration: "2h", timeZone: "UTC" }];

function decide(opts: {
  live: RenderedObject[];
  edit?: (spec: OntoPlatformSpec) => void;
  windows?: typeof CLOSED;
  annotations?: Record<string, string>;
  pods?: KubeObject[];
}) {
  const input = production();
  opts.edit?.(input.spec);
  input.spec.maintenance = { windows: opts.windows ?? [] };
  const desired = renderGolden(input);
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
    now: NOW,
  });
}

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
