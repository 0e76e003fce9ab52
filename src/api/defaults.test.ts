import fc from "fast-check";
import { describe, expect, expectTypeOf, it } from "vitest";
import { Value } from "@sinclair/typebox/value";
import { resolveSpec, topicReplicationFactor } from "./defaults.js";
import { OntoPlatformSpecSchema } from "./schema.js";
import type { OntoPlatformSpec, ResolvedSpec } from "./schema.js";
import { COMPONENTS, componentSpec, enabledComponents } from "./components.js";

// The seed's tenant example (section 6): only version and tenancy.
const tenant: OntoPlatformSpec = {
  version: "1.5.0",
  tenancy: {
    mode: "namespace",
    resourceQuota: {
      "requests.cpu": "10",
      "requests.memory": "20Gi",
      "limits.cpu": "20",
      "limits.memory": "40Gi",
    },
    networkPolicy: { isolate: true, allowedNamespaces: ["onto-system"] },
  },
};

describe("resolveSpec", () => {
  it("turns the seed's tenant example into a complete platform", () => {
    const resolved = resolveSpec(tenant);
    expect(resolved.version).toBe("1.5.0");
    expect(resolved.tenancy.networkPolicy.allowedNamespaces).toEqual(["onto-system"]);
    expect(resolved.global.imagePullPolicy).toBe("IfNotPresent");
    expect(resolved.infrastructure.kafka.topics).toEqual([{ name: "ontology-events", partitions: 12 }]);
    expect(resolved.infrastructure.minio.buckets.map((b) => b.name)).toEqual(["onto-data", "onto-iceberg"]);
    expect(resolved.upgradeStrategy).toEqual({
      canary: true,
      healthTimeoutSeconds: 300,
      soakSeconds: 30,
      rollbackScope: "Component",
      force: false,
    });
    expect(resolved.selfHealing.oomMemoryFactor).toBe(1.5);
    expect(resolved.paused).toBe(false);
    for (const component of enabledComponents(resolved)) {
      const settings = componentSpec(resolved, component);
      expect(settings.replicas, component.name).toBeGreaterThanOrEqual(1);
      expect(settings.resources.requests.cpu, component.name).toMatch(/^[0-9]/);
      expect(settings.resources.requests.memory, component.name).toMatch(/i$/);
      expect(settings.storage !== undefined, component.name).toBe(component.stateful);
      expect(settings.autoscaling !== undefined, component.name).toBe(component.autoscalable);
    }
    // The resolved spec satisfies the schema, and resolving it again changes nothing.
    expect([...Value.Errors(OntoPlatformSpecSchema, resolved)]).toEqual([]);
    expect(resolveSpec(resolved)).toEqual(resolved);
  });

  it("fits the default platform into the seed tenant's quota of 10 CPU and 20Gi requested", () => {
    const resolved = resolveSpec(tenant);
    let cpuMillis = 0;
    let memoryMi = 0;
    for (const component of enabledComponents(resolved)) {
      const { replicas, resources } = componentSpec(resolved, component);
      const cpu = resources.requests.cpu;
      cpuMillis += replicas * (cpu.endsWith("m") ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);
      const memory = resources.requests.memory;
      memoryMi +=
        replicas * (memory.endsWith("Gi") ? Number(memory.slice(0, -2)) * 1024 : Number(memory.slice(0, -2)));
    }
    expect(cpuMillis).toBeLessThanOrEqual(10_000);
    expect(memoryMi).toBeLessThanOrEqual(20 * 1024);
  });

  it("keeps what the user wrote and fills the rest around it", () => {
    const resolved = resolveSpec({
      version: "2.0.0",
      controlPlane: {
        schemaRegistry: { replicas: 2, resources: { requests: { cpu: "500m", memory: "1Gi" } } },
      },
      dataPlane: { dataService: { autoscaling: { enabled: true, maxReplicas: 20 } } },
    });
    expect(resolved.controlPlane.schemaRegistry.resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi" },
    });
    expect(resolved.dataPlane.dataService.autoscaling).toEqual({
      enabled: true,
      minReplicas: 2,
      maxReplicas: 20,
      targetCPUUtilization: 70,
      behavior: {
        scaleUp: { pods: 2, periodSeconds: 60, stabilizationWindowSeconds: 60 },
        scaleDown: { pods: 1, periodSeconds: 120, stabilizationWindowSeconds: 300 },
      },
    });
  });

  it("does not change its input", () => {
    const input: OntoPlatformSpec = { version: "1.5.0", gateway: { replicas: 3 } };
    const copy = structuredClone(input);
    resolveSpec(input);
    expect(input).toEqual(copy);
  });

  it("types defaulted fields as present and natural options as optional", () => {
    expectTypeOf<ResolvedSpec["infrastructure"]["kafka"]["replicas"]>().toEqualTypeOf<number>();
    expectTypeOf<ResolvedSpec["gateway"]["ingress"]["host"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<
      ResolvedSpec["intelligencePlane"]["agentRuntime"]["temporal"]["enabled"]
    >().toEqualTypeOf<boolean>();
    expectTypeOf<{ version: string }>().toExtend<OntoPlatformSpec>();
  });
});

