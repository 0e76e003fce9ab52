// What the tests of a platform on the real node share: the platform of samples/real.yaml
// reconciled by the in-process operator (under its generated RBAC), the members of a component by
// pod address (the host routes to pods; ClusterIPs work from pods only), the generated
// credentials, and clients from the host: pg, ioredis through the Sentinels, MinIO's client.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import * as https from "node:https";
import { checkServerIdentity, type ConnectionOptions } from "node:tls";
import type * as k8s from "@kubernetes/client-node";
import { Redis } from "ioredis";
import * as Minio from "minio";
import pg from "pg";
import { resolveSpec, type OntoPlatform } from "../../src/api/index.js";
import {
  claimsOfRendered,
  ensureLocalVolumes,
  deleteLocalVolumes,
  LOCAL_STORAGE_CLASS,
} from "../../src/localcluster/local-volumes.js";
import { REAL_NODE_SELECTOR } from "../../src/localcluster/node-kind.js";
import { renderPlatform } from "../../src/render/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { realNodeRuntimes } from "../../src/localcluster/launcher.js";
import { MINIO, POSTGRES, REDIS } from "../../src/render/endpoints.js";
import { clusterStateDir, createTestNamespace, eventually } from "../support/cluster.js";
import { LOCAL_CATALOG, LOCAL_RELEASES_FILE } from "../support/local-releases.js";
import { adminClient, installCrd, loadSample, startOperator, waitForPhase } from "../support/platform.js";
import { applyReleases } from "../support/releases.js";
import { coreApi, kubectl, kubectlSpawn, realNodes } from "./support.js";

export type Operator = Awaited<ReturnType<typeof startOperator>>;

export interface RealPlatform {
  client: KubeClient;
  namespace: string;
  name: string;
  operator: Operator;
}

/**
 * Local PVs for every claim the platform's StatefulSets make (src/localcluster/local-volumes.ts:
 * the default class's host-path volumes ignore fsGroup, so non-root databases could not write).
 */
export async function provisionVolumes(
  client: KubeClient,
  platform: OntoPlatform,
  /** The real node a claim's volume is on (default: the first real node). */
  nodeOf?: (claim: string) => string | undefined,
): Promise<void> {
  const { namespace } = platform.metadata;
  const spec = resolveSpec(platform.spec);
  const objects = renderPlatform({
    platform: { name: platform.metadata.name, namespace, uid: "00000000-0000-0000-0000-000000000000" },
    spec,
    release: LOCAL_CATALOG.releaseFor(spec.version),
    releaseOf: (v) => LOCAL_CATALOG.releaseFor(v),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "x".repeat(length),
  });
  const claims = claimsOfRendered(objects, namespace, REAL_NODE_SELECTOR, realNodes()[0] ?? "").map((c) => {
    const node = c.realNode ? nodeOf?.(c.name) : undefined;
    return node ? { ...c, realNode: node } : c;
  });
  await ensureLocalVolumes(client, clusterStateDir(), claims);
}

/**
 * Removes the namespace's local volumes and their folders, once no pod writes into them: the
 * workloads are deleted first and their pods waited for (a MinIO member still writing made the
 * folder's removal fail with ENOTEMPTY).
 */
export async function removeVolumes(client: KubeClient, namespace: string): Promise<void> {
  for (const kind of ["statefulsets", "deployments", "jobs"])
    await kubectl(["delete", kind, "--all", "-n", namespace, "--wait=false"]);
  await kubectl(["delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force", "--wait=false"]);
  await eventually(
    `no pod left in ${namespace}`,
    async () => ((await coreApi().listNamespacedPod({ namespace })).items.length === 0 ? true : undefined),
    120_000,
    1_000,
  ).catch((err: unknown) => console.log(`[volumes] ${String(err)}: removing the folders anyway`));
  await deleteLocalVolumes(client, clusterStateDir(), namespace);
}

/**
 * The platform of samples/real.yaml in a namespace of its own, on local volumes, with the test
 * releases applied and the operator running in-process for that namespace; resolves once it is
 * Running.
 */
