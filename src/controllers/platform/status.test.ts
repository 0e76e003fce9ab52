import { describe, expect, it } from "vitest";
import {
  COMPONENTS,
  MAX_MESSAGE,
  enabledComponents,
  resolveSpec,
  type OntoPlatformStatus,
} from "../../api/index.js";
import { computeStatus, type StatusInput, type ComponentWorkload } from "./status.js";

const spec = resolveSpec({ version: "1.5.0" });
const T0 = new Date("2026-11-30T10:00:00Z");
const T1 = new Date("2026-11-30T10:05:00Z");

/** Every enabled component's workload, all Ready, except those in `notReady`. */
function workloads(notReady: string[] = []): Map<string, ComponentWorkload> {
  const map = new Map<string, ComponentWorkload>();
  for (const c of enabledComponents(spec)) {
    const ready = notReady.includes(c.name) ? 0 : 2;
    map.set(c.name, {
      kind: c.kind,
      generation: 1,
      labels: { "app.kubernetes.io/version": "1.5.0" },
      spec: { replicas: 2 },
      status: { observedGeneration: 1, replicas: 2, readyReplicas: ready, updatedReplicas: 2 },
    });
  }
  return map;
}

function input(extra: Partial<StatusInput>): StatusInput {
  return {
    spec,
    generation: 1,
    previous: undefined,
    workloads: workloads(),
    applyErrors: [],
    problems: [],
    changed: 0,
    paused: false,
    now: T0,
    ...extra,
  };
}

