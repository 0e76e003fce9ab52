// MinIO: one pod standalone, or distributed erasure-coded over every pod (4+, the schema
// enforces it) with the pods addressed through the headless Service. A setup Job creates the
// buckets of spec.infrastructure.minio.buckets (creating an existing bucket is a no-op; buckets
// removed from the spec are kept, since deleting data is never implicit).
import {
  componentSecret,
  helperResources,
  imageAt,
  mainResources,
  ownerOf,
  versionOf,
  workloadBase,
  type RenderContext,
  placementFor,
} from "../context.js";
import { MINIO, podHost } from "../endpoints.js";
import { setupJob } from "../job.js";
import type { RenderedObject } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { TLS_DIR, TLS_KEYS, httpScheme, platformTlsSecret } from "../tls.js";
import type { Volume } from "../objects.js";
import { buildWorkload, headlessServiceName, type ComponentObjects } from "../workload.js";

const MINIO_UID = 1000;
/** MinIO's certificate directory: public.crt and private.key it serves, CAs/ it trusts for peers. */
const CERTS_DIR = "/etc/minio/certs";

/**
 * The platform certificate laid out as MinIO reads it, group-readable by MinIO's fsGroup only.
 * Mounted as a whole volume (no subPath), so a renewed certificate replaces the files in place and
 * MinIO, which watches them, serves it without a restart.
 */
function certsVolume(secretName: string): Volume {
  return {
    name: "tls",
    secret: {
      secretName,
      defaultMode: 0o440,
      items: [
        { key: TLS_KEYS.cert, path: "public.crt" },
        { key: TLS_KEYS.key, path: "private.key" },
        { key: TLS_KEYS.ca, path: `CAs/${TLS_KEYS.ca}` },
      ],
    },
  };
}

/**
 * Distributed MinIO tells which of its endpoints is itself by resolving their names. A pod that
 * starts while cluster DNS still answers its name with the address of the pod it replaced (the
 * record's TTL plus the DNS cache: up to a minute on a usual cluster) finds no local endpoint and
 * exits ("grid: local host () not found in cluster setup"), so every restart and every rolling
 * update began with a failed start. It waits instead until its name resolves to its own address.
 * Needs sh, getent, awk and grep besides minio.
 */
function waitForOwnName(namespace: string): string {
  const self = `"$HOSTNAME.${headlessServiceName("minio")}.${namespace}.svc"`;
  return [
    `until getent ahosts ${self} | awk '{ print $1 }' | grep -qxF "$POD_IP"; do`,
    `  echo "waiting for ${self.replace(/"/g, "")} to resolve to $POD_IP"; sleep 1`,
    "done",
    'exec minio "$@"',
  ].join("\n");
}

