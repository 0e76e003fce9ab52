// PostgreSQL: one StatefulSet of members, one of which is the primary and the others streaming
// standbys. Which one is the primary is state, not an ordinal: the operator records it in
// status.postgres, labels each pod with its role (onto.paas/postgres-role), and the read-write
// Service `postgres` selects the pod labelled primary, `postgres-ro` the streaming standbys within
// the lag limit. The operator fails over (controllers/postgres-ha/); a member decides at start
// what it is from what its peers answer: a member that finds another primary follows it (a former
// primary rewinds first), so one that was fenced never comes back taking writes.
//
// The scripts depend on the PostgreSQL binaries on PATH (initdb, pg_ctl, postgres, psql,
// pg_basebackup, pg_rewind, pg_controldata, pg_isready, getent) and the env set below, nothing of an image's own
// entrypoint, so the same render runs the official `postgres` image and one built from Debian's
// packages. docs/operations/postgres.md describes what they do and why.
import { POSTGRES_ROLE_LABEL, POSTGRES_ROLES, Quantity, componentSpec } from "../../api/index.js";
import {
  componentSecret,
  info,
  mainResources,
  ownerOf,
  workloadBase,
  type RenderContext,
  placementFor,
} from "../context.js";
import { POSTGRES, serviceHost } from "../endpoints.js";
import { objectMeta, selectorLabels } from "../meta.js";
import type { RenderedObject } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { TLS_MOUNT, platformTlsSecret, tlsFile, tlsVolume } from "../tls.js";
import { buildWorkload, configMapName, headlessServiceName, type ComponentObjects } from "../workload.js";

const DATA_DIR = "/var/lib/postgresql/data";
const PGDATA = `${DATA_DIR}/pgdata`; // a subdirectory: the volume root may hold lost+found
const SOCKET_DIR = "/var/run/postgresql";
const SCRIPTS_DIR = "/opt/onto";
/** The ConfigMap key (a file of the scripts volume) holding the reloadable settings. */
const RELOADABLE_FILE = "reloadable.conf";
/** The ConfigMap key (a file of the scripts volume) holding the client authentication rules. */
const HBA_FILE = "pg_hba.conf";
const POSTGRES_UID = 999; // the postgres user of the official image (and of ours)
/** How long a standby's attempt to reach the primary may take (libpq connect_timeout; tcp_user_timeout twice that). */
const CONNECT_TIMEOUT_SECONDS = 5;
/**
 * Settings pg_rewind depends on. wal_log_hints: a member rejoins by rewinding instead of a whole
 * new clone. wal_keep_size: WAL kept beyond what slots hold, so a standby down for a while catches
 * up and the WAL since the last common checkpoint is still there when it rewinds. Passed as flags,
 * and written into postgresql.conf before a rewind: pg_rewind's single-user crash recovery reads
 * only the files (see rewind_onto).
 */
const REWIND_SETTINGS: readonly (readonly [string, string])[] = [
  ["wal_log_hints", "on"],
  ["wal_keep_size", "1GB"],
];
/** standby.signal while pg_rewind runs (its single-user crash recovery refuses standby mode). */
const SIGNAL_ASIDE = "standby.signal.rewinding";
/**
 * A file on the volume with one line per start on the member's data directory since it was last
 * Ready (the readiness script removes it).
 */
const STARTS_FILE = "starts-since-ready";
/**
 * After this many starts in a row that never became Ready (the script or the server stopped each
 * time on what the data directory holds, or the standby never streamed), the member clones again
 * from the primary, when another member answers as one.
 */
const MAX_STARTS_NOT_READY = 3;
/** A data directory set aside by a failed rewind, or replaced by a new clone (the last one only). */
const SET_ASIDE_DIR = "pgdata.diverged";
/** A former primary that finds no other primary looks again after this long before it starts as one. */
const PRIMARY_RECHECK_SECONDS = 10;
/**
 * A former primary that sees other members listed but none answering keeps looking this long before
 * it starts as the primary: a pod's first seconds can pass with its name lookups or its peers'
 * replies not getting through, and starting as the primary then made a second writable primary
 * beside the standby promoted a moment before.
 */