describe("computeStatus", () => {
  it("is Running with every component Ready, the version, and the printer columns", () => {
    const status = computeStatus(input({}));
    const total = enabledComponents(spec).length;
    expect(status.phase).toBe("Running");
    expect(status.version).toBe("1.5.0");
    expect(status.ready).toBe(`${total}/${total}`);
    expect(status.conditions?.find((c) => c.type === "Available")).toMatchObject({
      status: "True",
      reason: "AllComponentsReady",
    });
  });

  it("is Provisioning at first, Degraded once it had been Running, naming what is not ready", () => {
    const first = computeStatus(input({ workloads: workloads(["kafka"]) }));
    expect(first.phase).toBe("Provisioning");
    expect(first.conditions?.find((c) => c.type === "Available")?.message).toContain("kafka");
    const running = computeStatus(input({}));
    const later = computeStatus(input({ previous: running, workloads: workloads(["kafka"]), now: T1 }));
    expect(later.phase).toBe("Degraded");
    expect(later.componentStatuses?.kafka).toMatchObject({ phase: "Progressing", ready: 0, desired: 2 });
    expect(later.components?.infrastructure).toBe("NotReady");
    expect(later.components?.controlPlane).toBe("Ready");
  });

  it("stays Running while an autoscaler scales a component with every wanted pod Ready, not during a rollout or when a pod is lost", () => {
    const running = computeStatus(input({}));
    const scaledDown = workloads();
    const gateway = scaledDown.get("gateway");
    if (!gateway) throw new Error("gateway is enabled in the spec");
    // The autoscaler lowered spec.replicas; the Deployment controller has not observed it yet.
    scaledDown.set("gateway", { ...gateway, generation: 2, spec: { replicas: 1 } });
    const during = computeStatus(input({ previous: running, workloads: scaledDown, now: T1 }));
    expect(during.phase).toBe("Running");
    expect(during.componentStatuses?.gateway?.phase).toBe("Progressing");
    expect(during.conditions?.find((c) => c.type === "Available")).toMatchObject({
      status: "True",
      reason: "ComponentsScaling",
    });
    // Before the platform was ever Running, the same state is still Provisioning.
    expect(computeStatus(input({ workloads: scaledDown })).phase).toBe("Provisioning");
    const lost = computeStatus(input({ previous: running, workloads: workloads(["gateway"]), now: T1 }));
    expect(lost.phase).toBe("Degraded");
    // A template rollout is not a scale, even with every pod Ready: Running still means rolled out.
    const rolling = workloads();
    rolling.set("gateway", {
      ...gateway,
      generation: 2,
      status: { observedGeneration: 2, replicas: 3, readyReplicas: 2, updatedReplicas: 1 },
    });
    expect(computeStatus(input({ previous: running, workloads: rolling, now: T1 })).phase).toBe("Degraded");
    // The rollout's tail: every wanted pod updated and Ready, an old pod still going.
    rolling.set("gateway", {
      ...gateway,
      generation: 2,
      status: { observedGeneration: 2, replicas: 3, readyReplicas: 2, updatedReplicas: 2 },
    });
    expect(computeStatus(input({ previous: running, workloads: rolling, now: T1 })).phase).toBe("Degraded");
    // A scale-down's tail: the surplus pod is of the current template.
    rolling.set("gateway", {
      ...gateway,
      generation: 2,
      spec: { replicas: 2 },
      status: { observedGeneration: 2, replicas: 3, readyReplicas: 3, updatedReplicas: 3 },
    });
    expect(computeStatus(input({ previous: running, workloads: rolling, now: T1 })).phase).toBe("Running");
  });

  it("keeps a condition's lastTransitionTime while its status does not change", () => {
    const before = computeStatus(input({}));
    const after = computeStatus(input({ previous: before, now: T1 }));
    const available = (s: OntoPlatformStatus) =>
      s.conditions?.find((c) => c.type === "Available")?.lastTransitionTime;
    expect(available(after)).toBe(available(before));
    const broken = computeStatus(input({ previous: after, workloads: workloads(["gateway"]), now: T1 }));
    expect(available(broken)).not.toBe(available(before));
  });

  it("says Error with the failing object when an apply failed, and names the field of a problem", () => {
    const failed = computeStatus(input({ applyErrors: ["Deployment/gateway: forbidden"] }));
    expect(failed.phase).toBe("Error");
    expect(failed.conditions?.find((c) => c.type === "Degraded")).toMatchObject({
      status: "True",
      reason: "ApplyFailed",
    });
    const problem = computeStatus(
      input({
        problems: [
          {
            field: "spec.global.tlsSecretName",
            reason: "MissingTLSSecret",
            message: "Secret ns/x does not exist",
          },
        ],
      }),
    );
    expect(problem.conditions?.find((c) => c.type === "Degraded")?.message).toContain(
      "spec.global.tlsSecretName",
    );
  });

  it("marks a component Degraded when healing raised its memory to the cap and it is still not Ready", () => {
    const previous: OntoPlatformStatus = {
      healing: {
        memoryOverrides: {
          "ontology-service": { memoryLimit: "32Gi", raisedAt: T0.toISOString(), raises: 4, atCap: true },
          "auth-service": { memoryLimit: "32Gi", raisedAt: T0.toISOString(), raises: 4, atCap: true },
        },
      },
    };
    const status = computeStatus(input({ previous, workloads: workloads(["ontology-service"]) }));
    expect(status.componentStatuses?.["ontology-service"]?.phase).toBe("Degraded");
    expect(status.componentStatuses?.["ontology-service"]?.message).toContain("32Gi");
    // At the cap but Ready: nothing to report.
    expect(status.componentStatuses?.["auth-service"]?.phase).toBe("Ready");
    expect(status.healing).toEqual(previous.healing);
  });

  it("covers every component of the table", () => {
    expect(Object.keys(computeStatus(input({})).componentStatuses ?? {}).length).toBe(
      COMPONENTS.filter((c) => c.name !== "temporal" || spec.intelligencePlane.agentRuntime.temporal.enabled)
        .length,
    );
  });

  it("says why a component's pod cannot be scheduled", () => {
    const w = workloads(["reasoning-service"]);
    const view = w.get("reasoning-service");
    if (view)
      w.set("reasoning-service", {
        ...view,
        unschedulable: "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.",
      });
    const state = computeStatus(input({ workloads: w })).componentStatuses?.["reasoning-service"];
    expect(state?.phase).toBe("Progressing");
    expect(state?.message).toContain("Insufficient nvidia.com/gpu");
  });
});

describe("computeStatus with many failures", () => {
  it("keeps the Degraded message within the schema's bound when hundreds of objects fail to apply", () => {
    const applyErrors = Array.from(
      { length: 250 },
      (_, i) => `ConfigMap/settings-${i}: the server rejected our request: ${"quota exceeded; ".repeat(8)}`,
    );
    const status = computeStatus(input({ applyErrors }));
    const degraded = status.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "ApplyFailed" });
    expect(Buffer.byteLength(degraded!.message, "utf8")).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(degraded!.message).toContain("ConfigMap/settings-0:");
    expect(degraded!.message).toMatch(/\(and \d+ more\)$/);
  });
});
