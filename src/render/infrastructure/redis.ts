// Redis: standalone (one pod) or Sentinel mode, where each pod runs a Redis server and a
// Sentinel. Clients in Sentinel mode ask `redis:26379` for the primary named REDIS.masterName.
//
// Who is primary when a pod starts: the most recent primary anyone knows. Each Sentinel keeps its
// state (monitored primary, config epoch) on the pod's volume, so it survives the pod; a starting
// pod asks every peer's Sentinel directly (through the headless Service: in a cold restart no pod
// is Ready, so the `redis` Service has no endpoints) and reads its own saved state, and takes the
// answer with the highest config epoch. Only when nobody knows anything (the very first start)
// is ordinal 0 the primary. So a cold restart (every pod stopped, then started in order) brings
// back the last primary with its data instead of letting ordinal 0 declare itself primary and
// resync the others from its older copy.
//
// A replica starts with replica-priority 0, so a Sentinel never promotes it before it has synced
// from the primary once (its data may be older than the primary's); it becomes eligible (100)
// when its link to the primary is up.
//
// The scripts need redis-server, redis-cli, a POSIX shell, awk, getent and timeout on PATH, and
// the env set below, so the official image and one built from Debian's packages run the same
// render.
import { componentSpec } from "../../api/index.js";
import {
  componentSecret,
  helperResources,
  info,
  mainResources,
  workloadBase,
  type RenderContext,
  placementFor,
} from "../context.js";
import { REDIS, podHost } from "../endpoints.js";
import type { Container, EnvVar } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { TLS_MOUNT, platformTlsSecret, tlsFile, tlsVolume } from "../tls.js";
import { buildWorkload, configMapName, headlessServiceName, type ComponentObjects } from "../workload.js";

const REDIS_UID = 999; // the redis user of the official image (and of ours)
const DATA_DIR = "/data";
const SCRIPTS_DIR = "/opt/onto";
/** Sentinel's own state, rewritten by Sentinel on every change; kept on the pod's volume. */
const SENTINEL_STATE = `${DATA_DIR}/sentinel/sentinel.conf`;
/** What the server's last preStop hook did (hand-over or not), printed by its next start. */
const LAST_STOP_LOG = `${DATA_DIR}/last-stop.log`;
/** Present while the Sentinel waits for the primary's name to resolve (its liveness allows it). */
const SENTINEL_WAITING = "/tmp/sentinel-waiting";

/**
 * The listener lines of a Redis server or a Sentinel: plaintext on `port`, or with TLS only TLS on
 * it (`port 0` closes the plaintext one). Clients are not asked for certificates; with
 * tls-replication a replica's link to its primary, and a Sentinel's links to the servers and its
 * peers, use TLS too. Redis reads the files at start only: a renewed certificate restarts the pods.
 */
function listener(port: number, tls: boolean): string[] {
  if (!tls) return [`port ${port}`];
  return [
    "port 0",
    `tls-port ${port}`,
    `tls-cert-file ${tlsFile("cert")}`,
    `tls-key-file ${tlsFile("key")}`,
    `tls-ca-cert-file ${tlsFile("ca")}`,
    "tls-auth-clients no",
    "tls-replication yes",
  ];
}

/** redis-cli as the scripts and probes run it: with TLS, verifying the chain against the platform CA. */
function redisCli(tls: boolean): string {
  return tls ? `redis-cli --tls --cacert ${tlsFile("ca")}` : "redis-cli";
}

const redisConf = (tls: boolean) => `bind * -::*
${listener(REDIS.port, tls).join("\n")}
dir ${DATA_DIR}
appendonly yes
appendfsync everysec
save 900 1
save 300 100
protected-mode no
`;

/** Every member's stable name (the headless Service's), space-separated for the scripts' loops. */
function memberHosts(namespace: string, replicas: number): string {
  return Array.from({ length: replicas }, (_, i) => podHost("redis", i, namespace)).join(" ");
}

/**
 * A command about the primary to the Sentinel at `host`, as a subshell whose output the caller
 * redirects as one. Sentinels take no password: REDISCLI_AUTH would only add a warning to the reply.
 */
function askSentinel(cli: string, host: string, command: string): string {
  return `(unset REDISCLI_AUTH; timeout 3 ${cli} -h ${host} -p ${REDIS.sentinelPort} --raw sentinel ${command} ${REDIS.masterName})`;
}