const PRIMARY_UNANSWERED_SECONDS = 60;
/**
 * A primary that reaches neither the API server nor any other member (isolated.sh) at two
 * readiness checks this far apart stops itself: cut off by a network partition, it is failed over
 * from (the operator promotes a standby once the primary stops answering it, failoverDelaySeconds),
 * and clients cut off with it must not go on writing to a server whose writes the promoted
 * standby never sees. Two checks, not one, so one slow moment is not taken for a partition.
 */
const FENCE_AFTER_SECONDS = 10;
/** On the volume: when the primary's readiness script first found it cut off (removed when it is not). */
const ISOLATED_SINCE_FILE = "isolated-since";
/** On the volume: why the member stopped itself, printed and removed by the next start. */
const FENCED_FILE = "fenced.log";
/** The script that says whether this member is cut off (exit 0) or not (exit 1). */
const ISOLATED_SCRIPT = "isolated.sh";

/**
 * WAL a standby's replication slot may hold back on the primary: a quarter of the volume, at least
 * 1 GiB. A standby gone for longer loses its slot (and is re-cloned when it starts again) instead
 * of filling the primary's disk.
 */
export function slotWalLimit(storage: string): string {
  const quarterMiB = Math.floor(Quantity.parse(storage).toNumber() / 4 / 2 ** 20);
  return `${Math.max(1024, quarterMiB)}MB`;
}

type ReloadableSetting = (typeof POSTGRES.reloadableSettings)[number];

/**
 * The settings of POSTGRES.reloadableSettings, from the spec: the file every member's
 * postgresql.conf includes. A change of it restarts no pod (it is not in the pod template's
 * checksum); the kubelet updates the mounted file and the operator reloads each member.
 */
function reloadableConf(storage: string): string {
  const values: Record<ReloadableSetting, string> = { max_slot_wal_keep_size: slotWalLimit(storage) };
  const lines = POSTGRES.reloadableSettings.map((name) => `${name} = '${values[name]}'`);
  return [
    "# Settings the operator changes without restarting Postgres: when a member runs a value other",
    "# than this file's, the operator calls pg_reload_conf() on it.",
    ...lines,
    "",
  ].join("\n");
}

// Who may connect and how (the ConfigMap's file, named by hba_file, so every member has the same
// rules whatever data directory it was cloned from). Local socket connections are trusted (the
// scripts' own); over the network, a password (SCRAM), and with TLS only over TLS: a plaintext
// connection matches no line and is refused.
function hbaConf(tls: boolean): string {
  const host = tls ? "hostssl" : "host";
  return [
    "# Written by the operator: changes are made in the OntoPlatform, not here.",
    "local all all trust",
    "local replication all trust",
    `${host} all all all scram-sha-256`,
    `${host} replication replicator all scram-sha-256`,
    "",
  ].join("\n");
}

// Server settings, passed as -c flags (a bash array) so they hold whatever postgresql.conf the
// data directory has. The reloadable ones are not among them: a flag outranks the file. The
// certificate files are named here, and Postgres reads them again at each pg_reload_conf() (the
// operator reloads a member that serves an older certificate than the Secret holds).
function serverFlags(synchronous: boolean, tls: boolean): string {
  return [
    `hba_file=${SCRIPTS_DIR}/${HBA_FILE}`,
    ...(tls ? ["ssl=on", `ssl_cert_file=${tlsFile("cert")}`, `ssl_key_file=${tlsFile("key")}`] : []),
    "listen_addresses=*",
    `unix_socket_directories=${SOCKET_DIR}`,
    "wal_level=replica",
    "max_wal_senders=10",
    "max_replication_slots=10",
    "hot_standby=on",
    "password_encryption=scram-sha-256",
    ...REWIND_SETTINGS.map(([name, value]) => `${name}=${value}`),
    // A commit waits for one standby (any) to have it: no acknowledged write is lost in a failover.
    ...(synchronous ? ["synchronous_standby_names=ANY 1 (*)"] : []),
  ]
    .map((flag) => `-c '${flag}'`)
    .join(" ");
}