export async function startRealPlatform(
  prefix: string,
  opts: {
    customize?: (platform: OntoPlatform) => void;
    /** Runs in the namespace before the platform is applied (a user's own Secrets). */
    prepare?: (client: KubeClient, namespace: string) => Promise<void>;
    /** The real node a claim's volume is on (default: the first real node). */
    volumeNode?: (claim: string) => string | undefined;
    timeoutMs?: number;
  } = {},
): Promise<RealPlatform & { platform: OntoPlatform }> {
  const client = adminClient();
  await installCrd(client);
  await applyReleases(client, LOCAL_RELEASES_FILE);
  const namespace = await createTestNamespace(prefix);
  const operator = await startOperator([namespace]);
  const platform = loadSample("real.yaml", namespace);
  platform.spec.global = { ...platform.spec.global, storageClass: LOCAL_STORAGE_CLASS };
  opts.customize?.(platform);
  await opts.prepare?.(client, namespace);
  await provisionVolumes(client, platform, opts.volumeNode);
  await client.apply(platform);
  await waitForPhase(client, namespace, platform.metadata.name, "Running", opts.timeoutMs ?? 420_000);
  return { client, namespace, name: platform.metadata.name, operator, platform };
}

export async function waitRunningPlatform(p: RealPlatform, timeoutMs = 420_000): Promise<void> {
  await waitForPhase(p.client, p.namespace, p.name, "Running", timeoutMs);
}

export async function podsOf(namespace: string, component: string): Promise<k8s.V1Pod[]> {
  const list = await coreApi().listNamespacedPod({
    namespace,
    labelSelector: `app.kubernetes.io/name=${component}`,
  });
  return list.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
}

export function isReady(pod: k8s.V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** The pod, once a pod of that name other than `notUid` is Running and Ready. */
export async function waitPodReady(
  namespace: string,
  name: string,
  notUid?: string,
  timeoutMs = 240_000,
): Promise<k8s.V1Pod> {
  return eventually(
    `pod ${namespace}/${name} Ready${notUid ? " (a new one)" : ""}`,
    async () => {
      const pod = await coreApi().readNamespacedPod({ namespace, name });
      if (notUid && pod.metadata?.uid === notUid) return undefined;
      return isReady(pod) && pod.status?.podIP ? pod : undefined;
    },
    timeoutMs,
    500,
  );
}

export async function podIP(namespace: string, name: string): Promise<string> {
  const pod = await coreApi().readNamespacedPod({ namespace, name });
  const ip = pod.status?.podIP;
  if (!ip) throw new Error(`pod ${namespace}/${name} has no address yet`);
  return ip;
}

export async function secretValue(namespace: string, name: string, key: string): Promise<string> {
  const secret = await coreApi().readNamespacedSecret({ namespace, name });
  const value = secret.data?.[key];
  if (value === undefined) throw new Error(`Secret ${namespace}/${name} has no key ${key}`);
  return Buffer.from(value, "base64").toString("utf8");
}

/** Deletes a pod by name; resolves with the UID it had, so a wait can tell its replacement apart. */
export async function deletePod(
  namespace: string,
  name: string,
  gracePeriodSeconds?: number,
): Promise<string> {
  const pod = await coreApi().readNamespacedPod({ namespace, name });
  await coreApi().deleteNamespacedPod({
    namespace,
    name,
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
  });
  return pod.metadata?.uid ?? "";
}

// ---------------------------------------------------------------- containers on the node

/** Runs `ctr tasks <args>` against the real node's containerd; resolves to its output. */
function ctrTasks(args: string[]): string {
  const runtime = realNodeRuntimes(clusterStateDir())[0];
  if (!runtime) throw new Error("no real node runtime");
  return execFileSync(
    join(runtime.containerdDir, "ctr"),
    ["--address", runtime.address, "-n", "k8s.io", "tasks", ...args],
    { encoding: "utf8", stdio: "pipe" },
  );
}

/** The ID of the pod's container the status shows running (`container`, or any), if one is. */
async function runningContainerId(
  namespace: string,
  pod: string,
  container?: string,
): Promise<string | undefined> {
  const statuses =
    (await coreApi().readNamespacedPod({ namespace, name: pod })).status?.containerStatuses ?? [];
  const status = statuses.find((s) => (container === undefined || s.name === container) && s.state?.running);
  return status?.containerID?.replace(/^containerd:\/\//, "");
}

/**
 * Runs `ctr tasks <verb> [args] <id>` on the container the pod's status shows running, other than
 * `notId` (one killed before whose restart the status may not show yet); resolves to its ID.
 */
async function onRunningContainer(
  namespace: string,
  pod: string,
  container: string,
  verb: string[],
  notId?: string,
): Promise<string> {
  return eventually(
    `a running ${container} container of ${namespace}/${pod}`,
    async () => {
      const id = await runningContainerId(namespace, pod, container);
      if (!id || id === notId) return undefined;
      try {
        ctrTasks([...verb, id]);
      } catch (err) {
        // Exited between the status read and the command: look again.
        if (/no running task found|not found/.test(String((err as { stderr?: unknown }).stderr ?? err)))
          return undefined;
        throw err;
      }
      return id;
    },
    60_000,
    200,
  );
}

/**
 * Kills a container with SIGKILL through the node's containerd (what a crash of the node or the
 * kernel's OOM killer does to it): no signal handler, no graceful shutdown. Resolves to the ID
 * killed; `notId`: a container killed before, whose restart the pod's status may not show yet.
 */
export async function killContainer(
  namespace: string,
  pod: string,
  container: string,
  notId?: string,
): Promise<string> {
  return onRunningContainer(namespace, pod, container, ["kill", "-s", "SIGKILL"], notId);
}

/**
 * Freezes every process of a container (the cgroup freezer, through containerd): it neither
 * answers nor sends, as a member on a stalled host. Resolves to the ID for resumeContainer.
 */
export async function pauseContainer(namespace: string, pod: string, container: string): Promise<string> {
  return onRunningContainer(namespace, pod, container, ["pause"]);
}

export function resumeContainer(id: string): void {
  ctrTasks(["resume", id]);
}

/** The process of the pod's sandbox (its pause process), which holds the pod's network namespace. */
async function sandboxPid(namespace: string, pod: string): Promise<number> {
  const id = await runningContainerId(namespace, pod);
  if (!id) throw new Error(`${namespace}/${pod} has no running container`);
  const pid = ctrTasks(["ls"])
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .find(([task]) => task === id)?.[1];
  if (!pid) throw new Error(`no task ${id} on the real node`);
  const net = readlinkSync(`/proc/${pid}/ns/net`);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "pause" &&
        readlinkSync(`/proc/${entry}/ns/net`) === net
      )
        return Number(entry);
    } catch {
      // Exited while being looked at.
    }
  }
  throw new Error(`no pause process shares the network of ${namespace}/${pod}`);
}