/**
 * Shell that defines find_primary, which sets $primary (and $epoch) to the primary to follow: of
 * what the peers' Sentinels that answer and the Sentinel state saved on this pod's volume name,
 * newest config epoch first, the first whose server answers that it is a primary; when none answers
 * (a cold restart, where this pod is the first up), the newest; ordinal 0 when nobody knows
 * anything. It also sets $answering to a peer (not this pod) whose Sentinel answered, if any, and
 * $confirmed to "yes" when the primary it names answered as one. The
 * check matters: an (epoch, address) pair can name a server that is no longer the primary (a
 * Sentinel's view or a saved state from the middle of a failover), and a Sentinel started on it
 * with an epoch its peers also hold never adopts their view (Sentinel takes a peer's configuration
 * only with a greater epoch): clients asking that Sentinel were sent to a replica for good.
 */
function findPrimary(namespace: string, replicas: number, cli: string): string {
  const peers = memberHosts(namespace, replicas);
  return `peers="${peers}"
find_primary() {
primary=""; epoch=-1; candidates=""; answering=""; confirmed=""
consider() { # <epoch> <host>
  if [ -n "$2" ] && [ "$1" -ge 0 ] 2>/dev/null; then candidates="$candidates
$1 $2"; fi
}
field() { awk -v key="$1" 'prev == key { print; exit } { prev = $0 }'; }
for peer in $peers; do
  answer="$(timeout 3 ${cli} -h "$peer" -p ${REDIS.sentinelPort} --raw sentinel master ${REDIS.masterName} 2>/dev/null || true)"
  if [ -n "$answer" ] && [ "$peer" != "$ANNOUNCE_HOST" ]; then answering="$peer"; fi
  consider "$(printf '%s\\n' "$answer" | field config-epoch)" "$(printf '%s\\n' "$answer" | field ip)"
done
if [ -f ${SENTINEL_STATE} ]; then
  consider "$(awk '$1 == "sentinel" && $2 == "config-epoch" && $3 == "${REDIS.masterName}" { print $4 }' ${SENTINEL_STATE})" \\
    "$(awk '$1 == "sentinel" && $2 == "monitor" && $3 == "${REDIS.masterName}" { print $4 }' ${SENTINEL_STATE})"
fi
# Newest epoch first, each pair once (a stable sort keeps the order they were seen in).
ordered="$(printf '%s\\n' "$candidates" | awk 'NF == 2 && !seen[$0]++' | sort -s -k1,1nr)"
if [ -n "$ordered" ]; then
  set -- $ordered
  epoch="$1"; primary="$2"
  while [ $# -ge 2 ]; do
    if timeout 3 ${cli} -h "$2" -p ${REDIS.port} info replication 2>/dev/null | grep -q '^role:master'; then
      epoch="$1"; primary="$2"; confirmed=yes; break
    fi
    shift 2
  done
fi
if [ -z "$primary" ]; then primary="${podHost("redis", 0, namespace)}"; epoch=0; fi
echo "primary: $primary (config epoch $epoch)"
}`;
}

/**
 * Shell run when find_primary names this very pod while a peer's Sentinel answers: the pod was the
 * primary and comes back before the Sentinels' view changed, or while they fail over. Starting as
 * the primary then races their failover: its replicas reconnect and acknowledge writes that the
 * replica being promoted never receives, and the resync onto the promoted one drops them (and after
 * a kill, whatever its append-only file had not yet written drops from its replicas too). So while
 * a peer's server is a replica that has synced since it started (replica-priority above 0, read
 * from the server itself), it asks a peer's Sentinel to fail over (a forced failover promotes the
 * synced replica with the most data) and follows the primary they name. The asking is repeated: a
 * Sentinel reads a replica's priority every 10 s, so it may still see 0 and answer NOGOODSLAVE.
 * With no synced replica (a cold restart: the others wait for this one) it starts as the primary
 * at once, and after 30 attempts with no new primary (about a minute) it does too. Runs after
 * findPrimary's shell: it reads $peers and calls find_primary again, which sets $answering.
 */
function handOver(cli: string): string {
  return `synced_replica() {
  for peer in $peers; do
    [ "$peer" != "$ANNOUNCE_HOST" ] || continue
    if timeout 3 ${cli} -h "$peer" -p ${REDIS.port} info replication 2>/dev/null | grep -q '^slave_priority:[1-9]'; then return 0; fi
  done
  return 1
}
tries=0
while [ "$primary" = "$ANNOUNCE_HOST" ] && [ -n "$answering" ] && [ "$tries" -lt 30 ] && synced_replica; do
  tries=$((tries + 1))
  reply="$( ${askSentinel(cli, '"$answering"', "failover")} 2>&1 || true)"
  echo "named primary on restart; failover asked of $answering: $reply"
  sleep 1
  find_primary
done
`;
}