interface Hosts {
  /** The read-write Service: the primary, whichever member it is. */
  primaryService: string;
  /** The headless Service: every member's address, Ready or not. */
  headless: string;
}

function entrypoint(hosts: Hosts, synchronous: boolean, tls: boolean): string {
  // A standby reaches the primary by the read-write Service's name: with TLS, the certificate must
  // be the platform's and name it.
  const primaryTls = tls ? ` sslmode=verify-full sslrootcert=${tlsFile("ca")}` : "";
  const databases = [POSTGRES.database, ...POSTGRES.extraDatabases]
    .map((db) => `CREATE DATABASE ${db} OWNER ${POSTGRES.user};`)
    .join("\n");
  return `#!/bin/bash
# Starts one member. What it starts as is decided from its data directory and from what its peers
# answer, never from its ordinal alone:
#   no data        clone from the member that answers as the primary (ordinal 0 initialises the
#                  database when no member answers at all: the first start of the platform);
#   a standby      follow the primary through the read-write Service;
#   was a primary  if another member answers as the primary, it was failed over from: rewind
#                  (pg_rewind) onto the new primary's timeline, or clone again, and follow it;
#                  while a member is on a newer timeline, wait for the primary; otherwise go on
#                  as the primary.
set -euo pipefail
ordinal="\${HOSTNAME##*-}"
root="$(dirname "$PGDATA")"
flags=(${serverFlags(synchronous, tls)})
slot="${POSTGRES.slotPrefix}\${ordinal}"
export PGPASSWORD="$REPLICATION_PASSWORD"

# The kubelet's fsGroup pass leaves the volume group-writable, and PostgreSQL refuses to start on
# a data directory anyone but its owner may read.
if [ -d "$PGDATA" ]; then chmod 0700 "$PGDATA"; fi
# A standby's signal file set aside by a pg_rewind that did not finish (see rewind_onto).
if [ -e "$PGDATA/${SIGNAL_ASIDE}" ]; then mv "$PGDATA/${SIGNAL_ASIDE}" "$PGDATA/standby.signal"; fi
# Why the last run stopped itself (cut off as the primary: ready.sh), said once.
rm -f "$root/${ISOLATED_SINCE_FILE}"
if [ -s "$root/${FENCED_FILE}" ]; then
  echo "before this start: $(tr '\\n' ' ' < "$root/${FENCED_FILE}")"
  rm -f "$root/${FENCED_FILE}"
fi

# Every member's address (the headless Service publishes members that are not Ready too). This
# member is not running yet, so it never answers itself.
peers() {
  getent ahostsv4 ${hosts.headless} | awk '{print $1}' | sort -u
}

# The address of the member that answers as the primary, if one does.
find_primary() {
  local host answer
  for host in $(peers); do
    answer="$(PGPASSWORD="$POSTGRES_PASSWORD" PGCONNECT_TIMEOUT=5 psql -h "$host" -p ${POSTGRES.port} -U "$POSTGRES_USER" -d postgres -tAc 'SELECT NOT pg_is_in_recovery()' 2>/dev/null || true)"
    if [ "$answer" = "t" ]; then echo "$host"; return 0; fi
  done
  return 1
}

# The timeline of this data directory's last checkpoint (not its PrevTimeLineID line).
my_timeline() {
  pg_controldata -D "$PGDATA" | awk -F: '/^Latest checkpoint.s TimeLineID/ {gsub(/ /, "", $2); print $2}'
}

# Whether a member that answers is on a newer timeline than this data directory: a standby was
# promoted after this member last wrote, so this member was failed over from and must not go on
# as the primary even when the new primary does not answer this very moment (a connection that
# timed out on a loaded node). A member knows the newest timeline by its history file in pg_wal
# (a standby fetches it when it follows a promotion; its last restartpoint may be older).
newer_peer() {
  local host mine theirs
  mine="$(my_timeline)"
  for host in $(peers); do
    theirs="$(PGPASSWORD="$POSTGRES_PASSWORD" PGCONNECT_TIMEOUT=5 psql -h "$host" -p ${POSTGRES.port} -U "$POSTGRES_USER" -d postgres -tAc \
      "SELECT greatest((SELECT timeline_id FROM pg_control_checkpoint()), (SELECT coalesce(max(('x' || substr(name, 1, 8))::bit(32)::int), 0) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{8}[.]history$'))" 2>/dev/null || true)"
    if [ -n "$theirs" ] && [ -n "$mine" ] && [ "$theirs" -gt "$mine" ]; then return 0; fi
  done
  return 1
}

# The addresses of the members other than this one, one per line (none for the only member). Fails
# when the headless Service's name does not resolve, which is not the same as having no peers.
other_members() {
  local all self
  all="$(peers)" || return 1
  self="$(getent ahostsv4 "$HOSTNAME" | awk 'NR == 1 {print $1}')" || return 1
  grep -vxF -e "$self" <<<"$all" || true
}

any_peer_answers() {
  local host
  for host in $(peers); do
    if pg_isready -q -t 2 -h "$host" -p ${POSTGRES.port}; then return 0; fi
  done
  return 1
}

# Initialises the primary in a directory beside PGDATA and renames it into place only when
# complete, so a start interrupted half-way is simply done again.
init_primary() {
  local work="$root/pgdata.init"
  rm -rf "$work"
  if [ -e "$PGDATA" ]; then mv "$PGDATA" "$root/pgdata.incomplete.$(date +%s)"; fi
  initdb -D "$work" --username="$POSTGRES_USER" --pwfile=<(printf '%s\\n' "$POSTGRES_PASSWORD") \\
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
  pg_ctl -D "$work" -w -o "-c listen_addresses= -c unix_socket_directories=${SOCKET_DIR}" start
  psql -v ON_ERROR_STOP=1 -h ${SOCKET_DIR} -U "$POSTGRES_USER" -d postgres <<'SQL'
\\getenv pw REPLICATION_PASSWORD
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'pw';
${databases}
SQL
  pg_ctl -D "$work" -m fast -w stop
  mv "$work" "$PGDATA"
}

# This member's slot on the primary keeps the WAL it has not received yet, so a standby that was
# down for a while catches up instead of looping on "requested WAL segment has already been
# removed". The slot reserves WAL from the moment it is made, so a clone taken through it misses
# nothing.
create_slot() {
  psql -h "$1" -p ${POSTGRES.port} -U replicator -d postgres -v ON_ERROR_STOP=1 -tAc \\
    "SELECT pg_create_physical_replication_slot('$slot', true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = '$slot')" >/dev/null
}
slot_status() {
  psql -h "$1" -p ${POSTGRES.port} -U replicator -d postgres -tAc "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '$slot'"
}

# The reloadable settings come from the ConfigMap's file (mounted without subPath, so the kubelet
# keeps it current while the server runs): postgresql.conf ends by including it. A data directory
# cloned from another member brings that member's line; the line is written again each start.
serve() {
  local conf="$PGDATA/postgresql.conf"
  sed -i '/^include_if_exists .*${RELOADABLE_FILE.replace(".", "[.]")}.$/d' "$conf"
  printf "include_if_exists '%s'\\n" "${SCRIPTS_DIR}/${RELOADABLE_FILE}" >> "$conf"
  exec postgres -D "$PGDATA" "\${flags[@]}" "$@"
}

# The data directory moved aside (only the last one is kept), never deleted.
set_aside() {
  rm -rf "$root/${SET_ASIDE_DIR}"
  mv "$PGDATA" "$root/${SET_ASIDE_DIR}"
}

# Cloned beside PGDATA through this member's slot on the primary at $1 (made first), and renamed
# into place when complete: a clone killed half-way leaves only the scratch directory, removed on
# the next start.
clone_from() {
  local work="$root/pgdata.clone"
  echo "cloning the data directory from $1"
  create_slot "$1"
  rm -rf "$work"
  pg_basebackup -h "$1" -p ${POSTGRES.port} -U replicator -D "$work" -X stream -S "$slot" --checkpoint=fast
  chmod 0700 "$work"
  if [ -e "$PGDATA" ]; then set_aside; fi
  mv "$work" "$PGDATA"
  rm -f "$root/${STARTS_FILE}"
}

# The connection to the primary goes through the read-write Service, so after a failover a standby
# follows the new primary by itself (recovery_target_timeline is latest). With a TCP user timeout:
# when the primary comes back at a new address while DNS or the node's neighbour table still hold
# the old one, the SYNs go to a pod that is gone and are dropped; the kernel retries them for about
# two minutes, and the walreceiver (which does not apply connect_timeout) waits all that time.
# tcp_user_timeout ends such an attempt in seconds. libpq reads the password from PGPASSWORD.
start_standby() {
  touch "$PGDATA/standby.signal"
  serve -c primary_slot_name="$slot" \\
    -c primary_conninfo="host=${hosts.primaryService} port=${POSTGRES.port} user=replicator application_name=$slot connect_timeout=${CONNECT_TIMEOUT_SECONDS} tcp_user_timeout=${CONNECT_TIMEOUT_SECONDS * 2000}${primaryTls}"
}

# Follows the primary at $1: a slot of its own there, cloned again when the primary gave up on it
# (max_slot_wal_keep_size).
follow() {
  create_slot "$1"
  if [ "$(slot_status "$1")" = "lost" ]; then
    echo "the primary removed WAL this standby still needed: cloning again"
    psql -h "$1" -p ${POSTGRES.port} -U replicator -d postgres -c "SELECT pg_drop_replication_slot('$slot')"
    clone_from "$1"
  fi
  start_standby
}

# With no data directory: clone from the primary. Only ordinal 0 on a volume that never held data
# initialises a new database, and only while no member answers at all; a member whose data was set
# aside (a rewind that failed) waits for a primary to clone from, whatever its ordinal.
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until primary="$(find_primary)"; do
    if [ "$ordinal" = "0" ] && [ ! -e "$root/${SET_ASIDE_DIR}" ] && ! any_peer_answers; then
      init_primary
      serve
    fi
    echo "waiting for a primary to clone from"
    sleep 2
  done
  clone_from "$primary"
  start_standby
fi

# Starts on this data directory that never became Ready, in a row: the script or the server stopped
# each time on what the directory holds (a rewind that did not finish, WAL past the fork point of
# the primary's timeline), or the standby never streamed. With another member answering as the
# primary, cloned again from it (the directory set aside); otherwise started as below.
starts=0
if [ -e "$root/${STARTS_FILE}" ]; then starts="$(wc -l < "$root/${STARTS_FILE}")"; fi
date -u +%FT%TZ >> "$root/${STARTS_FILE}"
if [ "$starts" -ge ${MAX_STARTS_NOT_READY} ] && primary="$(find_primary)"; then
  echo "$starts starts on this data directory in a row never became Ready: cloning again from $primary"
  clone_from "$primary"
  start_standby
fi

# Onto the primary's timeline: a no-op ("no rewind required") unless this member holds WAL the
# primary does not (a former primary, or a standby that received WAL past the new timeline's fork
# point); when rewinding fails, cloning again (the old data is kept in pgdata.diverged).
rewind_onto() {
  local mine theirs
  # A standby promoted moments ago records its new timeline in its control file only at the
  # checkpoint that follows; before it, pg_rewind compares timeline 1 with timeline 1, says "no
  # rewind required", and this member then loops on "new timeline forked off … before current
  # recovery point" forever. A checkpoint on the primary first makes the timelines comparable.
  PGPASSWORD="$POSTGRES_PASSWORD" psql -h "$1" -p ${POSTGRES.port} -U "$POSTGRES_USER" -d postgres -tAc 'CHECKPOINT' >/dev/null 2>&1 || true
  mine="$(my_timeline)"
  theirs="$(PGPASSWORD="$POSTGRES_PASSWORD" psql -h "$1" -p ${POSTGRES.port} -U "$POSTGRES_USER" -d postgres -tAc 'SELECT timeline_id FROM pg_control_checkpoint()' || true)"
  if [ -n "$mine" ] && [ "$mine" = "$theirs" ]; then return 0; fi
  # A data directory not shut down cleanly (a standby killed, or stopped past its grace period) is
  # first brought to a consistent state by pg_rewind in single-user mode. That server reads only
  # the data directory's files, not this script's flags: it records wal_log_hints from them in the
  # control file pg_rewind then checks, and its end-of-recovery checkpoint removes the WAL
  # wal_keep_size does not keep, which pg_rewind reads back to the last common checkpoint. Both go
  # into postgresql.conf too (a rewind copies the primary's file over it). It also refuses to start
  # with standby.signal ("standby mode is not supported by single-user servers"): the file is set
  # aside while pg_rewind runs (and put back at the next start if this one dies).
${REWIND_SETTINGS.map(([name, value]) => `  grep -qxF "${name} = '${value}'" "$PGDATA/postgresql.conf" || echo "${name} = '${value}'" >> "$PGDATA/postgresql.conf"`).join("\n")}
  if [ -e "$PGDATA/standby.signal" ]; then mv "$PGDATA/standby.signal" "$PGDATA/${SIGNAL_ASIDE}"; fi
  local rewound=0
  PGPASSWORD="$POSTGRES_PASSWORD" pg_rewind -D "$PGDATA" \\
    --source-server="host=$1 port=${POSTGRES.port} user=$POSTGRES_USER dbname=postgres connect_timeout=5" || rewound=$?
  if [ -e "$PGDATA/${SIGNAL_ASIDE}" ]; then mv "$PGDATA/${SIGNAL_ASIDE}" "$PGDATA/standby.signal"; fi
  # A rewind that failed may have copied part of the primary's files: the directory is set aside at
  # once, so a start after a clone that fails too clones again instead of using it.
  if [ "$rewound" != 0 ]; then
    echo "pg_rewind failed: the data directory is set aside (${SET_ASIDE_DIR}) and cloned again"
    set_aside
    clone_from "$1"
  fi
}

if [ -e "$PGDATA/standby.signal" ]; then
  if primary="$(find_primary)"; then rewind_onto "$primary"; follow "$primary"; fi
  start_standby
fi

# This member was a primary when it stopped. It goes on as the primary only on evidence that no
# other member took over:
#   another member answers as the primary, or one is on a newer timeline: it was failed over from,
#     and follows that primary (waiting for it to answer);
#   it is the only member: it starts at once;
#   standbys answer and none is the primary: the operator promotes a standby only once this pod has
#     stopped, so a promotion may be moments away: it looks again after a while (longer than
#     failoverDelaySeconds' default, so a primary that crashed is failed over from rather than
#     racing the promotion), then starts;
#   other members are listed but none answers (or their names do not resolve): it keeps looking,
#     and starts only after ${PRIMARY_UNANSWERED_SECONDS} s of that, and only while the API server
#     can be reached: a member cut off from it and from every other member is on the wrong side
#     of a partition, where a standby may have been promoted already.
primary=""
rechecked=""
unanswered_until=$(( $(date +%s) + ${PRIMARY_UNANSWERED_SECONDS} ))
until primary="$(find_primary)"; do
  primary=""
  if newer_peer; then
    echo "a member is on a newer timeline: this former primary was failed over from; waiting for the primary"
  elif others="$(other_members)" && [ -z "$others" ]; then
    break
  elif any_peer_answers; then
    if [ -n "$rechecked" ]; then break; fi
    rechecked=1
    sleep ${PRIMARY_RECHECK_SECONDS}
    continue
  elif [ "$(date +%s)" -ge "$unanswered_until" ]; then
    if ! bash ${SCRIPTS_DIR}/${ISOLATED_SCRIPT}; then
      echo "no other member answered for ${PRIMARY_UNANSWERED_SECONDS} s: going on as the primary"
      break
    fi
    echo "cut off from the API server and from every other member: not starting as the primary"
  else
    echo "other members are listed but none answers yet: looking again"
  fi
  sleep 2
done
if [ -n "$primary" ]; then
  echo "$primary is the primary now: rejoining as its standby"
  rewind_onto "$primary"
  follow "$primary"
fi
serve
`;
}

