// Behaviour of renderPlatform on the seed's production and tenant platforms and variations of
// them: what exists, how it is wired, and the rules every object and pod must follow.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { COMPONENTS, resolveSpec, type OntoPlatformSpec } from "../api/index.js";
import { imageFor, releaseFor } from "../release/index.js";
import {
  CONFIG_CHECKSUM_ANNOTATION,
  GENERATED_SECRET_LABEL,
  MANAGED_KINDS,
  PARTITION_ANNOTATION,
  renderPlatform,
  type Capabilities,
  type RenderInput,
  type RenderedObject,
} from "./index.js";
import type { ResourceRequirements } from "./objects.js";

interface Fixture {
  metadata: { name: string; namespace: string; uid: string };
  spec: OntoPlatformSpec;
}
const fixture = (name: string): Fixture =>
  parse(readFileSync(new URL(`./testdata/${name}.yaml`, import.meta.url), "utf8")) as Fixture;
const PRODUCTION = fixture("production");
const TENANT = fixture("tenant");
const ALL_APIS: Capabilities = { serviceMonitor: true, verticalPodAutoscaler: true, customMetrics: true };
const NO_APIS: Capabilities = { serviceMonitor: false, verticalPodAutoscaler: false };

/** A deterministic generator whose values are recognisable in assertions. */
const generateSecret: RenderInput["generateSecret"] = ({ secret, key, length }) =>
  `gen-${secret}-${key}`.padEnd(length, "x").slice(0, Math.max(length, 8));

function render(
  base: Fixture,
  edit: (spec: OntoPlatformSpec) => void = () => {},
  extra: Partial<RenderInput> = {},
): RenderedObject[] {
  const raw = structuredClone(base.spec);
  edit(raw);
  const spec = resolveSpec(raw);
  return renderPlatform({
    platform: base.metadata,
    spec,
    release: releaseFor(spec.version),
    capabilities: ALL_APIS,
    generateSecret,
    ...extra,
  });
}

const find = (objects: RenderedObject[], kind: string, name: string): RenderedObject | undefined =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
function get(objects: RenderedObject[], kind: string, name: string): RenderedObject {
  const found = find(objects, kind, name);
  if (!found)
    throw new Error(
      `no ${kind}/${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`,
    );
  return found;
}

/* The parts of workloads the assertions read. */
interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  startupProbe?: { exec?: unknown };
  readinessProbe?: { grpc?: { port: number }; exec?: unknown };
  livenessProbe?: { grpc?: { port: number }; exec?: unknown };
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  shareProcessNamespace?: boolean;
  containers: Container[];
  initContainers?: Container[];
  securityContext: Record<string, unknown>;
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  nodeSelector?: Record<string, string>;
  affinity?: unknown;
  topologySpreadConstraints?: unknown[];
}
interface Template {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}
const spec = (o: RenderedObject) => o.spec as Record<string, unknown>;
const template = (o: RenderedObject) => spec(o).template as Template;
const PODS = new Set(["Deployment", "StatefulSet", "Job"]);
const podObjects = (objects: RenderedObject[]) => objects.filter((o) => PODS.has(o.kind));