/**
 * Shell of a background loop: every 10 s, a replica that follows a server other than the one its
 * pod's Sentinel names as primary, twice in a row, while that one answers as a primary, follows
 * it (REPLICAOF), with replica-priority 0 until its link is up again, as at start. Sentinels
 * learn of a replica only from its primary's INFO, every 10 s: a replica started within that
 * window of a failover (a new member, the last pod of a new platform) is neither promoted nor
 * reconfigured by it, and kept replicating from the demoted primary once that one came back as a
 * replica of the new one: a chain the Sentinels never see and never mend. (The script runs under
 * `set -e`: a command that may fail in the loop says `|| true`, so the loop outlives it.)
 */
function followSentinels(cli: string): string {
  const local = `${cli} -h 127.0.0.1 -p ${REDIS.port}`;
  return `(
  seen=""
  while sleep 10; do
    named="$(timeout 3 ${cli} -h 127.0.0.1 -p ${REDIS.sentinelPort} --raw sentinel get-master-addr-by-name ${REDIS.masterName} 2>/dev/null | head -n 1)"
    following="$(timeout 3 ${local} info replication 2>/dev/null | awk -F: '$1 == "master_host" { sub(/\\r$/, "", $2); print $2 }')"
    if [ -z "$named" ] || [ -z "$following" ] || [ "$named" = "$following" ] || [ "$named" = "$ANNOUNCE_HOST" ]; then
      seen=""
    elif [ "$named" = "$seen" ] && timeout 3 ${cli} -h "$named" -p ${REDIS.port} info replication 2>/dev/null | grep -q '^role:master'; then
      echo "following $following, which the Sentinels do not name: following $named"
      ${local} config set replica-priority 0 >/dev/null || true
      ${local} replicaof "$named" ${REDIS.port} >/dev/null || true
      waited=0
      until ${local} info replication 2>/dev/null | grep -q '^master_link_status:up' || [ "$waited" -ge 60 ]; do
        sleep 1; waited=$((waited + 1))
      done
      if [ "$waited" -lt 60 ]; then ${local} config set replica-priority 100 >/dev/null || true; fi
      seen=""
    else
      seen="$named"
    fi
  done
) &
`;
}

function startRedis(namespace: string, replicas: number, sentinel: boolean, cli: string): string {
  // The primary is settled before the configuration is written: Sentinel rewrites a server's file
  // when it reconfigures it, so the file is made just before the server starts from it.
  const decide = sentinel
    ? `${findPrimary(namespace, replicas, cli)}
find_primary
${handOver(cli)}`
    : "";
  const replication = sentinel
    ? `printf 'replica-announce-ip %s\\n' "$ANNOUNCE_HOST" >> "$conf"
if [ "$primary" != "$ANNOUNCE_HOST" ]; then
  printf 'replicaof %s ${REDIS.port}\\nreplica-priority 0\\n' "$primary" >> "$conf"
  # Eligible for promotion once it holds the primary's data.
  (
    until ${cli} -h 127.0.0.1 -p ${REDIS.port} info replication 2>/dev/null | grep -q '^master_link_status:up'; do sleep 1; done
    ${cli} -h 127.0.0.1 -p ${REDIS.port} config set replica-priority 100 >/dev/null
  ) &
fi
${followSentinels(cli)}`
    : "";
  return `#!/bin/sh
set -eu
if [ -f ${LAST_STOP_LOG} ]; then
  sed 's/^/before the last stop: /' ${LAST_STOP_LOG}
  rm -f ${LAST_STOP_LOG}
fi
${decide}conf=/tmp/redis.conf
cp ${SCRIPTS_DIR}/redis.conf "$conf"
printf 'requirepass "%s"\\nmasterauth "%s"\\n' "$REDIS_PASSWORD" "$REDIS_PASSWORD" >> "$conf"
${replication}exec redis-server "$conf"
`;
}

/**
 * Shell run before the server stops on a pod's deletion (preStop; a kill runs nothing): a primary
 * with a replica online hands over first, so a rolled or drained primary costs clients a failover
 * of a second or two instead of the Sentinels' detection, election and, when it comes back before
 * they are done, the hand-over at start. Writes are paused (they wait, not fail) so the replicas
 * receive the last of them and the one promoted holds every acknowledged write; a peer's Sentinel
 * (this pod's own is stopping too) is asked to fail over; once the Sentinels name another primary
 * this server follows it, so the writes that waited are refused (READONLY, the client asks the
 * Sentinels again) instead of acknowledged here and lost. Without a replica online, or when no
 * Sentinel promotes one within 15 s, the server stops as the primary, as it did before.
 */
