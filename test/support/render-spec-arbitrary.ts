// Hand-written generators of valid OntoPlatform specs (fast-check), whose specs look like users'
// (sizes, autoscaling, tenants): the golden-file set keeps a few drawn with a fixed seed. The
// schema-derived generator that fuzzes every field is spec-arbitrary.ts.
import fc from "fast-check";
import type { OntoPlatformSpec } from "../../src/api/index.js";
import { KNOWN_VERSIONS } from "../../src/release/index.js";

export const dnsLabel = (max: number) =>
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

export const specArbitrary: fc.Arbitrary<OntoPlatformSpec> = fc
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