describe("the seed's production platform", () => {
  const objects = render(PRODUCTION);

  it("has a workload, Service and ServiceAccount for every component", () => {
    for (const c of COMPONENTS) {
      expect(get(objects, c.kind, c.name).metadata.namespace).toBe("onto-system");
      expect(find(objects, "Service", c.name)).toBeDefined();
      expect(find(objects, "ServiceAccount", c.name)).toBeDefined();
    }
  });

  it("renders objects in apply order: planes in the seed's order, observability last", () => {
    const firstIndex = (name: string) =>
      objects.findIndex((o) => o.metadata.labels["app.kubernetes.io/name"] === name);
    const order = COMPONENTS.map((c) => firstIndex(c.name));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    const lastWorkload = Math.max(...objects.map((o, i) => (PODS.has(o.kind) ? i : -1)));
    objects.forEach((o, i) => {
      if (o.kind === "ServiceMonitor" || o.kind === "VerticalPodAutoscaler")
        expect(i).toBeGreaterThan(lastWorkload);
    });
    // Within a component, what a pod mounts comes before the pod.
    expect(objects.indexOf(get(objects, "ConfigMap", "ontology-service-config"))).toBeLessThan(
      objects.indexOf(get(objects, "Deployment", "ontology-service")),
    );
    expect(objects.indexOf(get(objects, "Secret", "postgres-credentials"))).toBeLessThan(
      objects.indexOf(get(objects, "StatefulSet", "postgres")),
    );
  });

  it("puts the common labels and a controlling owner reference on every object but retained Secrets", () => {
    for (const o of objects) {
      expect(o.metadata.labels).toMatchObject({
        "app.kubernetes.io/instance": "onto-production",
        "app.kubernetes.io/part-of": "coomia-dip",
        "app.kubernetes.io/managed-by": "onto-operator",
        "app.kubernetes.io/version": "1.5.0",
      });
      expect(o.metadata.labels["app.kubernetes.io/name"]).toMatch(/^[a-z][-a-z]*$/);
      expect(o.metadata.labels["app.kubernetes.io/component"]).toMatch(/^[a-z][-a-z]*$/);
      // Generated Secrets are retained by default: no owner, so they outlive the platform.
      if (o.metadata.labels[GENERATED_SECRET_LABEL]) continue;
      expect(o.metadata.ownerReferences).toEqual([
        {
          apiVersion: "onto.paas/v1alpha1",
          kind: "OntoPlatform",
          name: "onto-production",
          uid: PRODUCTION.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
  });

  it("only produces kinds listed in MANAGED_KINDS", () => {
    const managed = new Set(
      MANAGED_KINDS.map((k) => `${k.group ? `${k.group}/` : ""}${k.version}/${k.kind}`),
    );
    for (const o of objects) expect(managed).toContain(`${o.apiVersion}/${o.kind}`);
  });

  it("makes every pod admissible under the restricted Pod Security Standard", () => {
    for (const o of podObjects(objects)) {
      const pod = template(o).spec;
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.securityContext.runAsUser).not.toBe(0);
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        expect(c.securityContext, `${o.metadata.name}/${c.name}`).toMatchObject({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          runAsNonRoot: true,
        });
      }
    }
  });

  // A timed-out probe command leaves orphans; as process 1, the Postgres postmaster took one's
  // exit for a crashed backend (test/real/postgres-ha.test.ts shows it on the real node).
  it("shares one PID namespace (the sandbox reaps orphans) exactly in pods probed by commands", () => {
    const probedByCommands = (pod: PodSpec) =>
      pod.containers.some((c) => [c.startupProbe, c.readinessProbe, c.livenessProbe].some((p) => p?.exec));
    const sharing = podObjects(objects)
      .filter((o) => template(o).spec.shareProcessNamespace === true)
      .map((o) => o.metadata.name);
    expect(sharing.sort()).toEqual(["postgres", "redis"]);
    for (const o of podObjects(objects))
      expect(template(o).spec.shareProcessNamespace === true, o.metadata.name).toBe(
        probedByCommands(template(o).spec),
      );
  });

  it("sets cpu and memory requests and limits on every container, and the pull policy", () => {
    for (const o of podObjects(objects)) {
      for (const c of template(o).spec.containers) {
        expect(Object.keys(c.resources.requests), `${o.metadata.name}/${c.name}`).toEqual(
          expect.arrayContaining(["cpu", "memory"]),
        );
        expect(Object.keys(c.resources.limits)).toEqual(expect.arrayContaining(["cpu", "memory"]));
        expect(c.imagePullPolicy).toBe("IfNotPresent");
      }
    }
  });

  it("uses the spec's resources, and raises a default limit to the request", () => {
    const postgres = template(get(objects, "StatefulSet", "postgres")).spec.containers[0];
    expect(postgres?.resources).toEqual({
      requests: { cpu: "2", memory: "4Gi" },
      limits: { cpu: "4", memory: "8Gi" },
    });
    // schemaRegistry gives requests only: the default 1Gi memory limit meets the 1Gi request.
    const registry = template(get(objects, "Deployment", "schema-registry")).spec.containers[0];
    expect(registry?.resources.requests).toEqual({ cpu: "500m", memory: "1Gi" });
    expect(registry?.resources.limits.memory).toBe("1Gi");
  });

  it("tags platform images with the version under the registry, and pins infrastructure", () => {
    const image = (kind: string, name: string) =>
      template(get(objects, kind, name)).spec.containers[0]?.image;
    expect(image("Deployment", "ontology-service")).toBe(
      "registry.example.com/coomia-dip/ontology-service:1.5.0",
    );
    expect(image("StatefulSet", "postgres")).toBe(imageFor(releaseFor("1.5.0"), "postgres", "r"));
    expect(image("StatefulSet", "kafka")).toBe(imageFor(releaseFor("1.5.0"), "kafka", "r"));
  });

  it("gives gRPC services gRPC readiness and liveness probes on 9090, and the gateway HTTP ones", () => {
    for (const c of COMPONENTS.filter(
      (c) => c.grpc && c.plane !== "infrastructure" && c.name !== "temporal",
    )) {
      const main = template(get(objects, c.kind, c.name)).spec.containers[0];
      expect(main?.readinessProbe?.grpc?.port, c.name).toBe(9090);
      expect(main?.livenessProbe?.grpc?.port, c.name).toBe(9090);
    }
    const gateway = template(get(objects, "Deployment", "gateway")).spec.containers[0];
    expect(gateway?.readinessProbe).toMatchObject({ httpGet: { path: "/readyz" } });
  });

  it("creates the HPA of seed section 4.1 for ontology-service", () => {
    expect(spec(get(objects, "HorizontalPodAutoscaler", "ontology-service"))).toEqual({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "ontology-service" },
      minReplicas: 2,
      maxReplicas: 10,
      metrics: [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
        },
        {
          type: "Pods",
          pods: {
            metric: { name: "grpc_requests_per_second" },
            target: { type: "AverageValue", averageValue: "1000" },
          },
        },
      ],
      behavior: {
        scaleUp: {
          stabilizationWindowSeconds: 60,
          policies: [{ type: "Pods", value: 2, periodSeconds: 60 }],
        },
        scaleDown: {
          stabilizationWindowSeconds: 300,
          policies: [{ type: "Pods", value: 1, periodSeconds: 120 }],
        },
      },
    });
    expect(spec(get(objects, "HorizontalPodAutoscaler", "data-service"))).toMatchObject({
      minReplicas: 2,
      maxReplicas: 20,
      metrics: [
        { resource: { target: { averageUtilization: 60 } } },
        { pods: { metric: { name: "grpc_requests_per_second" } } },
      ],
    });
  });

  it("leaves replicas to the HPA when autoscaling is on, and sets them otherwise", () => {
    expect(spec(get(objects, "Deployment", "ontology-service"))).not.toHaveProperty("replicas");
    expect(spec(get(objects, "Deployment", "data-service"))).not.toHaveProperty("replicas");
    expect(spec(get(objects, "Deployment", "gateway")).replicas).toBe(3);
    expect(spec(get(objects, "StatefulSet", "kafka")).replicas).toBe(3);
    expect(find(objects, "HorizontalPodAutoscaler", "gateway")).toBeUndefined();
  });

  it("scales a non-gRPC service on CPU only", () => {
    const objs = render(PRODUCTION, (s) => {
      s.gateway = { ...s.gateway, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 6 } };
    });
    const metrics = spec(get(objs, "HorizontalPodAutoscaler", "gateway")).metrics as { type: string }[];
    expect(metrics.map((m) => m.type)).toEqual(["Resource"]);
  });

  it("gives the reasoning service its GPUs and the GPU toleration, and no one else", () => {
    const pod = template(get(objects, "Deployment", "reasoning-service")).spec;
    expect(pod.containers[0]?.resources.limits["nvidia.com/gpu"]).toBe("1");
    expect(pod.tolerations).toContainEqual({
      key: "nvidia.com/gpu",
      operator: "Exists",
      effect: "NoSchedule",
    });
    for (const o of podObjects(objects).filter((o) => o.metadata.name !== "reasoning-service")) {
      expect(JSON.stringify(template(o).spec)).not.toContain("nvidia.com/gpu");
    }
    // An extra pod during a rollout would wait for a GPU no node has free: replace in place.
    expect(spec(get(objects, "Deployment", "reasoning-service")).strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxSurge: 0, maxUnavailable: 1 },
    });
    const cpuOnly = render(PRODUCTION, (s) => {
      s.intelligencePlane!.reasoningService!.gpu!.enabled = false;
    });
    expect(JSON.stringify(get(cpuOnly, "Deployment", "reasoning-service"))).not.toContain("nvidia.com/gpu");
  });

  it("spreads pods over nodes and zones and protects them with a PodDisruptionBudget", () => {
    for (const o of objects.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet")) {
      const pod = template(o).spec;
      expect(pod.affinity).toMatchObject({ podAntiAffinity: {} });
      expect(pod.topologySpreadConstraints).toEqual([
        expect.objectContaining({ topologyKey: "topology.kubernetes.io/zone" }),
      ]);
    }
    expect(spec(get(objects, "PodDisruptionBudget", "kafka"))).toMatchObject({ maxUnavailable: 1 });
    // temporal runs one replica: a budget would block every drain.
    expect(find(objects, "PodDisruptionBudget", "temporal")).toBeUndefined();
  });

  it("wires Postgres as a primary with streaming standbys behind read-write and read-only Services", () => {
    // Roles are state: the Services select by the role label the operator sets, not by ordinal.
    expect(spec(get(objects, "Service", "postgres"))).toMatchObject({
      selector: { "onto.paas/postgres-role": "primary" },
      publishNotReadyAddresses: true,
    });
    expect(spec(get(objects, "Service", "postgres-ro")).selector).toMatchObject({
      "onto.paas/postgres-role": "standby",
    });
    const scripts = get(objects, "ConfigMap", "postgres-config").data as Record<string, string>;
    expect(scripts["entrypoint.sh"]).toContain("pg_basebackup");
    expect(scripts["entrypoint.sh"]).toContain("pg_rewind");
    expect(scripts["entrypoint.sh"]).toContain("getent ahostsv4 postgres-headless.onto-system.svc");
    expect(scripts["entrypoint.sh"]).toContain("host=postgres.onto-system.svc");
    expect(scripts["entrypoint.sh"]).not.toContain("synchronous_standby_names");
    // Behaviour of the scripts is proven with the real server (test/programs/postgres.test.ts).
    expect(scripts["entrypoint.sh"]).not.toContain("docker-entrypoint");
    // A quarter of 100Gi, in the file postgresql.conf includes (reloaded, not a server flag).
    expect(scripts["reloadable.conf"]).toContain("max_slot_wal_keep_size = '25600MB'");
    expect(scripts["entrypoint.sh"]).not.toContain("max_slot_wal_keep_size=");
    expect(scripts["entrypoint.sh"]).toContain('"/opt/onto/reloadable.conf" >> "$conf"');
    expect(scripts["ready.sh"]).toContain("pg_stat_wal_receiver");
    const claims = spec(get(objects, "StatefulSet", "postgres")).volumeClaimTemplates as { spec: unknown }[];
    expect(claims).toHaveLength(1);
    expect(claims[0]?.spec).toMatchObject({
      storageClassName: "fast-ssd",
      resources: { requests: { storage: "100Gi" } },
    });
  });

  it("keeps Postgres's size-derived settings out of its pod template: a larger volume changes only the reloaded file", () => {
    const grown = render(PRODUCTION, (spec) => {
      spec.infrastructure = {
        ...spec.infrastructure,
        postgres: { ...spec.infrastructure?.postgres, storage: "200Gi" },
      };
    });
    const scriptsOf = (all: RenderedObject[]) =>
      get(all, "ConfigMap", "postgres-config").data as Record<string, string>;
    expect(scriptsOf(grown)["reloadable.conf"]).toContain("max_slot_wal_keep_size = '51200MB'");
    const { ["reloadable.conf"]: _before, ...restBefore } = scriptsOf(objects);
    const { ["reloadable.conf"]: _after, ...restAfter } = scriptsOf(grown);
    expect(restAfter).toEqual(restBefore);
    // The pod template, config checksum included, is the same: no pod restarts.
    expect(template(get(grown, "StatefulSet", "postgres"))).toEqual(
      template(get(objects, "StatefulSet", "postgres")),
    );
    // Any other file of the ConfigMap still feeds the checksum.
    const synchronous = render(PRODUCTION, (spec) => {
      spec.infrastructure = {
        ...spec.infrastructure,
        postgres: { ...spec.infrastructure?.postgres, synchronous: true },
      };
    });
    const checksum = (all: RenderedObject[]) =>
      template(get(all, "StatefulSet", "postgres")).metadata?.annotations?.["onto.paas/config-checksum"];
    expect(checksum(synchronous)).toBeDefined();
    expect(checksum(synchronous)).not.toBe(checksum(objects));
  });

  it("runs Redis with a Sentinel beside each of its three servers", () => {
    const pod = template(get(objects, "StatefulSet", "redis")).spec;
    expect(pod.containers.map((c) => c.name)).toEqual(["redis", "sentinel"]);
    const start = (get(objects, "ConfigMap", "redis-config").data as Record<string, string>)[
      "start-sentinel.sh"
    ];
    // Quorum 2 of 3; how a cold restart finds the last primary is proven with the real servers
    // (test/programs/redis.test.ts).
    expect(start).toMatch(/sentinel monitor onto-primary \$primary 6379 2/);
    expect(start).toContain("/data/sentinel/sentinel.conf");
    const standalone = render(PRODUCTION, (s) => {
      s.infrastructure!.redis = { replicas: 1, mode: "standalone" };
    });
    expect(template(get(standalone, "StatefulSet", "redis")).spec.containers.map((c) => c.name)).toEqual([
      "redis",
    ]);
  });

  it("runs MinIO distributed over its four pods and creates the buckets with a Job", () => {
    const command = template(get(objects, "StatefulSet", "minio")).spec.containers[0] as unknown as {
      command: string[];
    };
    // The seed's platform has global.tlsEnabled: MinIO's peers talk HTTPS.
    expect(command.command).toContain("https://minio-{0...3}.minio-headless.onto-system.svc/data");
    expect(command.command).toEqual(expect.arrayContaining(["--certs-dir", "/etc/minio/certs"]));
    const job = objects.find((o) => o.kind === "Job" && o.metadata.name.startsWith("minio-buckets-"));
    const script = JSON.stringify(job);
    expect(script).toContain("mc mb --ignore-existing onto/onto-data");
    expect(script).toContain("mc mb --ignore-existing onto/onto-iceberg");
    // The Job's pods are not the MinIO Service's endpoints.
    expect(template(job!).metadata.labels["app.kubernetes.io/name"]).toBe("minio-buckets");
  });

  it("runs Kafka in KRaft mode with a quorum of all three pods and a topic Job that never shrinks", () => {
    const env = template(get(objects, "StatefulSet", "kafka")).spec.containers[0]?.env ?? [];
    const value = (n: string) => env.find((e) => e.name === n)?.value;
    expect(value("KAFKA_PROCESS_ROLES")).toBe("broker,controller");
    expect(value("KAFKA_CONTROLLER_QUORUM_VOTERS")?.split(",")).toHaveLength(3);
    expect(env.find((e) => e.name === "CLUSTER_ID")?.valueFrom?.secretKeyRef).toEqual({
      name: "kafka-cluster",
      key: "cluster-id",
    });
    const job = JSON.stringify(
      objects.find((o) => o.kind === "Job" && o.metadata.name.startsWith("kafka-topics-")),
    );
    expect(job).toContain("ensure ontology-events 12 3");
    expect(job).toContain("--alter");
    expect(job).toContain("cannot remove partitions");
  });

  it("reruns a setup Job under a new name when its content changes, and only then", () => {
    const jobName = (objs: RenderedObject[]) =>
      objs.find((o) => o.kind === "Job" && o.metadata.name.startsWith("kafka-topics-"))?.metadata.name;
    const more = render(PRODUCTION, (s) => {
      s.infrastructure!.kafka!.topics![0]!.partitions = 24;
    });
    expect(jobName(more)).not.toBe(jobName(objects));
    expect(jobName(render(PRODUCTION))).toBe(jobName(objects));
  });

  it("gives each platform service the endpoints it needs, tracing and logging in its ConfigMap", () => {
    const data = get(objects, "ConfigMap", "data-service-config").data as Record<string, string>;
    expect(data).toMatchObject({
      DATABASE_HOST: "postgres",
      KAFKA_BOOTSTRAP_SERVERS: "kafka:9092",
      S3_ENDPOINT: "https://minio:9000",
      TLS_CA_FILE: "/etc/onto/tls/ca.crt",
      NESSIE_URI: "http://nessie:19120/api/v2",
      JAEGER_ENDPOINT: "http://jaeger:14268/api/traces",
      LOG_LEVEL: "INFO",
      LOG_FORMAT: "json",
    });
    const agent = get(objects, "ConfigMap", "agent-runtime-config").data as Record<string, string>;
    expect(agent.TEMPORAL_ADDRESS).toBe("temporal:7233");
    expect(agent.REDIS_SENTINEL_ADDRS).toBe("redis:26379");
    const container = template(get(objects, "Deployment", "data-service")).spec.containers[0];
    expect(container?.envFrom).toEqual([{ configMapRef: { name: "data-service-config" } }]);
  });

  it("exposes the gateway through an Ingress with its host and TLS secret", () => {
    expect(spec(get(objects, "Ingress", "gateway"))).toMatchObject({
      tls: [{ hosts: ["platform.example.com"], secretName: "onto-tls" }],
      rules: [{ host: "platform.example.com" }],
    });
  });

  it("creates ServiceMonitors and VPAs only when the cluster serves their APIs", () => {
    expect(objects.filter((o) => o.kind === "ServiceMonitor").map((o) => o.metadata.name)).toContain(
      "ontology-service",
    );
    expect(spec(get(objects, "VerticalPodAutoscaler", "kafka"))).toMatchObject({
      updatePolicy: { updateMode: "Off" },
    });
    const bare = render(PRODUCTION, undefined, { capabilities: NO_APIS });
    expect(bare.some((o) => o.kind === "ServiceMonitor" || o.kind === "VerticalPodAutoscaler")).toBe(false);
    const unwanted = render(PRODUCTION, (s) => {
      s.observability!.metrics!.serviceMonitor = false;
    });
    expect(unwanted.some((o) => o.kind === "ServiceMonitor")).toBe(false);
  });

  it("renders the gRPC Pods metric only where custom metrics are served (else the HPA could never scale down)", () => {
    const cpuOnly = render(PRODUCTION, undefined, {
      capabilities: { ...ALL_APIS, customMetrics: false },
    });
    expect(spec(get(cpuOnly, "HorizontalPodAutoscaler", "ontology-service"))).toMatchObject({
      metrics: [{ type: "Resource", resource: { name: "cpu" } }],
    });
    expect(
      (spec(get(cpuOnly, "HorizontalPodAutoscaler", "ontology-service")) as { metrics: unknown[] }).metrics,
    ).toHaveLength(1);
  });

  it("renders autoscaling.behavior into the HPA's policies and windows", () => {
    const fast = render(PRODUCTION, (s) => {
      s.controlPlane!.ontologyService!.autoscaling!.behavior = {
        scaleUp: { pods: 3, periodSeconds: 15, stabilizationWindowSeconds: 0 },
        scaleDown: { pods: 1, periodSeconds: 15, stabilizationWindowSeconds: 30 },
      };
    });
    expect(spec(get(fast, "HorizontalPodAutoscaler", "ontology-service"))).toMatchObject({
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: "Pods", value: 3, periodSeconds: 15 }] },
        scaleDown: {
          stabilizationWindowSeconds: 30,
          policies: [{ type: "Pods", value: 1, periodSeconds: 15 }],
        },
      },
    });
  });

  it("gives a VPA memory only where an HPA scales on CPU, none with mode Off, bounds from the spec", () => {
    const out = render(PRODUCTION, (s) => {
      s.infrastructure!.kafka!.verticalScaling = {
        mode: "Apply",
        minAllowed: { cpu: "250m" },
        maxAllowed: { cpu: "2", memory: "4Gi" },
      };
      s.dataPlane!.nessie = { ...s.dataPlane!.nessie, verticalScaling: { mode: "Off" } };
    });
    const policies = (name: string) =>
      (spec(get(out, "VerticalPodAutoscaler", name)) as { resourcePolicy: { containerPolicies: unknown[] } })
        .resourcePolicy.containerPolicies;
    expect(policies("ontology-service")).toEqual([
      {
        containerName: "ontology-service",
        controlledResources: ["memory"],
        controlledValues: "RequestsOnly",
      },
      { containerName: "*", mode: "Off" },
    ]);
    expect(policies("kafka")).toEqual([
      {
        containerName: "kafka",
        controlledResources: ["cpu", "memory"],
        controlledValues: "RequestsOnly",
        minAllowed: { cpu: "250m" },
        maxAllowed: { cpu: "2", memory: "4Gi" },
      },
      { containerName: "*", mode: "Off" },
    ]);
    expect(find(out, "VerticalPodAutoscaler", "nessie")).toBeUndefined();
  });

  it("renders requests applied from a VPA recommendation, never above the user's limit", () => {
    const out = render(
      PRODUCTION,
      (s) => {
        s.controlPlane!.schemaRegistry!.resources!.limits = { memory: "2Gi" };
      },
      {
        vertical: {
          "schema-registry": {
            mode: "Apply",
            container: "schema-registry",
            applied: { cpu: "700m", memory: "64Gi" },
          },
        },
      },
    );
    const deployment = get(out, "Deployment", "schema-registry") as RenderedObject & {
      spec: { template: { spec: { containers: { name: string; resources: ResourceRequirements }[] } } };
    };
    const main = deployment.spec.template.spec.containers.find((c) => c.name === "schema-registry");
    // No CPU limit in the spec: the default limit rises to the applied request.
    expect(main?.resources.requests.cpu).toBe("700m");
    expect(main?.resources.limits.cpu).toBe("700m");
    // 64Gi is above the user's memory limit: the request stops there.
    expect(main?.resources.requests.memory).toBe("2Gi");
    expect(main?.resources.limits.memory).toBe("2Gi");
  });

  it("does not render tenant guard rails without tenancy mode namespace", () => {
    expect(objects.some((o) => ["ResourceQuota", "LimitRange", "NetworkPolicy"].includes(o.kind))).toBe(
      false,
    );
  });
});

