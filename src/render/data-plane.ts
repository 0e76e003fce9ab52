// Data layer (C): the data service and Project Nessie, the Iceberg catalog. Nessie keeps its
// version store on its own volume (RocksDB) when it runs one replica; RocksDB cannot be shared,
// so with more replicas the store moves to the platform's PostgreSQL (database "nessie") and
// the volumes only hold scratch data. Its Iceberg warehouse lives in MinIO.
import { mainResources, workloadBase, type RenderContext } from "./context.js";
import { MINIO, NESSIE, POSTGRES } from "./endpoints.js";
import { renderPlatformService } from "./platform-service.js";
import { secretEnv } from "./secrets.js";
import { buildWorkload, configMapName, type ComponentObjects } from "./workload.js";

const NESSIE_UID = 185; // the default user of the UBI OpenJDK images Nessie ships on
const DATA_DIR = "/nessie/data";

export const renderDataService = (ctx: RenderContext): ComponentObjects =>
  renderPlatformService(ctx, "data-service", { needs: ["postgres", "kafka", "minio", "nessie"] });

function nessieConfig(ctx: RenderContext): Record<string, string> {
  const { dataPlane, infrastructure, observability } = ctx.spec;
  const shared = dataPlane.nessie.replicas > 1;
  const buckets = infrastructure.minio.buckets.map((b) => b.name);
  const warehouse = buckets.find((b) => b.includes("iceberg")) ?? buckets[0];
  return {
    QUARKUS_HTTP_PORT: String(NESSIE.port),
    QUARKUS_MANAGEMENT_PORT: String(NESSIE.managementPort),
    QUARKUS_LOG_LEVEL: observability.logging.level,
    QUARKUS_LOG_CONSOLE_JSON: String(observability.logging.format === "json"),
    QUARKUS_OTEL_SDK_DISABLED: String(!observability.tracing.enabled),
    ...(observability.tracing.enabled && observability.tracing.jaegerEndpoint
      ? { JAEGER_ENDPOINT: observability.tracing.jaegerEndpoint }
      : {}),
    ...(shared
      ? {
          NESSIE_VERSION_STORE_TYPE: "JDBC",
          NESSIE_VERSION_STORE_PERSIST_JDBC_DATASOURCE: "postgresql",
          QUARKUS_DATASOURCE_POSTGRESQL_JDBC_URL: `jdbc:postgresql://${POSTGRES.service}:${POSTGRES.port}/nessie`,
          QUARKUS_DATASOURCE_POSTGRESQL_USERNAME: POSTGRES.user,
        }
      : {
          NESSIE_VERSION_STORE_TYPE: "ROCKSDB",
          NESSIE_VERSION_STORE_PERSIST_ROCKS_DATABASE_PATH: DATA_DIR,
        }),
    ...(warehouse
      ? {
          NESSIE_CATALOG_DEFAULT_WAREHOUSE: "warehouse",
          NESSIE_CATALOG_WAREHOUSES_WAREHOUSE_LOCATION: `s3://${warehouse}/`,
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ENDPOINT: `http://${MINIO.service}:${MINIO.port}/`,
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_PATH_STYLE_ACCESS: "true",
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_REGION: "us-east-1",
          // Nessie resolves this URN from the NESSIE_S3_NAME / NESSIE_S3_SECRET env below.
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY: "urn:nessie-secret:quarkus:nessie.s3",
        }
      : {}),
  };
}

export function renderNessie(ctx: RenderContext): ComponentObjects {
  const name = "nessie";
  const settings = ctx.spec.dataPlane.nessie;
  const health = (path: string) => ({ httpGet: { path, port: "management" } });
  return buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [
        { name: "http", port: NESSIE.port, appProtocol: "http" },
        { name: "management", port: NESSIE.managementPort },
      ],
      config: nessieConfig(ctx),
      volumeClaims: [{ name: "data", storage: settings.storage }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      metricsPort: "management",
      metricsPath: "/q/metrics",
      pod: (image) => ({
        runAsUser: NESSIE_UID,
        fsGroup: NESSIE_UID,
        containers: [
          {
            name,
            image,
            ports: [
              { name: "http", containerPort: NESSIE.port },
              { name: "management", containerPort: NESSIE.managementPort },
            ],
            envFrom: [{ configMapRef: { name: configMapName(name) } }],
            env: [
              secretEnv("QUARKUS_DATASOURCE_POSTGRESQL_PASSWORD", POSTGRES.secret, POSTGRES.passwordKey),
              secretEnv("NESSIE_S3_NAME", MINIO.secret, MINIO.userKey),
              secretEnv("NESSIE_S3_SECRET", MINIO.secret, MINIO.passwordKey),
            ],
            resources: mainResources(ctx, name),
            startupProbe: { ...health("/q/health/started"), periodSeconds: 5, failureThreshold: 60 },
            readinessProbe: { ...health("/q/health/ready"), periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...health("/q/health/live"), periodSeconds: 20, failureThreshold: 3 },
            volumeMounts: [{ name: "data", mountPath: DATA_DIR }],
          },
        ],
      }),
    },
    ctx.placement,
  );
}
