// A coomia-dip platform service (every plane's services are built the same way): gRPC on 9090
// with gRPC health probes (seed 3.1), HTTP on 8080 for metrics and, for non-gRPC services such
// as the gateway, health; a ConfigMap with the endpoints the service needs, the tracing and
// logging settings; credentials from the generated Secrets; a writable /tmp on an otherwise
// read-only root filesystem; the platform TLS certificate when global.tlsEnabled.
import { COMPONENTS, type ComponentName } from "../api/index.js";
import { info, mainResources, workloadBase, type RenderContext, placementFor } from "./context.js";
import { KAFKA, MINIO, NESSIE, POSTGRES, REDIS, TEMPORAL } from "./endpoints.js";
import type { Container, EnvVar, Toleration, Volume } from "./objects.js";
import { secretEnv } from "./secrets.js";
import {
  TLS_DIR,
  TLS_KEYS,
  clientTrustEnv,
  kafkaClientTlsEnv,
  minioUrl,
  platformTlsSecret,
  postgresClientTlsEnv,
  redisClientTlsEnv,
} from "./tls.js";
import { otlpEndpoint } from "./tracing.js";
import { buildWorkload, configMapName, type ServicePort, type ComponentObjects } from "./workload.js";

export const GRPC_PORT = 9090;
export const HTTP_PORT = 8080;
/** The distroless "nonroot" user the platform images run as. */
const NONROOT_UID = 65532;

/** Backing services a platform service talks to; each adds its endpoint (and credentials). */
export type Dependency = "postgres" | "redis" | "kafka" | "minio" | "nessie" | "temporal" | "services";

export interface PlatformServiceOptions {
  needs: readonly Dependency[];
  /** Extra resources on the main container, requests = limits (e.g. { "nvidia.com/gpu": "1" }). */
  extraResources?: Record<string, string>;
  tolerations?: Toleration[];
}

export function platformServicePorts(grpc: boolean): ServicePort[] {
  return grpc
    ? [
        { name: "grpc", port: GRPC_PORT, appProtocol: "grpc" },
        { name: "http", port: HTTP_PORT, appProtocol: "http" },
      ]
    : [{ name: "http", port: HTTP_PORT, appProtocol: "http" }];
}

function envName(component: string): string {
  return component.toUpperCase().replace(/-/g, "_");
}

/** The ConfigMap of a platform service: what it needs to find, and how to log and trace. */
export function serviceConfig(
  ctx: RenderContext,
  name: ComponentName,
  needs: readonly Dependency[],
): Record<string, string> {
  const { observability, global, infrastructure } = ctx.spec;
  const grpc = info(name).grpc;
  const config: Record<string, string> = {
    SERVICE_NAME: name,
    HTTP_PORT: String(HTTP_PORT),
    ...(grpc ? { GRPC_PORT: String(GRPC_PORT) } : {}),
    LOG_LEVEL: observability.logging.level,
    LOG_FORMAT: observability.logging.format,
    METRICS_ENABLED: String(observability.metrics.enabled),
    TRACING_ENABLED: String(observability.tracing.enabled),
    ...(observability.tracing.enabled && observability.tracing.jaegerEndpoint
      ? {
          JAEGER_ENDPOINT: observability.tracing.jaegerEndpoint,
          // What every OpenTelemetry SDK reads.
          OTEL_SERVICE_NAME: name,
          OTEL_TRACES_EXPORTER: "otlp",
          OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint(ctx.spec) ?? "",
          OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        }
      : {}),
    TLS_ENABLED: String(global.tlsEnabled),
    ...(platformTlsSecret(ctx)
      ? { TLS_CERT_FILE: `${TLS_DIR}/${TLS_KEYS.cert}`, TLS_KEY_FILE: `${TLS_DIR}/${TLS_KEYS.key}` }
      : {}),
    ...clientTrustEnv(ctx),
  };
  for (const need of needs) {
    switch (need) {
      case "postgres":
        Object.assign(config, {
          DATABASE_HOST: POSTGRES.service,
          DATABASE_READ_HOST: POSTGRES.readOnlyService,
          DATABASE_PORT: String(POSTGRES.port),
          DATABASE_NAME: POSTGRES.database,
          DATABASE_SCHEMA: name.replace(/-/g, "_"),
          DATABASE_USER: POSTGRES.user,
          ...postgresClientTlsEnv(ctx),
        });
        break;
      case "redis":
        Object.assign(
          config,
          infrastructure.redis.mode === "sentinel"
            ? {
                REDIS_MODE: "sentinel",
                REDIS_SENTINEL_ADDRS: `${REDIS.service}:${REDIS.sentinelPort}`,
                REDIS_MASTER_NAME: REDIS.masterName,
              }
            : { REDIS_MODE: "standalone", REDIS_ADDR: `${REDIS.service}:${REDIS.port}` },
          redisClientTlsEnv(ctx),
        );
        break;
      case "kafka":
        config.KAFKA_BOOTSTRAP_SERVERS = `${KAFKA.service}:${KAFKA.port}`;
        Object.assign(config, kafkaClientTlsEnv(ctx));
        break;
      case "minio":
        config.S3_ENDPOINT = minioUrl(ctx);
        config.S3_BUCKETS = infrastructure.minio.buckets.map((b) => b.name).join(",");
        break;
      case "nessie":
        config.NESSIE_URI = `http://${NESSIE.service}:${NESSIE.port}/api/v2`;
        break;
      case "temporal":
        if (ctx.spec.intelligencePlane.agentRuntime.temporal.enabled) {
          config.TEMPORAL_ADDRESS = `${TEMPORAL.service}:${TEMPORAL.port}`;
          config.TEMPORAL_NAMESPACE = TEMPORAL.namespace;
        }
        break;
      case "services":
        // The gateway routes to every platform service: gRPC port for gRPC services, else HTTP.
        for (const c of COMPONENTS) {
          if (c.plane === "infrastructure" || c.name === name || c.name === "nessie" || c.name === "temporal")
            continue;
          config[`${envName(c.name)}_ADDR`] = `${c.name}:${c.grpc ? GRPC_PORT : HTTP_PORT}`;
        }
        break;
    }
  }
  return config;
}