describe("switches in the spec", () => {
  it("ingress off: no Ingress", () => {
    const objs = render(PRODUCTION, (s) => {
      s.gateway!.ingress!.enabled = false;
    });
    expect(find(objs, "Ingress", "gateway")).toBeUndefined();
    expect(find(objs, "Deployment", "gateway")).toBeDefined();
  });

  it("temporal off: no Temporal objects and no Temporal address", () => {
    const objs = render(PRODUCTION, (s) => {
      s.intelligencePlane!.agentRuntime!.temporal!.enabled = false;
    });
    expect(objs.filter((o) => o.metadata.labels["app.kubernetes.io/name"] === "temporal")).toEqual([]);
    expect(get(objs, "ConfigMap", "agent-runtime-config").data).not.toHaveProperty("TEMPORAL_ADDRESS");
  });

  it("a log level change changes the config checksum on the pod template (pods roll)", () => {
    const checksum = (objs: RenderedObject[]) =>
      template(get(objs, "Deployment", "ontology-service")).metadata.annotations?.[
        CONFIG_CHECKSUM_ANNOTATION
      ];
    const before = checksum(render(PRODUCTION));
    const after = checksum(
      render(PRODUCTION, (s) => {
        s.observability!.logging!.level = "DEBUG";
      }),
    );
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(after).toMatch(/^[0-9a-f]{64}$/);
    expect(after).not.toBe(before);
  });

  it("applies the node pool to every pod", () => {
    const objs = render(PRODUCTION, (s) => {
      s.global!.nodePool = {
        nodeSelector: { "node-pool": "platform" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "platform", effect: "NoSchedule" }],
      };
    });
    for (const o of podObjects(objs)) {
      const pod = template(o).spec;
      expect(pod.nodeSelector).toEqual({ "node-pool": "platform" });
      expect(pod.tolerations).toContainEqual(
        expect.objectContaining({ key: "dedicated", value: "platform" }),
      );
    }
  });

  it("places a component on its own node pool, merged over the platform's, Jobs included", () => {
    const real = {
      key: "onto.paas/node-kind",
      operator: "Equal",
      value: "real",
      effect: "NoSchedule",
    } as const;
    const objs = render(PRODUCTION, (s) => {
      s.global!.nodePool = {
        nodeSelector: { "node-pool": "platform", zone: "a" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "platform", effect: "NoSchedule" }],
      };
      s.infrastructure!.postgres!.nodePool = {
        nodeSelector: { "node-pool": "databases" },
        tolerations: [real],
      };
      s.infrastructure!.minio!.nodePool = {
        nodeSelector: { "onto.paas/node-kind": "real" },
        tolerations: [real],
      };
    });
    const postgres = template(get(objs, "StatefulSet", "postgres")).spec;
    // Its key replaces the platform's value, the platform's other keys stay; tolerations add up.
    expect(postgres.nodeSelector).toEqual({ "node-pool": "databases", zone: "a" });
    expect(postgres.tolerations).toEqual([
      { key: "dedicated", operator: "Equal", value: "platform", effect: "NoSchedule" },
      real,
    ]);
    const bucketJob = objs.find((o) => o.kind === "Job" && o.metadata.name.startsWith("minio-buckets"));
    expect(bucketJob && template(bucketJob).spec.nodeSelector).toEqual({
      "node-pool": "platform",
      zone: "a",
      "onto.paas/node-kind": "real",
    });
    // Everyone else keeps the platform's pool.
    const redis = template(get(objs, "StatefulSet", "redis")).spec;
    expect(redis.nodeSelector).toEqual({ "node-pool": "platform", zone: "a" });
    expect(redis.tolerations).toHaveLength(1);
  });

  it("keeps the GPU toleration beside a component's own pool", () => {
    const objs = render(PRODUCTION, (s) => {
      s.intelligencePlane!.reasoningService!.nodePool = { nodeSelector: { "gpu-pool": "a100" } };
    });
    const pod = template(get(objs, "Deployment", "reasoning-service")).spec;
    expect(pod.nodeSelector).toEqual({ "gpu-pool": "a100" });
    expect(pod.tolerations?.map((t) => t.key)).toContain("nvidia.com/gpu");
  });

  it("Nessie keeps its store on its volume with one replica and in PostgreSQL with more", () => {
    const store = (objs: RenderedObject[]) =>
      (get(objs, "ConfigMap", "nessie-config").data as Record<string, string>).NESSIE_VERSION_STORE_TYPE;
    expect(store(render(PRODUCTION))).toBe("JDBC");
    expect(
      store(
        render(PRODUCTION, (s) => {
          s.dataPlane!.nessie!.replicas = 1;
        }),
      ),
    ).toBe("ROCKSDB");
  });
});

