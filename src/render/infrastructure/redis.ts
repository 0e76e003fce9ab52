// Redis: standalone (one pod) or Sentinel mode, where each pod runs a Redis server and a
// Sentinel. Ordinal 0 starts as the primary; a pod (re)starting asks the Sentinels who the
// primary is first, so a restarted former primary rejoins as a replica instead of splitting the
// data. Clients in Sentinel mode ask `redis:26379` for the primary named REDIS.masterName.
import { componentSpec } from "../../api/index.js";
import {
  componentSecret,
  helperResources,
  info,
  mainResources,
  workloadBase,
  type RenderContext,
} from "../context.js";
import { REDIS, podHost } from "../endpoints.js";
import type { Container, EnvVar } from "../objects.js";
import { secretEnv } from "../secrets.js";
import { buildWorkload, configMapName, headlessServiceName, type ComponentObjects } from "../workload.js";

const REDIS_UID = 999; // the redis user of the official image

const REDIS_CONF = `bind * -::*
port ${REDIS.port}
dir /data
appendonly yes
appendfsync everysec
save 900 1
save 300 100
protected-mode no
`;

/** Shell that sets $primary to the host the Sentinels report, or to ordinal 0's host. */
function findPrimary(namespace: string): string {
  return `primary="$(redis-cli -h ${REDIS.service} -p ${REDIS.sentinelPort} --raw sentinel get-master-addr-by-name ${REDIS.masterName} 2>/dev/null | head -n1 || true)"
if [ -z "$primary" ]; then primary="${podHost("redis", 0, namespace)}"; fi`;
}

function startRedis(namespace: string, sentinel: boolean): string {
  const me = `"$HOSTNAME.${headlessServiceName("redis")}.${namespace}.svc"`;
  const replication = sentinel
    ? `printf 'replica-announce-ip %s\\n' ${me} >> "$conf"
${findPrimary(namespace)}
if [ "$primary" != ${me} ]; then printf 'replicaof %s ${REDIS.port}\\n' "$primary" >> "$conf"; fi
`
    : "";
  return `#!/bin/sh
set -eu
conf=/tmp/redis.conf
cp /opt/onto/redis.conf "$conf"
printf 'requirepass "%s"\\nmasterauth "%s"\\n' "$REDIS_PASSWORD" "$REDIS_PASSWORD" >> "$conf"
${replication}exec redis-server "$conf"
`;
}

function startSentinel(namespace: string, quorum: number): string {
  const me = `"$HOSTNAME.${headlessServiceName("redis")}.${namespace}.svc"`;
  const lines = [
    `port ${REDIS.sentinelPort}`,
    "sentinel resolve-hostnames yes",
    "sentinel announce-hostnames yes",
    `sentinel announce-ip ${me}`,
    `sentinel monitor ${REDIS.masterName} "$primary" ${REDIS.port} ${quorum}`,
    `sentinel auth-pass ${REDIS.masterName} "$REDIS_PASSWORD"`,
    `sentinel down-after-milliseconds ${REDIS.masterName} 5000`,
    `sentinel failover-timeout ${REDIS.masterName} 60000`,
    `sentinel parallel-syncs ${REDIS.masterName} 1`,
  ];
  return `#!/bin/sh
set -eu
${findPrimary(namespace)}
: > /tmp/sentinel.conf
${lines.map((l) => `echo ${l} >> /tmp/sentinel.conf`).join("\n")}
exec redis-server /tmp/sentinel.conf --sentinel
`;
}

export function renderRedis(ctx: RenderContext): ComponentObjects {
  const name = "redis";
  const settings = ctx.spec.infrastructure.redis;
  const sentinel = settings.mode === "sentinel";
  const namespace = ctx.platform.namespace;
  const quorum = Math.floor(settings.replicas / 2) + 1;
  const config: Record<string, string> = {
    "redis.conf": REDIS_CONF,
    "start-redis.sh": startRedis(namespace, sentinel),
    ...(sentinel ? { "start-sentinel.sh": startSentinel(namespace, quorum) } : {}),
  };
  const secret = componentSecret(ctx, name, REDIS.secret, [{ key: REDIS.passwordKey, length: 32 }]);
  // redis-cli reads REDISCLI_AUTH, so probes never put the password on a command line.
  const env: EnvVar[] = [
    secretEnv("REDIS_PASSWORD", REDIS.secret, REDIS.passwordKey),
    secretEnv("REDISCLI_AUTH", REDIS.secret, REDIS.passwordKey),
  ];
  const ping = (port: number) => ({
    exec: { command: ["sh", "-c", `redis-cli -h 127.0.0.1 -p ${port} ping | grep -q PONG`] },
  });
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
        const scripts = { name: "scripts", mountPath: "/opt/onto", readOnly: true };
        const containers: Container[] = [
          {
            name,
            image,
            command: ["sh", "/opt/onto/start-redis.sh"],
            ports: [{ name: "redis", containerPort: REDIS.port }],
            env,
            resources: mainResources(ctx, name),
            readinessProbe: { ...ping(REDIS.port), periodSeconds: 5, failureThreshold: 3 },
            livenessProbe: { ...ping(REDIS.port), periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 },
            volumeMounts: [{ name: "data", mountPath: "/data" }, scripts],
          },
        ];
        if (sentinel) {
          containers.push({
            name: "sentinel",
            image,
            command: ["sh", "/opt/onto/start-sentinel.sh"],
            ports: [{ name: "sentinel", containerPort: REDIS.sentinelPort }],
            env,
            resources: helperResources("50m", "64Mi"),
            readinessProbe: { ...ping(REDIS.sentinelPort), periodSeconds: 5, failureThreshold: 3 },
            livenessProbe: {
              ...ping(REDIS.sentinelPort),
              periodSeconds: 15,
              timeoutSeconds: 5,
              failureThreshold: 4,
            },
            volumeMounts: [scripts],
          });
        }
        return {
          runAsUser: REDIS_UID,
          fsGroup: REDIS_UID,
          containers,
          volumes: [{ name: "scripts", configMap: { name: configMapName(name) } }],
        };
      },
    },
    ctx.placement,
  );
  return { objects: [secret, ...built.objects], workload: built.workload };
}