/**
 * Exit 0 when no TCP connection to the API server opens (the address the kubelet gives every pod,
 * tried for 2 s) and no other member accepts a connection (its name looked up and each member
 * tried within 3 s in all): the member is cut off. Both, not the API server alone, so a control
 * plane that is down does not stop a primary its standbys still reach. Without DNS (the usual
 * partition) the lookup finds no member.
 */
function isolatedScript(headless: string): string {
  return `#!/bin/bash
if timeout 2 bash -c 'exec 3<>"/dev/tcp/$KUBERNETES_SERVICE_HOST/$KUBERNETES_SERVICE_PORT"' 2>/dev/null; then exit 1; fi
other_member_answers() {
  local self host
  self="$(getent ahostsv4 "$HOSTNAME" | awk 'NR == 1 {print $1}')"
  for host in $(getent ahostsv4 ${headless} | awk '{print $1}' | sort -u); do
    if [ "$host" != "$self" ] && pg_isready -q -t 1 -h "$host" -p ${POSTGRES.port}; then return 0; fi
  done
  return 1
}
export -f other_member_answers
if timeout 3 bash -c other_member_answers; then exit 1; fi
exit 0
`;
}

/**
 * Ready: the primary accepts connections; a standby also streams from the primary right now
 * (pg_stat_wal_receiver), so one that cannot follow leaves postgres-ro instead of serving ever
 * older data. With other members to fail over to (`fence`), a primary found cut off at two checks
 * ${FENCE_AFTER_SECONDS} s apart stops itself (a fast shutdown; FENCE_AFTER_SECONDS says why), and
 * its next start does not go on as the primary while it stays cut off (entrypoint.sh).
 */
