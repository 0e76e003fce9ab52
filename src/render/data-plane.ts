// Data layer (C): the data service and Project Nessie, the Iceberg catalog. Nessie keeps its
// version store on its own volume (RocksDB) when it runs one replica; RocksDB cannot be shared,
// so with more replicas the store moves to the platform's PostgreSQL (database "nessie") and
// the volumes only hold scratch data. Its Iceberg warehouse lives in MinIO.
import { helperResources, mainResources, workloadBase, type RenderContext, placementFor } from "./context.js";
import { MINIO, NESSIE, POSTGRES } from "./endpoints.js";
import { renderPlatformService } from "./platform-service.js";
import semver from "semver";
import type { EnvVar } from "./objects.js";
import { secretEnv } from "./secrets.js";
import { TLS_DIR, TLS_KEYS, minioUrl, platformTlsSecret } from "./tls.js";
import { otlpEndpoint } from "./tracing.js";
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
  const traces = otlpEndpoint(ctx.spec);
  return {
    QUARKUS_HTTP_PORT: String(NESSIE.port),
    QUARKUS_MANAGEMENT_PORT: String(NESSIE.managementPort),
    QUARKUS_LOG_LEVEL: observability.logging.level,
    QUARKUS_LOG_CONSOLE_JSON: String(observability.logging.format === "json"),
    QUARKUS_OTEL_SDK_DISABLED: String(!observability.tracing.enabled),
    // Quarkus exports traces over OTLP only (nothing in it reads a Jaeger endpoint).
    ...(traces ? { QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces } : {}),
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
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ENDPOINT: `${minioUrl(ctx)}/`,
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_PATH_STYLE_ACCESS: "true",
          NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_REGION: "us-east-1",
        }
      : {}),
  };
}

/** The first Nessie version that reads S3 credentials through a `urn:nessie-secret:` reference. */
const SECRET_URN_SINCE = "0.96.0";

/**
 * The env giving Nessie the MinIO credentials, the way the Nessie version of `image` reads them:
 * before 0.96.0 as the access key's name and secret themselves
 * (nessie.catalog.service.s3.default-options.access-key.name / .secret); from 0.96.0 as a
 * reference to a named secret (access-key = urn:nessie-secret:quarkus:<name>, whose .name and
 * .secret hold the values). An image whose tag is not a version gets the current form.
 */
export function nessieS3Credentials(image: string): EnvVar[] {
  const tag = image.slice(image.lastIndexOf(":") + 1);
  const version = semver.valid(semver.coerce(tag));
  if (version && semver.lt(version, SECRET_URN_SINCE)) {
    return [
      secretEnv("NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY_NAME", MINIO.secret, MINIO.userKey),
      secretEnv(
        "NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY_SECRET",
        MINIO.secret,
        MINIO.passwordKey,
      ),
    ];
  }
  return [
    {
      name: "NESSIE_CATALOG_SERVICE_S3_DEFAULT_OPTIONS_ACCESS_KEY",
      value: "urn:nessie-secret:quarkus:nessie.catalog.secrets.minio",
    },
    secretEnv("NESSIE_CATALOG_SECRETS_MINIO_NAME", MINIO.secret, MINIO.userKey),
    secretEnv("NESSIE_CATALOG_SECRETS_MINIO_SECRET", MINIO.secret, MINIO.passwordKey),
  ];
}

/** Where Nessie's truststore is built: the JVM's own roots plus the platform's CA. */
const TRUSTSTORE_DIR = "/nessie/truststore";
/** The password every JDK ships its cacerts with; the store holds public certificates only. */
const TRUSTSTORE_PASSWORD = "changeit";

/**
 * The JVM reads trust from a keystore, not a PEM file: an init container in Nessie's own image
 * copies the runtime's cacerts and adds the platform CA with keytool (part of every Java runtime),
 * and the JVM is pointed at the copy, so Nessie verifies MinIO's certificate and still trusts the
 * public roots. It fails with a message naming what is missing rather than run without trust.
 */
function nessieTrust(image: string, secretName: string) {
  const store = `${TRUSTSTORE_DIR}/cacerts`;
  const script = [
    "set -eu",
    'java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"',
    'command -v keytool >/dev/null || PATH="$java_home/bin:$PATH"',
    'command -v keytool >/dev/null || { echo "keytool not found in the image (JAVA_HOME=$java_home)" >&2; exit 1; }',
    `cp "$java_home/lib/security/cacerts" ${store}`,
    `chmod u+w ${store}`,
    `keytool -importcert -noprompt -alias onto-platform-ca -file ${TLS_DIR}/${TLS_KEYS.ca} -keystore ${store} -storepass ${TRUSTSTORE_PASSWORD}`,
  ].join("\n");
  return {
    initContainer: {
      name: "truststore",
      image,
      command: ["sh", "-c", script],
      resources: helperResources("100m", "128Mi"),
      volumeMounts: [
        { name: "tls", mountPath: TLS_DIR, readOnly: true },
        { name: "truststore", mountPath: TRUSTSTORE_DIR },
      ],
    },
    env: {
      name: "JAVA_TOOL_OPTIONS",
      value: `-Djavax.net.ssl.trustStore=${store} -Djavax.net.ssl.trustStorePassword=${TRUSTSTORE_PASSWORD}`,
    },
    mount: { name: "truststore", mountPath: TRUSTSTORE_DIR, readOnly: true },
    volumes: [
      { name: "tls", secret: { secretName, defaultMode: 0o440 } },
      { name: "truststore", emptyDir: { sizeLimit: "16Mi" } },
    ],
  };
}

export function renderNessie(ctx: RenderContext): ComponentObjects {
  const name = "nessie";
  const settings = ctx.spec.dataPlane.nessie;
  const health = (path: string) => ({ httpGet: { path, port: "management" } });
  const tls = platformTlsSecret(ctx);
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
      pod: (image) => {
        const trust = tls ? nessieTrust(image, tls) : undefined;
        return {
          runAsUser: NESSIE_UID,
          fsGroup: NESSIE_UID,
          ...(trust ? { initContainers: [trust.initContainer], volumes: trust.volumes } : {}),
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
                // In the pod, not the shared ConfigMap: a canary may run another Nessie version.
                ...nessieS3Credentials(image),
                ...(trust ? [trust.env] : []),
              ],
              resources: mainResources(ctx, name),
              startupProbe: { ...health("/q/health/started"), periodSeconds: 5, failureThreshold: 60 },
              readinessProbe: { ...health("/q/health/ready"), periodSeconds: 10, failureThreshold: 3 },
              livenessProbe: { ...health("/q/health/live"), periodSeconds: 20, failureThreshold: 3 },
              volumeMounts: [{ name: "data", mountPath: DATA_DIR }, ...(trust ? [trust.mount] : [])],
            },
          ],
        };
      },
    },
    placementFor(ctx, name),
  );
}