function stopRedis(namespace: string, replicas: number, cli: string): string {
  const peers = memberHosts(namespace, replicas);
  const local = `${cli} -h 127.0.0.1 -p ${REDIS.port}`;
  return `#!/bin/sh
set -u
# The kubelet keeps no output of a hook: the next start of the server prints these lines.
exec >${LAST_STOP_LOG} 2>&1
info="$(timeout 3 ${local} info replication 2>/dev/null || true)"
printf '%s\\n' "$info" | grep -q '^role:master' || exit 0
if ! printf '%s\\n' "$info" | grep -q '^slave[0-9]*:.*state=online'; then
  echo "stopping as the primary: no replica online"
  exit 0
fi
${local} client pause 20000 write >/dev/null || true
asked=""
for peer in ${peers}; do
  [ "$peer" != "$ANNOUNCE_HOST" ] || continue
  reply="$( ${askSentinel(cli, '"$peer"', "failover")} 2>&1 || true)"
  echo "stopping as the primary; failover asked of $peer: $reply"
  if [ "$reply" = "OK" ]; then asked="$peer"; break; fi
done
waited=0
while [ -n "$asked" ] && [ "$waited" -lt 15 ]; do
  named="$( ${askSentinel(cli, '"$asked"', "get-master-addr-by-name")} 2>/dev/null | head -n 1 || true)"
  if [ -n "$named" ] && [ "$named" != "$ANNOUNCE_HOST" ]; then
    ${local} replicaof "$named" ${REDIS.port} >/dev/null || true
    ${local} client unpause >/dev/null || true
    echo "handed over to $named before stopping"
    exit 0
  fi
  sleep 1
  waited=$((waited + 1))
done
${local} client unpause >/dev/null || true
echo "stopping as the primary: no Sentinel promoted a replica"
`;
}

function startSentinel(namespace: string, replicas: number, quorum: number, tls: boolean): string {
  const lines = [
    "bind * -::*",
    ...listener(REDIS.sentinelPort, tls),
    "sentinel resolve-hostnames yes",
    "sentinel announce-hostnames yes",
    "sentinel announce-ip $ANNOUNCE_HOST",
    `sentinel monitor ${REDIS.masterName} $primary ${REDIS.port} ${quorum}`,
    `sentinel config-epoch ${REDIS.masterName} $epoch`,
    // Generated passwords are letters and digits: no quoting needed in the file.
    `sentinel auth-pass ${REDIS.masterName} $REDIS_PASSWORD`,
    `sentinel down-after-milliseconds ${REDIS.masterName} 5000`,
    // Also the wait before a Sentinel tries again (twice this): with one of three pods gone, the
    // two Sentinels left can each vote for itself in the same epoch, and neither is elected; a
    // short timeout makes that a 20 s delay, not two minutes. A replica still syncing after it
    // is only reconfigured without waiting for the others (parallel-syncs no longer holds).
    `sentinel failover-timeout ${REDIS.masterName} 10000`,
    `sentinel parallel-syncs ${REDIS.masterName} 1`,
  ];
  return `#!/bin/sh
set -eu
touch ${SENTINEL_WAITING}
${findPrimary(namespace, replicas, redisCli(tls))}
find_primary
# A primary no server confirmed (a cold start, or the middle of a failover, where the leading
# Sentinel pairs the new epoch with the old address between its promotion and its switch, about
# half a second) is monitored one epoch below: a Sentinel adopts a peer's view only with a greater
# epoch, so one that started on the same epoch with the old address named a replica for good.
if [ -z "$confirmed" ] && [ "$epoch" -gt 0 ]; then epoch=$((epoch - 1)); fi
# Sentinel refuses to start on a primary name that does not resolve yet (its pod not created).
until getent ahosts "$primary" >/dev/null; do echo "waiting for $primary to resolve"; sleep 1; done
mkdir -p "$(dirname ${SENTINEL_STATE})"
state=${SENTINEL_STATE}.new
: > "$state"
${lines.map((l) => `echo "${l}" >> "$state"`).join("\n")}
mv "$state" ${SENTINEL_STATE}
rm -f ${SENTINEL_WAITING}
exec redis-server ${SENTINEL_STATE} --sentinel
`;
}