function readyScript(fence: boolean): string {
  const since = `${DATA_DIR}/${ISOLATED_SINCE_FILE}`;
  const fenceLines = `if [ "$state" = primary ]; then
  if bash ${SCRIPTS_DIR}/${ISOLATED_SCRIPT}; then
    now="$(date +%s)"
    [ -s "${since}" ] || echo "$now" > "${since}"
    first="$(cat "${since}")"
    if [ $((now - first)) -ge ${FENCE_AFTER_SECONDS} ]; then
      echo "$(date -u +%FT%TZ) the primary was cut off from the API server and from every other member for $((now - first)) s: stopped itself (fast shutdown)" >> "${DATA_DIR}/${FENCED_FILE}"
      rm -f "${since}"
      pg_ctl -D "$PGDATA" -m fast -W stop >/dev/null
      exit 1
    fi
  else
    rm -f "${since}"
  fi
fi
`;
  return `#!/bin/sh
state="$(PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -p ${POSTGRES.port} -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc \\
  "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 'primary' WHEN EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN 'streaming' ELSE 'behind' END")"
case "$state" in
  primary | streaming) ;;
  *) exit 1 ;;
esac
${fence ? fenceLines : ""}# This start served: the count of starts that never became Ready begins again.
rm -f "${DATA_DIR}/${STARTS_FILE}"
`;
}