describe("inputs from the cluster and the controllers", () => {
  it("applies the healer's memory override to the component's main container", () => {
    const objs = render(PRODUCTION, undefined, {
      overrides: {
        "ontology-service": { memoryLimit: "6Gi" },
        kafka: { memoryLimit: "3Gi", memoryRequest: "1536Mi" },
      },
    });
    const ontology = template(get(objs, "Deployment", "ontology-service")).spec.containers[0];
    expect(ontology?.resources.limits.memory).toBe("6Gi");
    expect(ontology?.resources.requests.memory).toBe("2Gi");
    const kafka = template(get(objs, "StatefulSet", "kafka")).spec.containers[0];
    expect(kafka?.resources).toMatchObject({ limits: { memory: "3Gi" }, requests: { memory: "1536Mi" } });
    const untouched = template(get(objs, "Deployment", "auth-service")).spec.containers[0];
    expect(untouched?.resources.limits.memory).toBe("1Gi");
  });

  it("generates missing secret values with the caller's generator and reuses stored ones", () => {
    const calls: string[] = [];
    const objs = render(PRODUCTION, undefined, {
      existingSecrets: { "postgres-credentials": { password: "stored-password" } },
      generateSecret: ({ secret, key }) => {
        calls.push(`${secret}/${key}`);
        return `fresh-${key}`;
      },
    });
    const data = get(objs, "Secret", "postgres-credentials").data as Record<string, string>;
    const decode = (v: string | undefined) => Buffer.from(v ?? "", "base64").toString("utf8");
    expect(decode(data.password)).toBe("stored-password");
    expect(decode(data["replication-password"])).toBe("fresh-replication-password");
    expect(calls).not.toContain("postgres-credentials/password");
    expect(calls).toContain("redis-credentials/password");
    for (const s of objs.filter((o) => o.kind === "Secret")) {
      expect(s.metadata.labels[GENERATED_SECRET_LABEL]).toBe("true");
    }
  });

  it("keeps credentials out of everything but Secrets: pods reference them by name", () => {
    const objs = render(PRODUCTION);
    const secretValues = objs
      .filter((o) => o.kind === "Secret")
      .flatMap((o) =>
        Object.values(o.data as Record<string, string>).map((v) => Buffer.from(v, "base64").toString()),
      );
    expect(secretValues.length).toBeGreaterThan(0);
    const rest = JSON.stringify(objs.filter((o) => o.kind !== "Secret"));
    for (const value of secretValues) expect(rest).not.toContain(value);
    // and no value of the spec is used as a credential
    const specStrings = JSON.stringify(PRODUCTION.spec).match(/"[^"]{6,}"/g) ?? [];
    for (const value of secretValues) expect(specStrings).not.toContain(`"${value}"`);
  });

  it("renders a canary Deployment beside the stable one during an upgrade step", () => {
    const objs = render(
      PRODUCTION,
      (s) => {
        s.version = "1.6.0";
      },
      { upgrade: { "ontology-service": { version: "1.5.0", canaryVersion: "1.6.0" } } },
    );
    const stable = get(objs, "Deployment", "ontology-service");
    const canary = get(objs, "Deployment", "ontology-service-canary");
    expect(template(stable).spec.containers[0]?.image).toMatch(/:1\.5\.0$/);
    expect(template(canary).spec.containers[0]?.image).toMatch(/:1\.6\.0$/);
    expect(spec(canary).replicas).toBe(1);
    // The two selectors never overlap; the Service selects both tracks.
    const selector = (o: RenderedObject) =>
      (spec(o).selector as { matchLabels: Record<string, string> }).matchLabels;
    expect(selector(stable)["onto.paas/track"]).toBe("stable");
    expect(selector(canary)["onto.paas/track"]).toBe("canary");
    expect(spec(get(objs, "Service", "ontology-service")).selector).not.toHaveProperty("onto.paas/track");
    // Components not in the step run spec.version.
    expect(template(get(objs, "Deployment", "gateway")).spec.containers[0]?.image).toMatch(/:1\.6\.0$/);
  });

  it("sets a StatefulSet partition for a canary of stateful infrastructure", () => {
    const objs = render(
      PRODUCTION,
      (s) => {
        s.version = "1.6.0";
      },
      { upgrade: { kafka: { version: "1.6.0", partition: 2 } } },
    );
    const kafka = spec(get(objs, "StatefulSet", "kafka"));
    expect(kafka.updateStrategy).toEqual({ type: "RollingUpdate", rollingUpdate: { partition: 2 } });
    expect(template(get(objs, "StatefulSet", "kafka")).spec.containers[0]?.image).toBe(
      imageFor(releaseFor("1.6.0"), "kafka", "r"),
    );
    // Outside an upgrade the partition is explicitly 0, so the orchestrator's value is reset.
    const plain = spec(get(render(PRODUCTION), "StatefulSet", "kafka"));
    expect(plain.updateStrategy).toEqual({ type: "RollingUpdate", rollingUpdate: { partition: 0 } });
  });

  it("leaves replacing Postgres members with standbys to the operator, the canary partition as an annotation", () => {
    const meta = (o: RenderedObject) => o.metadata.annotations ?? {};
    const pg = get(render(PRODUCTION), "StatefulSet", "postgres");
    expect(spec(pg).updateStrategy).toEqual({ type: "OnDelete" });
    expect(meta(pg)).not.toHaveProperty(PARTITION_ANNOTATION);
    const canary = get(
      render(
        PRODUCTION,
        (s) => {
          s.version = "1.6.0";
        },
        { upgrade: { postgres: { version: "1.6.0", partition: 2 } } },
      ),
      "StatefulSet",
      "postgres",
    );
    expect(spec(canary).updateStrategy).toEqual({ type: "OnDelete" });
    expect(meta(canary)[PARTITION_ANNOTATION]).toBe("2");
    // One member has no standby to hand over to: the StatefulSet rolls it.
    const single = get(
      render(PRODUCTION, (s) => {
        s.infrastructure!.postgres!.replicas = 1;
      }),
      "StatefulSet",
      "postgres",
    );
    expect(spec(single).updateStrategy).toEqual({ type: "RollingUpdate", rollingUpdate: { partition: 0 } });
  });

  it("has a Postgres primary with standbys stop itself when cut off, and a single member never", () => {
    const scriptsOf = (objects: RenderedObject[]) =>
      get(objects, "ConfigMap", "postgres-config").data as Record<string, string>;
    const three = scriptsOf(render(PRODUCTION));
    // Cut off: no connection to the API server, and no other member (of the headless Service) answers.
    expect(three["isolated.sh"]).toContain("/dev/tcp/$KUBERNETES_SERVICE_HOST/$KUBERNETES_SERVICE_PORT");
    expect(three["isolated.sh"]).toContain("getent ahostsv4 postgres-headless.onto-system.svc");
    expect(three["ready.sh"]).toContain("bash /opt/onto/isolated.sh");
    expect(three["ready.sh"]).toContain('pg_ctl -D "$PGDATA" -m fast -W stop');
    // A former primary does not start as the primary while cut off.
    expect(three["entrypoint.sh"]).toContain("if ! bash /opt/onto/isolated.sh; then");
    const single = scriptsOf(
      render(PRODUCTION, (s) => {
        s.infrastructure!.postgres!.replicas = 1;
      }),
    );
    expect(single["ready.sh"]).not.toContain("isolated.sh");
    expect(single["ready.sh"]).not.toContain("pg_ctl");
  });

  it("refuses a platform name too long to be a label value, naming the field", () => {
    const long = { ...PRODUCTION, metadata: { ...PRODUCTION.metadata, name: "p".repeat(64) } };
    expect(() => render(long)).toThrow(/metadata\.name.*at most 63/);
  });

  it("is deterministic: the same input renders the same objects", () => {
    expect(JSON.stringify(render(PRODUCTION))).toBe(JSON.stringify(render(PRODUCTION)));
  });
});