/** The rules that drop every packet in and out of a pod's interface (loopback stays). */
const CUT_RULES = [
  ["INPUT", "-i", "eth0", "-j", "DROP"],
  ["OUTPUT", "-o", "eth0", "-j", "DROP"],
];

/**
 * Cuts a pod off the network, as a partition would: every packet in and out of its interface is
 * dropped, in its own network namespace (the pod's containers restart inside it; exec and probes,
 * which do not use the network, go on). Resolves to a function that removes the cut, which does
 * nothing once the pod (its sandbox) is gone.
 */
export async function cutPodNetwork(namespace: string, pod: string): Promise<() => void> {
  const pid = await sandboxPid(namespace, pod);
  const iptables = (op: string, rule: string[]): void => {
    execFileSync("nsenter", [`--net=/proc/${pid}/ns/net`, "--", "iptables", "-w", op, ...rule], {
      stdio: "pipe",
    });
  };
  for (const rule of CUT_RULES) iptables("-I", rule);
  let healed = false;
  return () => {
    if (healed || !existsSync(`/proc/${pid}/ns/net`)) return;
    healed = true;
    for (const rule of CUT_RULES) iptables("-D", rule);
  };
}

// ---------------------------------------------------------------- port-forward

/** `kubectl port-forward` to a target (e.g. svc/minio) until close(); resolves with the local port. */
export async function portForward(
  namespace: string,
  target: string,
  port: number,
): Promise<{ port: number; close: () => void }> {
  const child = kubectlSpawn(["port-forward", "-n", namespace, target, `:${port}`]);
  const local = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => reject(new Error(`port-forward ${target} exited ${code}: ${out}`)));
  });
  return { port: local, close: () => child.kill() };
}