export function renderMinio(ctx: RenderContext): ComponentObjects {
  const name = "minio";
  const settings = ctx.spec.infrastructure.minio;
  const namespace = ctx.platform.namespace;
  // MinIO's own range syntax expands to every pod: minio-{0...3}.minio-headless.<ns>.svc
  const tls = platformTlsSecret(ctx);
  const scheme = httpScheme(ctx);
  const probeScheme = tls ? { scheme: "HTTPS" as const } : {};
  const volumes =
    settings.replicas > 1
      ? `${scheme}://${podHost(name, 0, namespace).replace(`${name}-0.`, `${name}-{0...${settings.replicas - 1}}.`)}/data`
      : "/data";
  const secret = componentSecret(ctx, name, MINIO.secret, [
    { key: MINIO.userKey, length: 20 },
    { key: MINIO.passwordKey, length: 40 },
  ]);
  const credentials = [
    secretEnv("MINIO_ROOT_USER", MINIO.secret, MINIO.userKey),
    secretEnv("MINIO_ROOT_PASSWORD", MINIO.secret, MINIO.passwordKey),
  ];
  const built = buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [
        { name: "api", port: MINIO.port },
        { name: "console", port: MINIO.consolePort },
      ],
      // Distributed MinIO waits for its peers: start them together.
      podManagementPolicy: "Parallel",
      volumeClaims: [{ name: "data", storage: settings.storage }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      metricsPort: "api",
      metricsPath: "/minio/v2/metrics/cluster",
      ...(tls ? { metricsTls: { secretName: tls, serverName: `${MINIO.service}.${namespace}.svc` } } : {}),
      pod: (image) => ({
        runAsUser: MINIO_UID,
        fsGroup: MINIO_UID,
        containers: [
          {
            name,
            image,
            command: [
              ...(settings.replicas > 1 ? ["sh", "-c", waitForOwnName(namespace)] : []),
              "minio",
              "server",
              "--address",
              `:${MINIO.port}`,
              "--console-address",
              `:${MINIO.consolePort}`,
              ...(tls ? ["--certs-dir", CERTS_DIR] : []),
              volumes,
            ],
            ports: [
              { name: "api", containerPort: MINIO.port },
              { name: "console", containerPort: MINIO.consolePort },
            ],
            env: [
              ...credentials,
              { name: "MINIO_PROMETHEUS_AUTH_TYPE", value: "public" },
              { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
              { name: "HOME", value: "/data" },
            ],
            resources: mainResources(ctx, name),
            // Distributed MinIO listens only once it has found its peers, which on a busy node takes
            // longer than the liveness budget: the startup probe holds liveness back until the
            // first answer (up to 10 minutes), and a slow answer is not taken for a dead server.
            startupProbe: {
              httpGet: { path: "/minio/health/live", port: "api", ...probeScheme },
              periodSeconds: 5,
              timeoutSeconds: 5,
              failureThreshold: 120,
            },
            readinessProbe: {
              httpGet: { path: "/minio/health/ready", port: "api", ...probeScheme },
              periodSeconds: 10,
              timeoutSeconds: 5,
              failureThreshold: 3,
            },
            livenessProbe: {
              httpGet: { path: "/minio/health/live", port: "api", ...probeScheme },
              periodSeconds: 20,
              timeoutSeconds: 5,
              failureThreshold: 3,
            },
            volumeMounts: [
              { name: "data", mountPath: "/data" },
              ...(tls ? [{ name: "tls", mountPath: CERTS_DIR, readOnly: true }] : []),
            ],
          },
        ],
        ...(tls ? { volumes: [certsVolume(tls)] } : {}),
      }),
    },
    placementFor(ctx, name),
  );

  const buckets = settings.buckets.map((b) => b.name);
  const objects: RenderedObject[] = [secret, ...built.objects];
  if (buckets.length > 0) {
    const script = [
      "set -eu",
      `until mc alias set onto ${scheme}://${MINIO.service}:${MINIO.port} "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null 2>&1; do`,
      '  echo "waiting for MinIO"; sleep 5',
      "done",
      // Bucket names are validated by the schema (lowercase, digits, '.', '-'): safe unquoted.
      ...buckets.map((b) => `mc mb --ignore-existing onto/${b}`),
    ].join("\n");
    objects.push(
      setupJob(
        ownerOf(ctx, name),
        "minio-buckets",
        name,
        {
          runAsUser: MINIO_UID,
          // The certificate's files are group-readable by this group only.
          ...(tls ? { fsGroup: MINIO_UID } : {}),
          containers: [
            {
              name: "create-buckets",
              image: imageAt(ctx, "minio-client", versionOf(ctx, name)),
              command: ["sh", "-c", script],
              env: [
                ...credentials,
                { name: "MC_CONFIG_DIR", value: "/tmp/mc" },
                // mc is a Go program: SSL_CERT_FILE is the CA bundle it verifies MinIO against.
                ...(tls ? [{ name: "SSL_CERT_FILE", value: `${TLS_DIR}/${TLS_KEYS.ca}` }] : []),
              ],
              resources: helperResources("100m", "128Mi"),
              volumeMounts: [
                { name: "tmp", mountPath: "/tmp" },
                ...(tls ? [{ name: "tls", mountPath: TLS_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: "tmp", emptyDir: {} },
            ...(tls ? [{ name: "tls", secret: { secretName: tls, defaultMode: 0o440 } }] : []),
          ],
        },
        placementFor(ctx, name),
      ),
    );
  }
  return { objects, workload: built.workload };
}