export function renderRedis(ctx: RenderContext): ComponentObjects {
  const name = "redis";
  const settings = ctx.spec.infrastructure.redis;
  const sentinel = settings.mode === "sentinel";
  const namespace = ctx.platform.namespace;
  const quorum = Math.floor(settings.replicas / 2) + 1;
  const tlsSecret = platformTlsSecret(ctx);
  const tls = tlsSecret !== undefined;
  const cli = redisCli(tls);
  const config: Record<string, string> = {
    "redis.conf": redisConf(tls),
    "start-redis.sh": startRedis(namespace, settings.replicas, sentinel, cli),
    ...(sentinel
      ? {
          "start-sentinel.sh": startSentinel(namespace, settings.replicas, quorum, tls),
          "stop-redis.sh": stopRedis(namespace, settings.replicas, cli),
        }
      : {}),
  };
  const secret = componentSecret(ctx, name, REDIS.secret, [{ key: REDIS.passwordKey, length: 32 }]);
  // redis-cli reads REDISCLI_AUTH, so probes never put the password on a command line.
  const env: EnvVar[] = [
    secretEnv("REDIS_PASSWORD", REDIS.secret, REDIS.passwordKey),
    secretEnv("REDISCLI_AUTH", REDIS.secret, REDIS.passwordKey),
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    // The name peers and clients reach this pod by (stable across restarts, unlike its IP).
    { name: "ANNOUNCE_HOST", value: `$(POD_NAME).${headlessServiceName(name)}.${namespace}.svc` },
  ];
  const ping = (port: number) => ({
    exec: { command: ["sh", "-c", `${cli} -h 127.0.0.1 -p ${port} ping | grep -q PONG`] },
  });
  // While it waits for the primary's name to resolve the Sentinel is not listening yet.
  const sentinelAlive = {
    exec: {
      command: [
        "sh",
        "-c",
        `[ -e ${SENTINEL_WAITING} ] || ${cli} -h 127.0.0.1 -p ${REDIS.sentinelPort} ping | grep -q PONG`,
      ],
    },
  };
  const built = buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [
        { name: "redis", port: REDIS.port },
        ...(sentinel ? [{ name: "sentinel", port: REDIS.sentinelPort }] : []),
      ],
      config,
      volumeClaims: [{ name: "data", storage: componentSpec(ctx.spec, info(name)).storage ?? "5Gi" }],
      volumeRetention: ctx.spec.retentionPolicy.persistentVolumeClaims,
      pod: (image) => {
        const scripts = { name: "scripts", mountPath: SCRIPTS_DIR, readOnly: true };
        const data = { name: "data", mountPath: DATA_DIR };
        const mounts = [data, scripts, ...(tls ? [TLS_MOUNT] : [])];
        const containers: Container[] = [
          {
            name,
            image,
            command: ["sh", `${SCRIPTS_DIR}/start-redis.sh`],
            ports: [{ name: "redis", containerPort: REDIS.port }],
            env,
            resources: mainResources(ctx, name),
            // Loading a large dataset answers LOADING to PING: up to 10 minutes before liveness counts.
            // 3 s, not the default 1 s: on a loaded node a PING answered in time was counted as a
            // failure dozens of times a run (the kubelet's "timed out after 1s").
            startupProbe: { ...ping(REDIS.port), periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 120 },
            readinessProbe: { ...ping(REDIS.port), periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 3 },
            livenessProbe: { ...ping(REDIS.port), periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 },
            ...(sentinel
              ? { lifecycle: { preStop: { exec: { command: ["sh", `${SCRIPTS_DIR}/stop-redis.sh`] } } } }
              : {}),
            volumeMounts: mounts,
          },
        ];
        if (sentinel) {
          containers.push({
            name: "sentinel",
            image,
            command: ["sh", `${SCRIPTS_DIR}/start-sentinel.sh`],
            ports: [{ name: "sentinel", containerPort: REDIS.sentinelPort }],
            env,
            resources: helperResources("50m", "64Mi"),
            // No readiness probe: in a cold restart ordinal 0's Sentinel may wait for a later pod
            // (the last primary) to exist, and pods after 0 start only once 0 is Ready.
            livenessProbe: { ...sentinelAlive, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 },
            volumeMounts: mounts,
          });
        }
        return {
          runAsUser: REDIS_UID,
          fsGroup: REDIS_UID,
          // The hand-over before the stop (up to about 25 s) comes out of this, then the server's
          // own shutdown (it writes its data set).
          ...(sentinel ? { terminationGracePeriodSeconds: 60 } : {}),
          containers,
          volumes: [
            { name: "scripts", configMap: { name: configMapName(name) } },
            ...(tlsSecret ? [tlsVolume(tlsSecret)] : []),
          ],
        };
      },
    },
    placementFor(ctx, name),
  );
  return { objects: [secret, ...built.objects], workload: built.workload };
}