describe("topicReplicationFactor", () => {
  it("uses the topic's own factor, else min(3, brokers)", () => {
    const kafka = resolveSpec({ version: "1.0.0", infrastructure: { kafka: { replicas: 2 } } }).infrastructure
      .kafka;
    expect(topicReplicationFactor(kafka, { name: "a", partitions: 1 })).toBe(2);
    expect(topicReplicationFactor(kafka, { name: "a", partitions: 1, replicationFactor: 1 })).toBe(1);
  });
});

describe("COMPONENTS", () => {
  it("has a unique name per component and a spec path that resolves for each", () => {
    const resolved = resolveSpec({ version: "1.0.0" });
    expect(new Set(COMPONENTS.map((c) => c.name)).size).toBe(COMPONENTS.length);
    for (const component of COMPONENTS)
      expect(componentSpec(resolved, component), component.name).toHaveProperty("replicas");
  });

  it("runs temporal only when agentRuntime.temporal.enabled", () => {
    const off = enabledComponents(resolveSpec({ version: "1.0.0" })).map((c) => c.name);
    const on = enabledComponents(
      resolveSpec({ version: "1.0.0", intelligencePlane: { agentRuntime: { temporal: { enabled: true } } } }),
    ).map((c) => c.name);
    expect(off).toHaveLength(12);
    expect(off).not.toContain("temporal");
    expect(on).toHaveLength(13);
    expect(on).toContain("temporal");
  });
});

describe("resolveSpec, for any override of a service's scaling", () => {
  const services = [
    ["controlPlane", "ontologyService"],
    ["dataPlane", "dataService"],
    ["intelligencePlane", "reasoningService"],
  ] as const;

  it("keeps the user's values, fills the rest, and is idempotent", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...services),
        fc.integer({ min: 1, max: 100 }),
        fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        fc.option(fc.boolean(), { nil: undefined }),
        ([plane, service], replicas, maxReplicas, enabled) => {
          const autoscaling = {
            ...(enabled === undefined ? {} : { enabled }),
            ...(maxReplicas ? { maxReplicas } : {}),
          };
          const spec = {
            version: "1.0.0",
            [plane]: { [service]: { replicas, autoscaling } },
          } as OntoPlatformSpec;
          const resolved = resolveSpec(spec);
          const settings = (resolved[plane] as Record<string, ResolvedComponentLike>)[service]!;
          expect(settings.replicas).toBe(replicas);
          expect(settings.autoscaling.maxReplicas).toBe(maxReplicas ?? 10);
          expect(settings.autoscaling.enabled).toBe(enabled ?? false);
          expect(settings.autoscaling.targetCPUUtilization).toBe(70);
          expect(resolveSpec(resolved)).toEqual(resolved);
        },
      ),
    );
  });
});

interface ResolvedComponentLike {
  replicas: number;
  autoscaling: { enabled: boolean; maxReplicas: number; targetCPUUtilization: number };
}
