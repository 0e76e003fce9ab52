// Properties of render over generated valid specs: whatever the spec, objects are unique by
// (kind, name), every name is a valid DNS name for its kind, every label is a valid label,
// every container has requests, and rendering is deterministic.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatformSpec } from "../api/index.js";
import { validateSpec } from "../api/validate.js";
import { KNOWN_VERSIONS, releaseFor } from "../release/index.js";
import { renderPlatform, type RenderedObject } from "./index.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const dnsLabel = (max: number) =>
  fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/).filter((s) => s.length <= max);

const quantityPair = fc
  .record({ cpu: fc.integer({ min: 1, max: 8000 }), memory: fc.integer({ min: 64, max: 16384 }) })
  .chain(({ cpu, memory }) =>
    fc.record({
      requests: fc.constant({ cpu: `${cpu}m`, memory: `${memory}Mi` }),
      limits: fc.option(
        fc.record({ cpu: fc.constant(`${cpu * 2}m`), memory: fc.constant(`${memory * 2}Mi`) }),
        { nil: undefined },
      ),
    }),
  )
  .map((r) => (r.limits ? r : { requests: r.requests }));

const autoscaling = fc
  .record({
    enabled: fc.boolean(),
    min: fc.integer({ min: 1, max: 5 }),
    extra: fc.integer({ min: 0, max: 10 }),
  })
  .map(({ enabled, min, extra }) => ({
    enabled,
    minReplicas: min,
    maxReplicas: min + extra,
    targetCPUUtilization: 70,
  }));

const service = fc.record({
  replicas: fc.integer({ min: 1, max: 5 }),
  resources: quantityPair,
  autoscaling,
});

const specArbitrary: fc.Arbitrary<OntoPlatformSpec> = fc
  .record({
    version: fc.constantFrom(...KNOWN_VERSIONS),
    redisSentinel: fc.boolean(),
    minioReplicas: fc.constantFrom(1, 4, 6),
    kafkaReplicas: fc.integer({ min: 1, max: 5 }),
    buckets: fc.uniqueArray(fc.stringMatching(/^[a-z0-9][a-z0-9-]{1,20}[a-z0-9]$/), { maxLength: 4 }),
    topics: fc.uniqueArray(fc.stringMatching(/^[a-zA-Z0-9_-]{1,30}$/), { maxLength: 4 }),
    partitions: fc.integer({ min: 1, max: 64 }),
    postgresReplicas: fc.integer({ min: 1, max: 5 }),
    nessieReplicas: fc.integer({ min: 1, max: 3 }),
    ontology: service,
    dataService: service,
    gateway: service,
    gpu: fc.boolean(),
    temporal: fc.boolean(),
    ingress: fc.boolean(),
    tls: fc.boolean(),
    tenancy: fc.boolean(),
    isolate: fc.boolean(),
    allowed: fc.uniqueArray(dnsLabel(63), { maxLength: 3 }),
    level: fc.constantFrom("DEBUG", "INFO", "WARN", "ERROR" as const),
    serviceMonitor: fc.boolean(),
  })
  .map((g) => ({
    version: g.version,
    global: { tlsEnabled: g.tls, ...(g.tls ? { tlsSecretName: "onto-tls" } : {}) },
    infrastructure: {
      postgres: { replicas: g.postgresReplicas },
      redis: g.redisSentinel
        ? { mode: "sentinel" as const, replicas: 3 }
        : { mode: "standalone" as const, replicas: 1 },
      minio: { replicas: g.minioReplicas, buckets: g.buckets.map((name) => ({ name })) },
      kafka: {
        replicas: g.kafkaReplicas,
        topics: g.topics.map((name) => ({ name, partitions: g.partitions })),
      },
    },
    controlPlane: { ontologyService: g.ontology },
    dataPlane: { dataService: g.dataService, nessie: { replicas: g.nessieReplicas } },
    intelligencePlane: {
      reasoningService: { gpu: { enabled: g.gpu, count: 2 } },
      agentRuntime: { temporal: { enabled: g.temporal } },
    },
    gateway: { ...g.gateway, ingress: { enabled: g.ingress, host: "platform.example.com", tls: g.tls } },
    observability: {
      logging: { level: g.level },
      metrics: { enabled: true, serviceMonitor: g.serviceMonitor },
    },
    tenancy: g.tenancy
      ? {
          mode: "namespace" as const,
          resourceQuota: { "requests.cpu": "100" },
          networkPolicy: { isolate: g.isolate, allowedNamespaces: g.allowed },
        }
      : { mode: "none" as const },
  }));

const platformArbitrary = fc.record({
  name: fc.oneof(
    dnsLabel(63),
    fc.tuple(dnsLabel(20), dnsLabel(20)).map(([a, b]) => `${a}.${b}`),
  ),
  namespace: dnsLabel(63),
  uid: fc.uuid(),
});

function renderAll(
  raw: OntoPlatformSpec,
  platform: { name: string; namespace: string; uid: string },
): RenderedObject[] {
  const spec = resolveSpec(raw);
  return renderPlatform({
    platform,
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: true, verticalPodAutoscaler: true },
    generateSecret: ({ length }) => "s".repeat(length),
  });
}

describe("render over generated valid specs", () => {
  it("the generator only produces specs the schema accepts", () => {
    fc.assert(
      fc.property(specArbitrary, (spec) => {
        expect(validateSpec(spec)).toEqual([]);
      }),
      { numRuns: 50 },
    );
  });

  it("gives unique (kind, name), valid names and labels, and requests on every container", () => {
    fc.assert(
      fc.property(specArbitrary, platformArbitrary, (spec, platform) => {
        const objects = renderAll(spec, platform);
        const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const o of objects) {
          const name = o.metadata.name;
          expect(name.length).toBeLessThanOrEqual(o.kind === "Service" ? 63 : 253);
          expect(name).toMatch(
            o.kind === "Service" ? DNS_1035 : o.kind === "Job" ? DNS_LABEL : DNS_SUBDOMAIN,
          );
          expect(o.metadata.namespace).toBe(platform.namespace);
          for (const value of Object.values(o.metadata.labels)) {
            expect(value.length).toBeLessThanOrEqual(63);
            expect(value).toMatch(LABEL_VALUE);
          }
          const pod = (
            o.spec as { template?: { spec?: { containers: { resources: { requests: object } }[] } } }
          )?.template?.spec;
          for (const c of pod?.containers ?? [])
            expect(Object.keys(c.resources.requests)).toContain("memory");
        }
      }),
      { numRuns: 150 },
    );
  }, 60_000); // 150 renders: seconds on a loaded 2-core machine, not the 5 s default

  it("is deterministic", () => {
    fc.assert(
      fc.property(specArbitrary, platformArbitrary, (spec, platform) => {
        expect(JSON.stringify(renderAll(spec, platform))).toBe(JSON.stringify(renderAll(spec, platform)));
      }),
      { numRuns: 30 },
    );
  });
});