describe("the seed's tenant platform", () => {
  const objects = render(TENANT);

  it("gets the quota of the spec and a limit range, before any workload", () => {
    expect(spec(get(objects, "ResourceQuota", "onto-tenant-quota")).hard).toEqual({
      "limits.cpu": "20",
      "limits.memory": "40Gi",
      "requests.cpu": "10",
      "requests.memory": "20Gi",
    });
    expect(find(objects, "LimitRange", "onto-tenant-limits")).toBeDefined();
    const firstPod = objects.findIndex((o) => PODS.has(o.kind));
    expect(objects.indexOf(get(objects, "ResourceQuota", "onto-tenant-quota"))).toBeLessThan(firstPod);
    expect(objects.indexOf(get(objects, "LimitRange", "onto-tenant-limits"))).toBeLessThan(firstPod);
  });

  it("denies by default and allows the namespace, the allowed namespaces and DNS", () => {
    expect(spec(get(objects, "NetworkPolicy", "onto-default-deny"))).toEqual({
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
    });
    const allow = spec(get(objects, "NetworkPolicy", "onto-allow-platform"));
    const text = JSON.stringify(allow);
    expect(text).toContain('"values":["onto-system"]');
    expect(text).toContain('"port":53');
    expect((allow.ingress as { from: unknown[] }[])[0]?.from).toContainEqual({ podSelector: {} });
  });

  it("renders no network policy without isolate", () => {
    const objs = render(TENANT, (s) => {
      s.tenancy!.networkPolicy!.isolate = false;
    });
    expect(objs.some((o) => o.kind === "NetworkPolicy")).toBe(false);
  });
});