// ---------------------------------------------------------------- Postgres

export async function postgresPassword(namespace: string): Promise<string> {
  return secretValue(namespace, POSTGRES.secret, POSTGRES.passwordKey);
}

/** How a test client verifies a server that speaks TLS: the CA, and the name the certificate must carry. */
export interface ClientTls {
  ca: string;
  serverName: string;
}

/** Node TLS options that verify the chain against `tls.ca` and the certificate's names against `tls.serverName`. */
export function verifiedTls(tls: ClientTls): ConnectionOptions {
  return {
    ca: tls.ca,
    servername: tls.serverName,
    checkServerIdentity: (_host, cert) => checkServerIdentity(tls.serverName, cert),
  };
}

/**
 * Runs `fn` with a pg client connected to `host` as the platform's user; closes it after. With
 * `tls`, over verified TLS; without, in plaintext.
 */
export async function withPostgres<T>(
  host: string,
  password: string,
  fn: (client: pg.Client) => Promise<T>,
  port = POSTGRES.port,
  tls?: ClientTls,
): Promise<T> {
  const client = new pg.Client({
    host,
    port,
    user: POSTGRES.user,
    database: POSTGRES.database,
    password,
    connectionTimeoutMillis: 5_000,
    statement_timeout: 30_000,
    ssl: tls ? verifiedTls(tls) : false,
  });
  // An error event after a server restart must not crash the test process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function query<R extends pg.QueryResultRow>(
  host: string,
  password: string,
  sql: string,
  values: unknown[] = [],
  tls?: ClientTls,
): Promise<R[]> {
  return withPostgres(host, password, async (c) => (await c.query<R>(sql, values)).rows, POSTGRES.port, tls);
}

/** Application names of the standbys streaming from the primary at `host`. */
export async function streamingStandbys(host: string, password: string): Promise<string[]> {
  const rows = await query<{ application_name: string; client_addr: string }>(
    host,
    password,
    "SELECT application_name, host(client_addr) AS client_addr FROM pg_stat_replication WHERE state = 'streaming'",
  );
  return rows.map((r) => r.client_addr).sort();
}

// ---------------------------------------------------------------- Redis

export async function redisPassword(namespace: string): Promise<string> {
  return secretValue(namespace, REDIS.secret, REDIS.passwordKey);
}

/**
 * The lines a Redis member's start script printed about its decisions: the primary it chose, the
 * failovers it asked for when the Sentinels still named it, and moves to the primary they name
 * (src/render/infrastructure/redis.ts writes them).
 */
export async function redisStartDecisions(namespace: string, member: string): Promise<string[]> {
  const log = (await kubectl(["logs", "-n", namespace, member, "-c", "redis"])).stdout;
  return log.split("\n").filter((l) => /^(before the last stop: |primary:|named primary|following )/.test(l));
}

/** Pod addresses of the Redis members by the name the Sentinels announce (`redis-0.redis-headless.<ns>.svc`). */
export async function redisAddresses(namespace: string): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for (const pod of await podsOf(namespace, "redis")) {
    const name = pod.metadata?.name ?? "";
    if (pod.status?.podIP) map.set(`${name}.redis-headless.${namespace}.svc`, pod.status.podIP);
  }
  return map;
}

/**
 * A client that finds the primary through the Sentinels, as the platform's services do. The
 * Sentinels announce cluster DNS names, which the host cannot resolve: natMap turns each into the
 * pod's address (looked up again on every reconnect, as pods come back with new addresses).
 */
export function sentinelClient(
  namespace: string,
  password: string,
  addresses: () => Map<string, string>,
): Redis {
  const sentinels = [...addresses().values()].map((host) => ({ host, port: REDIS.sentinelPort }));
  const client = new Redis({
    sentinels,
    name: REDIS.masterName,
    password,
    updateSentinels: false,
    sentinelMaxConnections: 3,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 3,
    sentinelRetryStrategy: (times) => Math.min(times * 200, 2_000),
    natMap: (key: string) => {
      const [host, port] = key.split(":");
      const ip = addresses().get(host ?? "");
      return ip ? { host: ip, port: Number(port) } : null;
    },
  });
  client.on("error", () => undefined);
  return client;
}

