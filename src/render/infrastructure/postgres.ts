// PostgreSQL: one StatefulSet whose ordinal 0 is the primary and whose other pods are streaming
// standbys cloned with pg_basebackup. `postgres` (read-write) selects the primary pod only;
// `postgres-ro` (read-only) selects every member that is Ready, and a standby is Ready only while
// it streams from the primary. Failover is not automatic: a standby is promoted by hand
// (pg_ctl promote), as with any plain streaming-replication setup.
//
// The scripts depend on the PostgreSQL binaries on PATH (initdb, pg_ctl, postgres, psql,
// pg_basebackup, pg_isready) and the env set below, nothing of an image's own
// entrypoint, so the same render runs the official `postgres` image and one built from Debian's
// packages. docs/operations/postgres.md describes what they do and why.
import { Quantity, componentSpec } from "../../api/index.js";
import {
  componentSecret,
  info,
  mainResources,
  ownerOf,
  workloadBase,
  type RenderContext,
  placementFor,
} from "../context.js";
import { POSTGRES, podHost } from "../endpoints.js";
import { objectMeta, selectorLabels } from "../meta.js";
import type { RenderedObject } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { buildWorkload, configMapName, type ComponentObjects } from "../workload.js";

const DATA_DIR = "/var/lib/postgresql/data";
const PGDATA = `${DATA_DIR}/pgdata`; // a subdirectory: the volume root may hold lost+found
const SOCKET_DIR = "/var/run/postgresql";
const SCRIPTS_DIR = "/opt/onto";
const POSTGRES_UID = 999; // the postgres user of the official image (and of ours)
/** How long a standby's attempt to reach the primary may take (libpq connect_timeout; tcp_user_timeout twice that). */
const CONNECT_TIMEOUT_SECONDS = 5;

/**
 * WAL a standby's replication slot may hold back on the primary: a quarter of the volume, at least
 * 1 GiB. A standby gone for longer loses its slot (and is re-cloned when it starts again) instead
 * of filling the primary's disk.
 */
export function slotWalLimit(storage: string): string {
  const quarterMiB = Math.floor(Quantity.parse(storage).toNumber() / 4 / 2 ** 20);
  return `${Math.max(1024, quarterMiB)}MB`;
}

// Server settings, passed as -c flags (a bash array) so they hold whatever postgresql.conf the
// data directory has.
function serverFlags(slotLimit: string): string {
  return [
    "listen_addresses=*",
    `unix_socket_directories=${SOCKET_DIR}`,
    "wal_level=replica",
    "max_wal_senders=10",
    "max_replication_slots=10",
    "wal_keep_size=1GB",
    `max_slot_wal_keep_size=${slotLimit}`,
    "hot_standby=on",
    "password_encryption=scram-sha-256",
  ]
    .map((flag) => `-c '${flag}'`)
    .join(" ");
}

function entrypoint(primaryHost: string, slotLimit: string): string {
  const primary = `-h ${primaryHost} -p ${POSTGRES.port}`;
  const databases = [POSTGRES.database, ...POSTGRES.extraDatabases]
    .map((db) => `CREATE DATABASE ${db} OWNER ${POSTGRES.user};`)
    .join("\n");
  return `#!/bin/bash
# Starts one member: ordinal 0 the primary (initialising it on first start), every other ordinal a
# standby streaming from it through a replication slot of its own.
set -euo pipefail
ordinal="\${HOSTNAME##*-}"
root="$(dirname "$PGDATA")"
flags=(${serverFlags(slotLimit)})
slot="standby_\${ordinal}"
export PGPASSWORD="$REPLICATION_PASSWORD"

# The kubelet's fsGroup pass leaves the volume group-writable, and PostgreSQL refuses to start on
# a data directory anyone but its owner may read.
if [ -d "$PGDATA" ]; then chmod 0700 "$PGDATA"; fi

wait_for_primary() {
  until pg_isready -q ${primary}; do echo "waiting for the primary ${primaryHost}"; sleep 2; done
}

# Initialises the primary in a directory beside PGDATA and renames it into place only when
# complete, so a start interrupted half-way is simply done again.
init_primary() {
  local work="$root/pgdata.init"
  rm -rf "$work"
  if [ -e "$PGDATA" ]; then mv "$PGDATA" "$root/pgdata.incomplete.$(date +%s)"; fi
  initdb -D "$work" --username="$POSTGRES_USER" --pwfile=<(printf '%s\\n' "$POSTGRES_PASSWORD") \\
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
  printf 'host all all all scram-sha-256\\nhost replication replicator all scram-sha-256\\n' >> "$work/pg_hba.conf"
  pg_ctl -D "$work" -w -o "-c listen_addresses= -c unix_socket_directories=${SOCKET_DIR}" start
  psql -v ON_ERROR_STOP=1 -h ${SOCKET_DIR} -U "$POSTGRES_USER" -d postgres <<'SQL'
\\getenv pw REPLICATION_PASSWORD
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'pw';
${databases}
SQL
  pg_ctl -D "$work" -m fast -w stop
  mv "$work" "$PGDATA"
}

if [ "$ordinal" = "0" ]; then
  if [ ! -s "$PGDATA/PG_VERSION" ]; then init_primary; fi
  exec postgres -D "$PGDATA" "\${flags[@]}"
fi

# A standby. Its slot on the primary keeps the WAL it has not received yet, so a standby that was
# down for a while catches up instead of looping on "requested WAL segment has already been
# removed"; a slot the primary gave up on (max_slot_wal_keep_size) means cloning again.
wait_for_primary
# The slot reserves WAL from the moment it is made, so a clone taken through it misses nothing.
create_slot() {
  psql ${primary} -U replicator -d postgres -v ON_ERROR_STOP=1 -tAc \\
    "SELECT pg_create_physical_replication_slot('$slot', true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$slot')" >/dev/null
}
create_slot
status="$(psql ${primary} -U replicator -d postgres -tAc "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '$slot'")"
if [ ! -s "$PGDATA/PG_VERSION" ] || [ "$status" = "lost" ]; then
  if [ "$status" = "lost" ]; then
    echo "the primary removed WAL this standby still needed: cloning again"
    psql ${primary} -U replicator -d postgres -c "SELECT pg_drop_replication_slot('$slot')"
    create_slot
  fi
  # Cloned beside PGDATA and renamed into place when complete: a clone killed half-way leaves only
  # the scratch directory, removed on the next start.
  work="$root/pgdata.clone"
  rm -rf "$work"
  pg_basebackup ${primary} -U replicator -D "$work" -X stream -S "$slot" -R --checkpoint=fast
  chmod 0700 "$work"
  rm -rf "$PGDATA"
  mv "$work" "$PGDATA"
fi
# The connection to the primary is named here rather than left to what pg_basebackup wrote, with
# a TCP user timeout: when the primary's pod comes back at a new address while cluster DNS still
# answers the old one (TTL and cache), the node still holds the old address's neighbour entry for
# a while, so the SYNs go to a pod that is gone and are dropped; the kernel retries them for about
# two minutes, and the walreceiver (which does not apply connect_timeout) waits all that time.
# tcp_user_timeout ends such an attempt in seconds; the next one asks DNS again.
# libpq reads the password from PGPASSWORD, exported above.
exec postgres -D "$PGDATA" "\${flags[@]}" -c primary_slot_name="$slot" \\
  -c primary_conninfo="host=${primaryHost} port=${POSTGRES.port} user=replicator application_name=$slot connect_timeout=${CONNECT_TIMEOUT_SECONDS} tcp_user_timeout=${CONNECT_TIMEOUT_SECONDS * 2000}"
`;
}