describe("retention of data volumes", () => {
  const policies = (objects: RenderedObject[]): string[] =>
    objects
      .filter((o) => o.kind === "StatefulSet")
      .map(
        (o) =>
          (o.spec as { persistentVolumeClaimRetentionPolicy: { whenDeleted: string } })
            .persistentVolumeClaimRetentionPolicy.whenDeleted,
      );

  it("keeps every StatefulSet's volumes by default, also when the StatefulSet is deleted", () => {
    const found = policies(render(PRODUCTION));
    expect(found.length).toBe(5);
    expect(new Set(found)).toEqual(new Set(["Retain"]));
  });

  it("lets the StatefulSet controller delete them with the StatefulSet under retention Delete", () => {
    const found = policies(
      render(PRODUCTION, (spec) => (spec.retentionPolicy = { persistentVolumeClaims: "Delete" })),
    );
    expect(new Set(found)).toEqual(new Set(["Delete"]));
  });
});

describe("retention of generated Secrets", () => {
  const generated = (objects: RenderedObject[]): RenderedObject[] =>
    objects.filter((o) => o.kind === "Secret" && o.metadata.labels[GENERATED_SECRET_LABEL] === "true");

  it("renders them without an owner reference under Retain (the default), so deleting the platform keeps them", () => {
    const secrets = generated(render(PRODUCTION));
    expect(secrets.map((s) => s.metadata.name).sort()).toEqual([
      "kafka-cluster",
      "minio-credentials",
      "postgres-credentials",
      "redis-credentials",
    ]);
    for (const s of secrets) expect(s.metadata.ownerReferences).toBeUndefined();
  });

  it("owns them under Delete, so the garbage collector removes them with the platform", () => {
    const secrets = generated(render(PRODUCTION, (spec) => (spec.retentionPolicy = { secrets: "Delete" })));
    expect(secrets.length).toBe(4);
    for (const s of secrets)
      expect(s.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: PRODUCTION.metadata.uid })]);
  });
});