/** A client to one Redis member (server or Sentinel port), over verified TLS with `tls`; the caller quits it. */
export function memberClient(host: string, port: number, password?: string, tls?: ClientTls): Redis {
  const client = new Redis({
    host,
    port,
    ...(password ? { password } : {}),
    ...(tls ? { tls: verifiedTls(tls) } : {}),
    connectTimeout: 3_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  client.on("error", () => undefined);
  return client;
}

export async function withMember<T>(
  host: string,
  port: number,
  password: string | undefined,
  fn: (client: Redis) => Promise<T>,
  tls?: ClientTls,
): Promise<T> {
  const client = memberClient(host, port, password, tls);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

/** `INFO replication` of one member as key/value pairs. */
export async function replicationInfo(host: string, password: string): Promise<Record<string, string>> {
  return withMember(host, REDIS.port, password, async (c) => {
    const text = await c.info("replication");
    return Object.fromEntries(
      text
        .split("\r\n")
        .filter((l) => l.includes(":"))
        .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1)]),
    );
  });
}

/** What one Sentinel says of the primary: its announced name and the config epoch. */
export async function sentinelView(
  host: string,
): Promise<{ primary: string; epoch: number; replicas: number; sentinels: number }> {
  return withMember(host, REDIS.sentinelPort, undefined, async (c) => {
    const raw = (await c.call("SENTINEL", "MASTER", REDIS.masterName)) as string[];
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) fields[raw[i] ?? ""] = raw[i + 1] ?? "";
    return {
      primary: fields.ip ?? "",
      epoch: Number(fields["config-epoch"] ?? -1),
      replicas: Number(fields["num-slaves"] ?? 0),
      sentinels: Number(fields["num-other-sentinels"] ?? 0) + 1,
    };
  });
}

/** One Sentinel's failover-relevant fields: the primary's flags and state, each replica's flags and priority. */
export async function sentinelDetail(host: string): Promise<string> {
  return withMember(host, REDIS.sentinelPort, undefined, async (c) => {
    const fieldsOf = (raw: string[]): Record<string, string> => {
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < raw.length; i += 2) fields[raw[i] ?? ""] = raw[i + 1] ?? "";
      return fields;
    };
    const m = fieldsOf((await c.call("SENTINEL", "MASTER", REDIS.masterName)) as string[]);
    const replicas = ((await c.call("SENTINEL", "REPLICAS", REDIS.masterName)) as string[][]).map(fieldsOf);
    const sentinels = ((await c.call("SENTINEL", "SENTINELS", REDIS.masterName)) as string[][]).map(fieldsOf);
    return [
      `primary ${m.ip ?? "?"} flags ${m.flags ?? "?"} failover-state ${m["failover-state"] ?? "none"} quorum ${m.quorum ?? "?"}`,
      ...replicas.map(
        (r) =>
          `replica ${r.ip ?? "?"} flags ${r.flags ?? "?"} priority ${r["slave-priority"] ?? "?"} link ${r["master-link-status"] ?? "?"} down-since ${r["master-link-down-time"] ?? "?"} ms`,
      ),
      ...sentinels.map((x) => `peer Sentinel ${x.ip ?? "?"} flags ${x.flags ?? "?"}`),
    ].join("; ");
  });
}

// ---------------------------------------------------------------- MinIO

export async function minioClient(
  namespace: string,
  host: string,
  port: number = MINIO.port,
  /** HTTPS, verified against `ca` for `serverName` (the host is an address the certificate does not name). */
  tls?: ClientTls,
): Promise<Minio.Client> {
  return new Minio.Client({
    endPoint: host,
    port,
    useSSL: tls !== undefined,
    ...(tls
      ? {
          transportAgent: new https.Agent(verifiedTls(tls)),
        }
      : {}),
    accessKey: await secretValue(namespace, MINIO.secret, MINIO.userKey),
    secretKey: await secretValue(namespace, MINIO.secret, MINIO.passwordKey),
  });
}

export async function readObject(client: Minio.Client, bucket: string, key: string): Promise<string> {
  const stream = await client.getObject(bucket, key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A value no earlier run wrote. */
export function uniqueValue(label: string): string {
  return `${label}-${randomUUID()}`;
}