function serviceSecrets(needs: readonly Dependency[]): EnvVar[] {
  const env: EnvVar[] = [];
  if (needs.includes("postgres"))
    env.push(secretEnv("DATABASE_PASSWORD", POSTGRES.secret, POSTGRES.passwordKey));
  if (needs.includes("redis")) env.push(secretEnv("REDIS_PASSWORD", REDIS.secret, REDIS.passwordKey));
  if (needs.includes("minio")) {
    env.push(secretEnv("S3_ACCESS_KEY", MINIO.secret, MINIO.userKey));
    env.push(secretEnv("S3_SECRET_KEY", MINIO.secret, MINIO.passwordKey));
  }
  return env;
}

export function renderPlatformService(
  ctx: RenderContext,
  name: ComponentName,
  options: PlatformServiceOptions,
): ComponentObjects {
  const grpc = info(name).grpc;
  const tlsSecret = platformTlsSecret(ctx);
  const probes: Pick<Container, "readinessProbe" | "livenessProbe" | "startupProbe"> = grpc
    ? {
        startupProbe: { grpc: { port: GRPC_PORT }, periodSeconds: 5, failureThreshold: 60 },
        readinessProbe: { grpc: { port: GRPC_PORT }, periodSeconds: 10, failureThreshold: 3 },
        livenessProbe: { grpc: { port: GRPC_PORT }, periodSeconds: 20, failureThreshold: 3 },
      }
    : {
        startupProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 5, failureThreshold: 60 },
        readinessProbe: {
          httpGet: { path: "/readyz", port: "http" },
          periodSeconds: 10,
          failureThreshold: 3,
        },
        livenessProbe: {
          httpGet: { path: "/healthz", port: "http" },
          periodSeconds: 20,
          failureThreshold: 3,
        },
      };
  const ports = platformServicePorts(grpc);
  const resources = mainResources(ctx, name, options.extraResources);
  const env = serviceSecrets(options.needs);
  const volumes: Volume[] = [{ name: "tmp", emptyDir: { sizeLimit: "256Mi" } }];
  const mounts = [{ name: "tmp", mountPath: "/tmp" }];
  if (tlsSecret) {
    volumes.push({ name: "tls", secret: { secretName: tlsSecret } });
    mounts.push({ name: "tls", mountPath: TLS_DIR });
  }
  return buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports,
      config: serviceConfig(ctx, name, options.needs),
      ...(options.extraResources ? { noSurge: true } : {}),
      metricsPort: "http",
      metricsPath: "/metrics",
      pod: (image) => ({
        runAsUser: NONROOT_UID,
        fsGroup: NONROOT_UID,
        ...(options.tolerations ? { tolerations: options.tolerations } : {}),
        containers: [
          {
            name,
            image,
            ports: ports.map((p) => ({ name: p.name, containerPort: p.port })),
            envFrom: [{ configMapRef: { name: configMapName(name) } }],
            env,
            resources,
            ...probes,
            volumeMounts: mounts,
            securityContext: { readOnlyRootFilesystem: true },
          },
        ],
        volumes,
      }),
    },
    placementFor(ctx, name),
  );
}