export function renderPostgres(ctx: RenderContext): ComponentObjects {
  const name = "postgres";
  const settings = componentSpec(ctx.spec, info(name));
  const owner = ownerOf(ctx, name);
  const ns = ctx.platform.namespace;
  const hosts = {
    primaryService: serviceHost(POSTGRES.service, ns),
    headless: serviceHost(headlessServiceName(name), ns),
  };
  const storage = settings.storage ?? "20Gi";
  const synchronous = ctx.spec.infrastructure.postgres.synchronous;
  const tlsSecret = platformTlsSecret(ctx);
  const tls = tlsSecret !== undefined;
  const config = {
    "entrypoint.sh": entrypoint(hosts, synchronous, tls),
    "ready.sh": readyScript(settings.replicas > 1),
    [ISOLATED_SCRIPT]: isolatedScript(hosts.headless),
    [HBA_FILE]: hbaConf(tls),
  };
  const reloadableConfig = { [RELOADABLE_FILE]: reloadableConf(storage) };
  const secret = componentSecret(ctx, name, POSTGRES.secret, [
    { key: POSTGRES.passwordKey, length: 32 },
    { key: POSTGRES.replicationPasswordKey, length: 32 },
  ]);
  const accepting = {
    exec: { command: ["pg_isready", "-q", "-h", "127.0.0.1", "-U", POSTGRES.user, "-d", POSTGRES.database] },
  };
  // Up to 5 s for isolated.sh when the API server does not answer, besides psql on a loaded node.
  const streaming = { exec: { command: ["sh", `${SCRIPTS_DIR}/ready.sh`] }, timeoutSeconds: 10 };
  const built = buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [{ name: "postgres", port: POSTGRES.port }],
      // The read-write Service reaches the pod the operator labelled primary, Ready or not: the
      // label is set only on the member that answered as the primary, and a standby just promoted
      // is not Ready until its next probe.
      serviceSelector: { [POSTGRES_ROLE_LABEL]: POSTGRES_ROLES.primary },
      publishNotReadyAddresses: true,
      // Every member starts at once, and what the peers answer decides the primary. In order
      // (OrderedReady), a platform re-created on its retained volumes whose last primary was not
      // ordinal 0 never started: postgres-0 came up as a standby of a primary that was not running,
      // was never Ready (a standby is Ready only while it streams), and the former primary was
      // never started after it.
      podManagementPolicy: "Parallel",
      // With standbys, the operator replaces the members itself (controllers/postgres-ha/rolling.ts):
      // the standbys first, the primary last after a switchover to an updated standby, instead of
      // the StatefulSet's highest-ordinal-first that may restart the primary while a standby is
      // healthy. One member has no other to hand over to: the StatefulSet rolls it.
      updatedByOperator: settings.replicas > 1,
      config,
      reloadableConfig,
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
              // The scripts and probes reach peers by address: the chain is verified, not the name.
              ...(tls
                ? [
                    { name: "PGSSLMODE", value: "verify-ca" },
                    { name: "PGSSLROOTCERT", value: tlsFile("ca") },
                  ]
                : []),
            ],
            resources: mainResources(ctx, name),
            // A standby clones the whole database before it accepts a connection: up to an hour.
            startupProbe: { ...accepting, periodSeconds: 5, failureThreshold: 720 },
            readinessProbe: { ...streaming, periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...accepting, periodSeconds: 20, timeoutSeconds: 5, failureThreshold: 6 },
            // A fast shutdown (sessions ended, every WAL record sent to the standbys) instead of
            // the smart one SIGTERM asks for, which waits for every client to leave.
            lifecycle: {
              preStop: { exec: { command: ["pg_ctl", "-D", PGDATA, "-m", "fast", "-w", "stop"] } },
            },
            volumeMounts: [
              { name: "data", mountPath: DATA_DIR },
              { name: "scripts", mountPath: SCRIPTS_DIR, readOnly: true },
              { name: "run", mountPath: SOCKET_DIR },
              ...(tls ? [TLS_MOUNT] : []),
            ],
          },
        ],
        volumes: [
          { name: "scripts", configMap: { name: configMapName(name) } },
          { name: "run", emptyDir: {} },
          ...(tlsSecret ? [tlsVolume(tlsSecret)] : []),
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
      // Streaming standbys within maxStandbyLagBytes, as the operator labels them.
      selector: { ...selectorLabels(ctx.platform.name, name), [POSTGRES_ROLE_LABEL]: POSTGRES_ROLES.standby },
      ports: [{ name: "postgres", port: POSTGRES.port, targetPort: "postgres", protocol: "TCP" }],
    },
  };
  return { objects: [secret, ...built.objects, readOnly], workload: built.workload };
}
