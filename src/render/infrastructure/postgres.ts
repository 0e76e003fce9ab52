// PostgreSQL: one StatefulSet whose ordinal 0 is the primary and whose other pods are streaming
// standbys cloned with pg_basebackup. `postgres` (read-write) selects the primary pod only;
// `postgres-ro` (read-only) selects every member, since any of them can serve reads and a
// Service cannot select "all pods but one". Failover is not automatic: a standby is promoted
// by hand (pg_ctl promote), as with any plain streaming-replication setup.
import { componentSpec } from "../../api/index.js";
import {
  componentSecret,
  info,
  mainResources,
  ownerOf,
  workloadBase,
  type RenderContext,
} from "../context.js";
import { POSTGRES, podHost } from "../endpoints.js";
import { objectMeta, selectorLabels } from "../meta.js";
import type { RenderedObject } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { buildWorkload, configMapName, type ComponentObjects } from "../workload.js";

const DATA_DIR = "/var/lib/postgresql/data";
const PGDATA = `${DATA_DIR}/pgdata`; // a subdirectory: the volume root may hold lost+found
const POSTGRES_UID = 999; // the postgres user of the official image

// Server settings for streaming replication, passed as -c flags so the image's defaults stay.
const SERVER_FLAGS = [
  "-c wal_level=replica",
  "-c max_wal_senders=10",
  "-c max_replication_slots=10",
  "-c wal_keep_size=1GB",
  "-c hot_standby=on",
  "-c password_encryption=scram-sha-256",
].join(" ");

function entrypoint(primaryHost: string): string {
  return `#!/bin/bash
# Ordinal 0 runs the primary through the image's entrypoint (first start: initdb + init scripts);
# every other ordinal starts as a standby cloned from the primary.
set -euo pipefail
ordinal="\${HOSTNAME##*-}"
if [ "$ordinal" = "0" ]; then
  exec docker-entrypoint.sh postgres ${SERVER_FLAGS}
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h ${primaryHost} -p ${POSTGRES.port}; do
    echo "waiting for the primary ${primaryHost}"; sleep 2
  done
  rm -rf "$PGDATA"/* 2>/dev/null || true
  PGPASSWORD="$REPLICATION_PASSWORD" pg_basebackup -h ${primaryHost} -p ${POSTGRES.port} \\
    -U replicator -D "$PGDATA" -X stream -R --checkpoint=fast
  chmod 0700 "$PGDATA"
fi
exec postgres ${SERVER_FLAGS}
`;
}

function initScript(): string {
  const databases = POSTGRES.extraDatabases
    .map((db) => `CREATE DATABASE ${db} OWNER ${POSTGRES.user};`)
    .join("\n  ");
  return `#!/bin/bash
# Runs once, on the primary's first start: the replication role, the platform's databases,
# and a pg_hba rule letting standbys stream.
set -euo pipefail
psql -v ON_ERROR_STOP=1 -v pw="$REPLICATION_PASSWORD" --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
  CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'pw';
  ${databases}
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
`;
}

export function renderPostgres(ctx: RenderContext): ComponentObjects {
  const name = "postgres";
  const settings = componentSpec(ctx.spec, info(name));
  const owner = ownerOf(ctx, name);
  const primaryHost = podHost(name, 0, ctx.platform.namespace);
  const config = { "entrypoint.sh": entrypoint(primaryHost), "init-replication.sh": initScript() };
  const secret = componentSecret(ctx, name, POSTGRES.secret, [
    { key: POSTGRES.passwordKey, length: 32 },
    { key: POSTGRES.replicationPasswordKey, length: 32 },
  ]);
  const ready = {
    exec: { command: ["pg_isready", "-q", "-h", "127.0.0.1", "-U", POSTGRES.user, "-d", POSTGRES.database] },
  };
  const built = buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [{ name: "postgres", port: POSTGRES.port }],
      // The read-write Service reaches the primary only.
      serviceSelector: { "statefulset.kubernetes.io/pod-name": `${name}-0` },
      config,
      volumeClaims: [{ name: "data", storage: settings.storage ?? "20Gi" }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      pod: (image) => ({
        runAsUser: POSTGRES_UID,
        fsGroup: POSTGRES_UID,
        terminationGracePeriodSeconds: 60,
        containers: [
          {
            name,
            image,
            command: ["bash", "/opt/onto/entrypoint.sh"],
            ports: [{ name: "postgres", containerPort: POSTGRES.port }],
            env: [
              { name: "PGDATA", value: PGDATA },
              { name: "POSTGRES_USER", value: POSTGRES.user },
              { name: "POSTGRES_DB", value: POSTGRES.database },
              secretEnv("POSTGRES_PASSWORD", POSTGRES.secret, POSTGRES.passwordKey),
              secretEnv("REPLICATION_PASSWORD", POSTGRES.secret, POSTGRES.replicationPasswordKey),
            ],
            resources: mainResources(ctx, name),
            startupProbe: { ...ready, periodSeconds: 5, failureThreshold: 120 },
            readinessProbe: { ...ready, periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...ready, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 6 },
            volumeMounts: [
              { name: "data", mountPath: DATA_DIR },
              { name: "scripts", mountPath: "/opt/onto", readOnly: true },
              {
                name: "scripts",
                mountPath: "/docker-entrypoint-initdb.d/init-replication.sh",
                subPath: "init-replication.sh",
                readOnly: true,
              },
              { name: "run", mountPath: "/var/run/postgresql" },
            ],
          },
        ],
        volumes: [
          { name: "scripts", configMap: { name: configMapName(name) } },
          { name: "run", emptyDir: {} },
        ],
      }),
    },
    ctx.placement,
  );
  const readOnly: RenderedObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: objectMeta(owner, POSTGRES.readOnlyService),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(ctx.platform.name, name),
      ports: [{ name: "postgres", port: POSTGRES.port, targetPort: "postgres", protocol: "TCP" }],
    },
  };
  return { objects: [secret, ...built.objects, readOnly], workload: built.workload };
}