// Ready: the primary accepts connections; a standby also streams from the primary right now
// (pg_stat_wal_receiver), so one that cannot follow leaves postgres-ro instead of serving ever
// older data.
const READY_SCRIPT = `#!/bin/sh
ok="$(PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -p ${POSTGRES.port} -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc \\
  "SELECT NOT pg_is_in_recovery() OR EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')")"
[ "$ok" = "t" ]
`;

export function renderPostgres(ctx: RenderContext): ComponentObjects {
  const name = "postgres";
  const settings = componentSpec(ctx.spec, info(name));
  const owner = ownerOf(ctx, name);
  const primaryHost = podHost(name, 0, ctx.platform.namespace);
  const storage = settings.storage ?? "20Gi";
  const config = {
    "entrypoint.sh": entrypoint(primaryHost, slotWalLimit(storage)),
    "ready.sh": READY_SCRIPT,
  };
  const secret = componentSecret(ctx, name, POSTGRES.secret, [
    { key: POSTGRES.passwordKey, length: 32 },
    { key: POSTGRES.replicationPasswordKey, length: 32 },
  ]);
  const accepting = {
    exec: { command: ["pg_isready", "-q", "-h", "127.0.0.1", "-U", POSTGRES.user, "-d", POSTGRES.database] },
  };
  const streaming = { exec: { command: ["sh", `${SCRIPTS_DIR}/ready.sh`] }, timeoutSeconds: 5 };
  const built = buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [{ name: "postgres", port: POSTGRES.port }],
      // The read-write Service reaches the primary only.
      serviceSelector: { "statefulset.kubernetes.io/pod-name": `${name}-0` },
      config,
      volumeClaims: [{ name: "data", storage }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      pod: (image) => ({
        runAsUser: POSTGRES_UID,
        fsGroup: POSTGRES_UID,
        terminationGracePeriodSeconds: 60,
        containers: [
          {
            name,
            image,
            command: ["bash", `${SCRIPTS_DIR}/entrypoint.sh`],
            ports: [{ name: "postgres", containerPort: POSTGRES.port }],
            env: [
              { name: "PGDATA", value: PGDATA },
              { name: "POSTGRES_USER", value: POSTGRES.user },
              { name: "POSTGRES_DB", value: POSTGRES.database },
              secretEnv("POSTGRES_PASSWORD", POSTGRES.secret, POSTGRES.passwordKey),
              secretEnv("REPLICATION_PASSWORD", POSTGRES.secret, POSTGRES.replicationPasswordKey),
            ],
            resources: mainResources(ctx, name),
            // A standby clones the whole database before it accepts a connection: up to an hour.
            startupProbe: { ...accepting, periodSeconds: 5, failureThreshold: 720 },
            readinessProbe: { ...streaming, periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...accepting, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 6 },
            volumeMounts: [
              { name: "data", mountPath: DATA_DIR },
              { name: "scripts", mountPath: SCRIPTS_DIR, readOnly: true },
              { name: "run", mountPath: SOCKET_DIR },
            ],
          },
        ],
        volumes: [
          { name: "scripts", configMap: { name: configMapName(name) } },
          { name: "run", emptyDir: {} },
        ],
      }),
    },
    placementFor(ctx, name),
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