describe("settings each program reads the way its version reads them", () => {
  const envOf = (objects: RenderedObject[], kind: string, name: string): Record<string, string> => {
    const env = template(get(objects, kind, name)).spec.containers[0]?.env ?? [];
    return Object.fromEntries(
      env.map((e) => [
        e.name,
        e.value ?? `${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}`,
      ]),
    );
  };

  it("gives Nessie before 0.96 its S3 credentials as access-key.name and .secret (platform 1.5.0: 0.95.0)", () => {
    const env = envOf(render(PRODUCTION), "StatefulSet", "nessie");
    expect(env).toMatchObject({
      NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY_NAME: "minio-credentials/root-user",
      NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY_SECRET: "minio-credentials/root-password",
    });
    expect(Object.values(env).some((v) => v.startsWith("urn:nessie-secret"))).toBe(false);
  });

  it("gives Nessie 0.96 and later a urn:nessie-secret reference and the named secret (platform 1.6.0: 0.99.0)", () => {
    const env = envOf(
      render(PRODUCTION, (s) => (s.version = "1.6.0")),
      "StatefulSet",
      "nessie",
    );
    expect(env).toMatchObject({
      NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY:
        "urn:nessie-secret:quarkus:nessie.catalog.secrets.minio",
      NESSIE_CATALOG_SECRETS_MINIO_NAME: "minio-credentials/root-user",
      NESSIE_CATALOG_SECRETS_MINIO_SECRET: "minio-credentials/root-password",
    });
    expect(env).not.toHaveProperty("NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY_NAME");
  });

  it("sends Nessie's traces over OTLP to the Jaeger collector's OTLP port (Quarkus reads no Jaeger endpoint)", () => {
    const config = get(render(PRODUCTION), "ConfigMap", "nessie-config").data as Record<string, string>;
    expect(config.QUARKUS_OTEL_SDK_DISABLED).toBe("false");
    expect(config.QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).toBe("http://jaeger:4317");
    expect(config).not.toHaveProperty("JAEGER_ENDPOINT");
    const service = get(render(PRODUCTION), "ConfigMap", "ontology-service-config").data as Record<
      string,
      string
    >;
    expect(service.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://jaeger:4317");
  });

  it("sizes Kafka's heap at half its memory limit, also after the healer raised it", () => {
    expect(envOf(render(PRODUCTION), "StatefulSet", "kafka").KAFKA_HEAP_OPTS).toBe("-Xms512m -Xmx512m");
    const healed = render(PRODUCTION, undefined, { overrides: { kafka: { memoryLimit: "3Gi" } } });
    expect(envOf(healed, "StatefulSet", "kafka").KAFKA_HEAP_OPTS).toBe("-Xms1536m -Xmx1536m");
  });
});

describe("the platform's TLS links (global.tlsEnabled)", () => {
  const tls = render(PRODUCTION);
  const plain = render(PRODUCTION, (spec) => {
    spec.global = { ...spec.global, tlsEnabled: false };
  });
  const pod = (objects: RenderedObject[], kind: string, name: string) =>
    (get(objects, kind, name).spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      containers: (Container & Record<string, unknown>)[];
      initContainers?: (Container & Record<string, unknown>)[];
      volumes?: { name: string; secret?: Record<string, unknown> }[];
      securityContext?: { fsGroup?: number };
    };

  it("MinIO serves HTTPS with the platform certificate laid out as it reads it, probed and scraped over TLS", () => {
    const spec = pod(tls, "StatefulSet", "minio");
    const minio = spec.containers[0]!;
    expect(minio.command).toEqual(expect.arrayContaining(["--certs-dir", "/etc/minio/certs"]));
    expect(minio.readinessProbe).toMatchObject({ httpGet: { scheme: "HTTPS" } });
    expect(minio.livenessProbe).toMatchObject({ httpGet: { scheme: "HTTPS" } });
    expect(spec.volumes?.find((v) => v.name === "tls")?.secret).toEqual({
      secretName: "onto-tls",
      defaultMode: 0o440,
      items: [
        { key: "tls.crt", path: "public.crt" },
        { key: "tls.key", path: "private.key" },
        { key: "ca.crt", path: "CAs/ca.crt" },
      ],
    });
    const monitor = get(tls, "ServiceMonitor", "minio").spec as { endpoints: Record<string, unknown>[] };
    expect(monitor.endpoints[0]).toMatchObject({
      scheme: "https",
      tlsConfig: { ca: { secret: { name: "onto-tls", key: "ca.crt" } }, serverName: "minio.onto-system.svc" },
    });
    const job = tls.find((o) => o.kind === "Job" && o.metadata.name.startsWith("minio-buckets-"))!;
    const jobPod = (job.spec as { template: { spec: { securityContext?: { fsGroup?: number } } } }).template
      .spec;
    expect(JSON.stringify(job)).toContain("mc alias set onto https://minio:9000");
    expect(JSON.stringify(job)).toContain('"name":"SSL_CERT_FILE","value":"/etc/onto/tls/ca.crt"');
    expect(jobPod.securityContext?.fsGroup).toBe(1000);
  });

  it("tells every client https and the CA to verify against; Nessie trusts it through its truststore", () => {
    for (const service of ["data-service", "agent-runtime", "gateway"]) {
      const data = get(tls, "ConfigMap", `${service}-config`).data as Record<string, string>;
      expect(data.TLS_CA_FILE, service).toBe("/etc/onto/tls/ca.crt");
    }
    const nessieConfig = get(tls, "ConfigMap", "nessie-config").data as Record<string, string>;
    expect(nessieConfig.NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ENDPOINT).toBe("https://minio:9000/");
    const nessie = pod(tls, "StatefulSet", "nessie");
    expect(nessie.initContainers?.map((c) => c.name)).toEqual(["truststore"]);
    expect(JSON.stringify(nessie.initContainers)).toContain("keytool -importcert");
    const options = nessie.containers[0]!.env?.find((e) => e.name === "JAVA_TOOL_OPTIONS")?.value;
    expect(options).toContain("-Djavax.net.ssl.trustStore=/nessie/truststore/cacerts");
  });

  it("Postgres serves the certificate, takes network connections only over TLS, and streams over verified TLS", () => {
    const config = get(tls, "ConfigMap", "postgres-config").data as Record<string, string>;
    expect(config["pg_hba.conf"]).toMatch(/^hostssl all all all scram-sha-256$/m);
    expect(config["pg_hba.conf"]).toMatch(/^hostssl replication replicator all scram-sha-256$/m);
    expect(config["pg_hba.conf"]).not.toMatch(/^host /m);
    const script = config["entrypoint.sh"]!;
    expect(script).toContain(
      "-c 'ssl=on' -c 'ssl_cert_file=/etc/onto/tls/tls.crt' -c 'ssl_key_file=/etc/onto/tls/tls.key'",
    );
    expect(script).toContain("sslmode=verify-full sslrootcert=/etc/onto/tls/ca.crt");
    const spec = pod(tls, "StatefulSet", "postgres");
    // Postgres refuses a key file that others may read or the group may write.
    expect(spec.volumes?.find((v) => v.name === "tls")?.secret).toEqual({
      secretName: "onto-tls",
      defaultMode: 0o440,
    });
    expect(spec.securityContext?.fsGroup).toBe(999);
    const env = Object.fromEntries((spec.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ PGSSLMODE: "verify-ca", PGSSLROOTCERT: "/etc/onto/tls/ca.crt" });
    const service = get(tls, "ConfigMap", "auth-service-config").data as Record<string, string>;
    expect(service).toMatchObject({
      DATABASE_SSLMODE: "verify-full",
      DATABASE_SSLROOTCERT: "/etc/onto/tls/ca.crt",
    });
  });

  it("Redis and its Sentinels listen only on TLS, replicate over it, and every redis-cli verifies the chain", () => {
    const config = get(tls, "ConfigMap", "redis-config").data as Record<string, string>;
    for (const line of [
      "port 0",
      "tls-port 6379",
      "tls-replication yes",
      "tls-cert-file /etc/onto/tls/tls.crt",
    ])
      expect(config["redis.conf"]).toContain(line);
    expect(config["start-sentinel.sh"]).toContain('echo "tls-port 26379"');
    expect(config["start-sentinel.sh"]).toContain('echo "port 0"');
    for (const script of ["start-redis.sh", "start-sentinel.sh"])
      expect(
        config[script]!.match(/redis-cli(?! --tls --cacert \/etc\/onto\/tls\/ca\.crt)/g),
        script,
      ).toBeNull();
    const spec = pod(tls, "StatefulSet", "redis");
    for (const c of spec.containers) {
      expect(JSON.stringify(c.readinessProbe ?? c.livenessProbe)).toContain("redis-cli --tls --cacert");
      expect((c.volumeMounts as { name: string }[]).map((m) => m.name)).toContain("tls");
    }
    expect((get(tls, "ConfigMap", "auth-service-config").data as Record<string, string>).REDIS_TLS).toBe(
      "true",
    );
  });

  it("Kafka's listeners (clients, brokers, controllers) speak TLS from a PEM keystore written at start", () => {
    const spec = pod(tls, "StatefulSet", "kafka");
    const env = Object.fromEntries((spec.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      KAFKA_LISTENERS: "CLIENTS://:9092,CONTROLLER://:9093",
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: "CONTROLLER:SSL,CLIENTS:SSL",
      KAFKA_INTER_BROKER_LISTENER_NAME: "CLIENTS",
      KAFKA_SSL_KEYSTORE_TYPE: "PEM",
      KAFKA_SSL_TRUSTSTORE_LOCATION: "/etc/onto/tls/ca.crt",
    });
    // The image's start script takes an advertised listener named SSL as a request for JKS files.
    expect(env.KAFKA_ADVERTISED_LISTENERS).not.toMatch(/SSL:/);
    expect(spec.initContainers?.map((c) => c.name)).toEqual(["keystore"]);
    const job = tls.find((o) => o.kind === "Job" && o.metadata.name.startsWith("kafka-topics-"))!;
    expect(JSON.stringify(job)).toContain("--command-config /tmp/client.properties");
    expect(
      (get(tls, "ConfigMap", "data-service-config").data as Record<string, string>).KAFKA_SECURITY_PROTOCOL,
    ).toBe("SSL");
  });

  it("without tlsEnabled every link stays plaintext and nothing mounts the certificate", () => {
    const minio = pod(plain, "StatefulSet", "minio");
    expect(minio.containers[0]!.command).not.toContain("--certs-dir");
    expect(JSON.stringify(minio.containers[0]!.command)).toContain("http://minio-{0...3}");
    expect(minio.volumes?.some((v) => v.name === "tls") ?? false).toBe(false);
    expect((get(plain, "ConfigMap", "data-service-config").data as Record<string, string>).S3_ENDPOINT).toBe(
      "http://minio:9000",
    );
    expect(get(plain, "ConfigMap", "data-service-config").data).not.toHaveProperty("TLS_CA_FILE");
    expect(pod(plain, "StatefulSet", "nessie").initContainers).toBeUndefined();
    for (const component of ["postgres", "redis", "kafka"])
      expect(
        pod(plain, "StatefulSet", component).volumes?.some((v) => v.name === "tls") ?? false,
        component,
      ).toBe(false);
    const pgConfig = get(plain, "ConfigMap", "postgres-config").data as Record<string, string>;
    expect(pgConfig["pg_hba.conf"]).toMatch(/^host all all all scram-sha-256$/m);
    expect(pgConfig["entrypoint.sh"]).not.toContain("ssl=on");
    expect((get(plain, "ConfigMap", "redis-config").data as Record<string, string>)["redis.conf"]).toMatch(
      /^port 6379$/m,
    );
    const plainService = get(plain, "ConfigMap", "auth-service-config").data as Record<string, string>;
    for (const key of ["DATABASE_SSLMODE", "REDIS_TLS"]) expect(plainService).not.toHaveProperty(key);
  });
});
