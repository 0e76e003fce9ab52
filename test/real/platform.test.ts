// The platform of samples/real.yaml on the real node, reconciled by the operator (in-process,
// under its generated RBAC), with the real programs: Postgres streams to two standbys and survives
// the loss of any pod and a clone killed half-way; Redis Sentinel fails over and keeps every
// WAIT-acknowledged write through a cold restart; distributed MinIO (4 pods on the one real node:
// still 4 drives in 4 pods) keeps objects through a pod's loss; the stand-in platform services are
// Ready only through the wiring the operator rendered. Then the platform is upgraded between the
// two test releases (canary and partition as on KWOK) while clients write to Postgres, Redis and
// MinIO and a member of each is killed during its roll (the Postgres primary, the Redis primary, a
// MinIO member): no acknowledged write lost, the data readable on every member. Last, it is
// deleted under retentionPolicy.secrets Retain and created again: same data, same credentials.
//
// One platform for the whole file, in this order: the failure tests leave it Running for the next.
// Clients connect from the host to pod addresses (the host routes to pods; ClusterIPs work from
// pods only), or from a pod on the node where a Service is what is tested.
import { statefulSetPartition, type StatefulSetUpdateView } from "../../src/controllers/shared/kube-views.js";
import type * as k8s from "@kubernetes/client-node";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  IMAGE_REFS,
  TEST_RELEASE_IMAGES,
  UPGRADE_RELEASE_IMAGES,
  VARIANT_FILE,
} from "../../src/localcluster/images/index.js";
import { POSTGRES, REDIS } from "../../src/render/endpoints.js";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import { NAME_LABEL, PLATFORM_REF } from "../../src/api/index.js";
import { auditLines, setVersion } from "../cluster/upgrade-support.js";
import {
  deletePod,
  isReady,
  killContainer,
  minioClient,
  podIP,
  podsOf,
  portForward,
  postgresPassword,
  query,
  readObject,
  redisAddresses,
  redisPassword,
  redisStartDecisions,
  removeVolumes,
  replicationInfo,
  sentinelClient,
  sentinelView,
  startRealPlatform,
  streamingStandbys,
  uniqueValue,
  waitPodReady,
  withMember,
  withPostgres,
  type RealPlatform,
} from "./platform-support.js";
import { cacheBehindPasses, postgresDiagnosis, sentinelDiagnosis, standinDiagnosis } from "./diagnosis.js";
import { Sampler, gapIn, lostWrites, startWriter, useHaPlatform, writerLog } from "./postgres-ha-support.js";
import type { LoopFigures } from "../support/write-loop.js";
import { MinioWriteLoop, RedisWriteLoop } from "./write-loops.js";
import {
  coreApi,
  createPod,
  execIn,
  kubectl,
  loadImages,
  onRealNode,
  realNodes,
  waitRunning,
} from "./support.js";

let p: RealPlatform;
let ns = "";
let pgPassword = "";
let redisPass = "";
/** Rows written to Postgres, read again after the upgrade and after the platform is re-created. */
const marks: string[] = [];
/** Redis keys acknowledged by WAIT, with their values. */
const redisKeys = new Map<string, string>();
/** Objects put into MinIO. */
const objects: { bucket: string; key: string; value: string }[] = [];
const timeline: Record<string, number> = {};
const started = Date.now();

function lap(label: string, since: number): void {
  timeline[label] = Math.round((Date.now() - since) / 100) / 10;
}

const PG_MEMBERS = ["postgres-0", "postgres-1", "postgres-2"];
const REDIS_MEMBERS = ["redis-0", "redis-1", "redis-2"];
const MINIO_MEMBERS = ["minio-0", "minio-1", "minio-2", "minio-3"];

beforeAll(async () => {
  realNodes();
  const t = Date.now();
  await loadImages([...TEST_RELEASE_IMAGES, ...UPGRADE_RELEASE_IMAGES]);
  lap("images loaded", t);
  const up = Date.now();
  p = await startRealPlatform("real-platform", {
    customize: (platform) => {
      // Short soak: the canary still has to become healthy and stay so; the test waits for it.
      platform.spec.upgradeStrategy = { soakSeconds: 5, healthTimeoutSeconds: 300 };
    },
  });
  ns = p.namespace;
  lap("platform Running", up);
  pgPassword = await postgresPassword(ns);
  redisPass = await redisPassword(ns);
}, 900_000);

afterAll(async () => {
  console.log(
    `[real-platform] seconds per step: ${JSON.stringify(timeline)}; file ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  if (p)
    console.log(
      `[real-platform] HA passes that decided from the status written (cache behind): ${cacheBehindPasses(p)}`,
    );
  await kubectl(["uncordon", realNodes()[0] ?? ""]);
  await p?.operator.stop();
  if (p) await removeVolumes(p.client, ns);
});

// ---------------------------------------------------------------- Postgres

/**
 * The member that is the primary: the one status.postgres names, once it answers as the primary
 * (which member it is moves with failovers, an upgrade's roll included).
 */
async function primaryMember(): Promise<string> {
  return eventually(
    "a primary named in status.postgres and answering as one",
    async () => {
      const named = (await readPlatform(p.client, ns, p.name)).status?.postgres?.currentPrimary;
      if (!named || !PG_MEMBERS.includes(named)) return undefined;
      const rows = await query<{ r: boolean }>(
        await podIP(ns, named),
        pgPassword,
        "SELECT pg_is_in_recovery() AS r",
      ).catch(() => []);
      return rows[0]?.r === false ? named : undefined;
    },
    180_000,
    1000,
  );
}

/** The members other than the primary named, in ordinal order. */
function standbysOf(primary: string): string[] {
  return PG_MEMBERS.filter((m) => m !== primary);
}

function pgDiagnosis(): Promise<string> {
  return postgresDiagnosis(p.client, ns, p.name, pgPassword);
}

async function ensureMarksTable(): Promise<void> {
  await query(
    await podIP(ns, await primaryMember()),
    pgPassword,
    "CREATE TABLE IF NOT EXISTS marks (id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())",
  );
}

async function writeMark(label: string): Promise<string> {
  const id = uniqueValue(label);
  await query(await podIP(ns, await primaryMember()), pgPassword, "INSERT INTO marks (id) VALUES ($1)", [id]);
  marks.push(id);
  return id;
}

async function hasMark(host: string, id: string): Promise<boolean> {
  const rows = await query<{ n: string }>(host, pgPassword, "SELECT count(*) AS n FROM marks WHERE id = $1", [
    id,
  ]);
  return rows[0]?.n === "1";
}

async function waitMarkOn(name: string, id: string): Promise<void> {
  await eventually(
    `${id} on ${name}`,
    async () => ((await hasMark(await podIP(ns, name), id)) ? true : undefined),
    120_000,
    500,
  );
}

/** Waits until the two members that are not the primary stream from it; resolves to the primary. */
async function waitTwoStreaming(): Promise<string> {
  let primary = "";
  await eventually(
    "both standbys streaming from the primary",
    async () => {
      primary = await primaryMember();
      const streaming = await streamingStandbys(await podIP(ns, primary), pgPassword);
      const wanted = (await Promise.all(standbysOf(primary).map((m) => podIP(ns, m)))).sort();
      return JSON.stringify(streaming) === JSON.stringify(wanted) ? true : undefined;
    },
    180_000,
    1000,
  );
  return primary;
}

describe("Postgres on the real node", () => {
  it("streams to two standbys; a row written on the primary is read on each standby and through postgres-ro", async () => {
    const primary = await waitTwoStreaming();
    if (primary !== "postgres-0")
      // Not an error by itself (the operator fails over whenever the primary is lost), but on a
      // platform just created it says something went wrong during its first start.
      console.log(`[real-platform] the primary after the first start is ${primary}\n${await pgDiagnosis()}`);
    await ensureMarksTable();
    const mark = await writeMark("first-row");
    for (const name of standbysOf(primary)) {
      await waitMarkOn(name, mark);
      const rows = await query<{ r: boolean }>(
        await podIP(ns, name),
        pgPassword,
        "SELECT pg_is_in_recovery() AS r",
      );
      if (rows[0]?.r !== true)
        expect.fail(`${name} answers as a primary beside ${primary}\n${await pgDiagnosis()}`);
    }

    // postgres-ro through its ClusterIP, from a pod on the node (kube-proxy picks a member per
    // connection): every answer has the row, and comes from a member.
    await createPod(
      ns,
      "psql-client",
      onRealNode({
        containers: [
          {
            name: "psql",
            image: IMAGE_REFS.postgres,
            imagePullPolicy: "Never",
            command: ["sleep", "3600"],
            env: [
              {
                name: "PGPASSWORD",
                valueFrom: { secretKeyRef: { name: POSTGRES.secret, key: POSTGRES.passwordKey } },
              },
            ],
          },
        ],
        terminationGracePeriodSeconds: 0,
      }),
    );
    await waitRunning(ns, "psql-client");
    const members = new Set(await Promise.all(PG_MEMBERS.map((m) => podIP(ns, m))));
    const servers = new Set<string>();
    // A connection refused or unrouted (postgres-ro has no endpoint while no standby is Ready, as
    // when a busy node times their probes out) is tried again; every answer must have the row.
    const refused: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await eventually(
        "an answer through postgres-ro",
        async () => {
          const run = await execIn(ns, "psql-client", [
            "psql",
            "-h",
            POSTGRES.readOnlyService,
            "-U",
            POSTGRES.user,
            "-d",
            POSTGRES.database,
            "-Atc",
            `SELECT host(inet_server_addr()) || ' ' || EXISTS (SELECT 1 FROM marks WHERE id = '${mark}')`,
          ]);
          if (run.code === 0) return run;
          refused.push(run.stderr.trim().split("\n")[0] ?? "");
          throw new Error(run.stderr);
        },
        120_000,
        2_000,
      );
      const [server, found] = res.stdout.trim().split(" ");
      // A boolean concatenated to text reads "true" or "false".
      expect(found).toBe("true");
      expect(members.has(server ?? "")).toBe(true);
      servers.add(server ?? "");
    }
    console.log(
      `[real-platform] postgres-ro answered from ${servers.size} member(s) in 8 connections; ${refused.length} tried again${refused.length ? `: ${refused.join(" | ")}` : ""}`,
    );
  });

  it("a standby pod deleted comes back streaming, with what was written while it was gone", async () => {
    const t = Date.now();
    const standby = standbysOf(await waitTwoStreaming())[0] ?? "";
    const uid = await deletePod(ns, standby);
    const mark = await writeMark("while-standby-gone");
    await waitPodReady(ns, standby, uid);
    await waitTwoStreaming();
    await waitMarkOn(standby, mark);
    lap("standby back streaming", t);
  });

  // The primary's pod deleted means a failover now: test/real/postgres-ha.test.ts.

  it("a standby whose clone is killed half-way clones again and streams", async () => {
    const t = Date.now();
    const primaryName = await waitTwoStreaming();
    const primary = await podIP(ns, primaryName);
    const standby = standbysOf(primaryName).at(-1) ?? "";
    // Enough data that cloning takes seconds, so the kill lands in the middle of it.
    // A few hundred megabytes: on a loaded machine this takes longer than the helper's 30 s limit.
    await withPostgres(primary, pgPassword, async (c) => {
      await c.query("SET statement_timeout = '300s'");
      await c.query(
        "CREATE TABLE IF NOT EXISTS filler AS SELECT g AS id, repeat(md5(g::text), 24) AS pad FROM generate_series(1, 300000) g",
      );
    });
    const mark = await writeMark("before-reclone");
    const total = Number(
      (
        await query<{ size: string }>(
          primary,
          pgPassword,
          "SELECT sum(pg_database_size(datname)) AS size FROM pg_database",
        )
      )[0]?.size,
    );
    const restartsBefore =
      (await coreApi().readNamespacedPod({ namespace: ns, name: standby })).status?.containerStatuses?.[0]
        ?.restartCount ?? 0;
    // The standby loses its data directory (a disk replaced, a volume wiped): on its next start it
    // clones. Moved away in one step, not removed file by file under the running server (which
    // goes on in the moved directory until the kill), and checked: a start on the intact
    // directory clones nothing (in a CI run whose removal's result was not read, the test then
    // waited 180 s for a clone it never saw).
    await eventually(
      `${standby}'s data directory moved away`,
      async () => {
        const moved = await execIn(ns, standby, [
          "sh",
          "-c",
          "cd /var/lib/postgresql/data && { [ ! -e pgdata ] || mv pgdata pgdata.lost; } && [ ! -e pgdata ]",
        ]);
        return moved.code === 0 ? true : undefined;
      },
      60_000,
      1_000,
    );
    const first = await killContainer(ns, standby, "postgres");
    const caught = await withPostgres(primary, pgPassword, async (c) =>
      eventually(
        "the standby's clone half-way",
        async () => {
          const row = (
            await c.query<{ phase: string; streamed: string }>(
              "SELECT phase, backup_streamed AS streamed FROM pg_stat_progress_basebackup",
            )
          ).rows[0];
          const streamed = Number(row?.streamed ?? 0);
          return row?.phase === "streaming database files" && streamed > 8 << 20 && streamed < total * 0.6
            ? streamed
            : undefined;
        },
        180_000,
        20,
      ),
    );
    await killContainer(ns, standby, "postgres", first);
    console.log(
      `[real-platform] clone killed at ${(caught / 2 ** 20).toFixed(0)} MiB of ${(total / 2 ** 20).toFixed(0)} MiB`,
    );
    const pod = await eventually(
      `${standby} Ready again after both kills`,
      async () => {
        const p2 = await coreApi().readNamespacedPod({ namespace: ns, name: standby });
        const restarts = p2.status?.containerStatuses?.[0]?.restartCount ?? 0;
        return restarts >= restartsBefore + 2 && isReady(p2) ? p2 : undefined;
      },
      300_000,
      1000,
    );
    expect(pod.status?.podIP).toBeDefined();
    await waitTwoStreaming();
    await waitMarkOn(standby, mark);
    const leftover = await execIn(ns, standby, ["sh", "-c", "ls /var/lib/postgresql/data"]);
    expect(leftover.stdout.split(/\s+/)).not.toContain("pgdata.clone");
    lap("clone killed half-way, recovered", t);
  });
});

// ---------------------------------------------------------------- Redis

let addresses = new Map<string, string>();
let sentinel: Redis | undefined;

async function refreshAddresses(): Promise<void> {
  addresses = await redisAddresses(ns);
}

async function sentinelsAgree(): Promise<string> {
  await refreshAddresses();
  const views = await Promise.all([...addresses.values()].map((ip) => sentinelView(ip)));
  const primaries = new Set(views.map((v) => v.primary));
  if (views.length !== 3 || primaries.size !== 1)
    throw new Error(`Sentinels disagree: ${JSON.stringify(views)}`);
  for (const v of views) {
    if (v.sentinels !== 3 || v.replicas !== 2)
      throw new Error(`a Sentinel sees too few peers: ${JSON.stringify(v)}`);
  }
  return [...primaries][0] ?? "";
}

/** Writes a key through the Sentinels' primary and waits until both replicas acknowledge it. */
async function writeAcknowledged(client: Redis, label: string): Promise<void> {
  const key = uniqueValue(label);
  const value = uniqueValue("v");
  await client.set(key, value);
  const acks = Number(await client.call("WAIT", "2", "5000"));
  if (acks === 2) redisKeys.set(key, value);
  else throw new Error(`WAIT acknowledged ${acks} of 2 replicas`);
}

async function memberRole(name: string): Promise<string> {
  const ip = await podIP(ns, name);
  return (await replicationInfo(ip, redisPass)).role ?? "";
}

describe("Redis Sentinel on the real node", () => {
  it("has three Sentinels that agree on the primary and see both replicas", async () => {
    const primary = await eventually("the Sentinels to agree", sentinelsAgree, 120_000, 1000);
    expect(primary).toMatch(new RegExp(`^redis-\\d\\.redis-headless\\.${ns}\\.svc$`));
    sentinel = sentinelClient(ns, redisPass, () => addresses);
    for (let i = 0; i < 5; i++) await writeAcknowledged(sentinel, "before-failover");
  });

  it("the primary's pod deleted: a replica is promoted, clients find it through the Sentinels, the old primary rejoins as a replica", async () => {
    const t = Date.now();
    const client = sentinel ?? sentinelClient(ns, redisPass, () => addresses);
    const oldPrimary = (await sentinelsAgree()).split(".")[0] ?? "";
    const node = realNodes()[0] ?? "";
    // The node is cordoned while the pod is gone, so it stays gone until the Sentinels have acted
    // (a pod back within down-after-milliseconds would simply still be the primary).
    expect((await kubectl(["cordon", node])).code).toBe(0);
    let uid = "";
    try {
      uid = await deletePod(ns, oldPrimary);
      const promoted = await eventually(
        "a replica promoted by the Sentinels",
        async () => {
          const views = await Promise.all(
            REDIS_MEMBERS.filter((m) => m !== oldPrimary).map(async (m) => sentinelView(await podIP(ns, m))),
          );
          const primaries = new Set(views.map((v) => v.primary));
          const [only] = [...primaries];
          return primaries.size === 1 && only && !only.startsWith(`${oldPrimary}.`) ? only : undefined;
        },
        120_000,
        500,
      ).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${await sentinelDiagnosis(ns)}`);
      });
      lap("replica promoted", t);
      const promotedPod = promoted.split(".")[0] ?? "";
      expect(await memberRole(promotedPod)).toBe("master");
      // The client asks the Sentinels again and writes to the new primary (one replica is left).
      await eventually(
        "a write through the Sentinels",
        async () => {
          const key = uniqueValue("during-failover");
          await client.set(key, "x");
          const acks = Number(await client.call("WAIT", "1", "5000"));
          return acks >= 1 ? true : undefined;
        },
        60_000,
        1000,
      );
    } finally {
      await kubectl(["uncordon", node]);
    }
    await waitPodReady(ns, oldPrimary, uid);
    await refreshAddresses();
    await eventually(
      `${oldPrimary} a replica in sync`,
      async () => {
        const info = await replicationInfo(await podIP(ns, oldPrimary), redisPass);
        return info.role === "slave" && info.master_link_status === "up" ? true : undefined;
      },
      120_000,
      1000,
    );
    await eventually("the Sentinels to agree again", sentinelsAgree, 120_000, 1000);
    for (let i = 0; i < 5; i++) await writeAcknowledged(client, "after-failover");
    for (const [key, value] of redisKeys) {
      expect(await withMember(await podIP(ns, oldPrimary), REDIS.port, redisPass, (c) => c.get(key))).toBe(
        value,
      );
    }
    lap("failover and rejoin", t);
  });

  it("all pods deleted at once: no WAIT-acknowledged write is lost", async () => {
    const t = Date.now();
    const client = sentinel ?? sentinelClient(ns, redisPass, () => addresses);
    for (let i = 0; i < 50; i++) await writeAcknowledged(client, "before-cold-restart");
    const uids = await Promise.all(REDIS_MEMBERS.map((m) => deletePod(ns, m)));
    for (const [i, m] of REDIS_MEMBERS.entries()) await waitPodReady(ns, m, uids[i], 300_000);
    const primary = await eventually(
      "the Sentinels to agree after the cold restart",
      sentinelsAgree,
      180_000,
      1000,
    );
    const primaryIP = await podIP(ns, primary.split(".")[0] ?? "");
    const missing: string[] = [];
    await withMember(primaryIP, REDIS.port, redisPass, async (c) => {
      for (const [key, value] of redisKeys) if ((await c.get(key)) !== value) missing.push(key);
    });
    expect(missing, `${missing.length} of ${redisKeys.size} acknowledged keys lost`).toEqual([]);
    lap("cold restart", t);
  });
});

// ---------------------------------------------------------------- MinIO

describe("MinIO on the real node", () => {
  it("runs distributed over 4 pods (on the one real node: 4 drives in 4 pods), with the spec's buckets made by the Job", async () => {
    const pods = await podsOf(ns, "minio");
    expect(pods.map((pod) => pod.metadata?.name)).toEqual(MINIO_MEMBERS);
    for (const pod of pods) expect(pod.spec?.nodeName).toBe(realNodes()[0]);
    const info = await execIn(ns, "minio-0", [
      "sh",
      "-c",
      'mc alias set local http://127.0.0.1:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" >/dev/null && mc admin info local --json',
    ]);
    expect(info.code, info.stderr).toBe(0);
    const parsed = JSON.parse(info.stdout) as {
      info?: { servers?: { state: string; drives?: { state: string }[] }[] };
    };
    const servers = parsed.info?.servers ?? [];
    expect(servers).toHaveLength(4);
    for (const server of servers) {
      expect(server.state).toBe("online");
      expect(server.drives?.map((d) => d.state)).toEqual(["ok"]);
    }
    // The Job's name carries a hash of what it does (render/job.ts): found by its app name.
    const job = await kubectl([
      "get",
      "job",
      "-n",
      ns,
      "-l",
      `${NAME_LABEL}=minio-buckets`,
      "-o",
      "jsonpath={.items[*].status.succeeded}",
    ]);
    expect(job.stdout).toBe("1");
    const client = await minioClient(ns, await podIP(ns, "minio-1"));
    const buckets = (await client.listBuckets()).map((b) => b.name).sort();
    expect(buckets).toEqual(expect.arrayContaining(["onto-data", "onto-iceberg"]));
  });

  it("an object put through the Service is read back while a pod is gone and after it is back", async () => {
    const forward = await portForward(ns, "svc/minio", 9000);
    const value = uniqueValue("object");
    try {
      const client = await minioClient(ns, "127.0.0.1", forward.port);
      await client.putObject("onto-data", "real/object.txt", Buffer.from(value));
      objects.push({ bucket: "onto-data", key: "real/object.txt", value });
    } finally {
      forward.close();
    }
    const uid = await deletePod(ns, "minio-2", 0);
    // Erasure coding over 4 drives: 3 still answer.
    const reader = await minioClient(ns, await podIP(ns, "minio-0"));
    expect(await readObject(reader, "onto-data", "real/object.txt")).toBe(value);
    await waitPodReady(ns, "minio-2", uid);
    const back = await minioClient(ns, await podIP(ns, "minio-2"));
    expect(
      await eventually(
        "the object through minio-2",
        () => readObject(back, "onto-data", "real/object.txt"),
        60_000,
        1000,
      ),
    ).toBe(value);
  });
});

// ---------------------------------------------------------------- the stand-in

describe("platform services (the stand-in) on the real node", () => {
  it("are Ready only through the rendered wiring: Postgres, Redis through the Sentinels, MinIO with the generated keys", async () => {
    for (const service of ["auth-service", "data-service"]) {
      const pods = await eventually(
        `${service} Ready`,
        async () => {
          const list = await podsOf(ns, service);
          return list.length > 0 && list.every(isReady) ? list : undefined;
        },
        120_000,
        1000,
      );
      for (const pod of pods) {
        expect(pod.spec?.nodeName).toBe(realNodes()[0]);
        const res = await fetch(`http://${pod.status?.podIP}:8080/metrics`);
        const metrics = await res.text();
        expect(metrics).toMatch(/^standin_ready 1$/m);
        const failing = metrics
          .split("\n")
          .filter((l) => l.startsWith("standin_dependency_failing{") && !l.endsWith(" 0"));
        expect(failing, `${service}: failing dependencies`).toEqual([]);
      }
    }
  });
});

// ---------------------------------------------------------------- upgrade

/** What the platform services' stand-ins say is failing, and the Postgres and Redis they depend on. */
/** The last /readyz answer of each stand-in canary pod seen during the upgrade (a failed canary is gone by the time it is reported). */
const canaryReadyz = new Map<string, string>();

async function sampleCanaries(): Promise<void> {
  const pods = await podsOf(ns, "auth-service")
    .then(async (a) => [...a, ...(await podsOf(ns, "data-service"))])
    .catch(() => []);
  for (const pod of pods) {
    const name = pod.metadata?.name ?? "";
    if (!name.includes("-canary-") || !pod.status?.podIP) continue;
    const text = await fetch(`http://${pod.status.podIP}:8080/readyz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.text())
      .catch((err: unknown) => String(err));
    canaryReadyz.set(name, `${new Date().toISOString()} ${text.trim().split("\n").join(" | ")}`);
  }
}

async function upgradeDiagnosis(): Promise<string> {
  const parts = [
    `--- stand-in canaries' last /readyz during the upgrade:\n${[...canaryReadyz].map(([pod, said]) => `  ${pod}: ${said}`).join("\n") || "  none seen"}`,
    await standinDiagnosis(ns, "auth-service"),
    await standinDiagnosis(ns, "data-service"),
    await pgDiagnosis(),
    await sentinelDiagnosis(ns),
  ];
  return parts.join("\n");
}

/** A write loop's figures, its longest gap placed in seconds after `start` (as the kills are). */
function loopFigures(f: LoopFigures, start: number): string {
  const from = ((f.longestGapFrom - start) / 1000).toFixed(1);
  return `${f.acknowledged} acknowledged, ${f.failed} failed, longest gap ${f.longestGapMs} ms from +${from} s`;
}

/** What was killed during the upgrade, per component: the pod, its build, and when. */
const kills = new Map<string, string>();

function imageOf(pod: k8s.V1Pod, container: string): string | undefined {
  return pod.spec?.containers.find((c) => c.name === container)?.image;
}

/** The Redis member answering as the primary, among the Ready ones. */
async function redisPrimaryPod(): Promise<string | undefined> {
  for (const pod of (await podsOf(ns, "redis")).filter(isReady)) {
    const name = pod.metadata?.name ?? "";
    if ((await memberRole(name).catch(() => "")) === "master") return name;
  }
  return undefined;
}

/**
 * Once a component has a member of the new build Ready (its roll has begun and is not over), kills
 * one member, once per component: the Postgres primary and the Redis primary (their pods deleted,
 * as an eviction does), and a MinIO member still on the old build (deleted with no grace: the
 * kernel kills it at once).
 */
async function killDuringRoll(upgradeStarted: number): Promise<void> {
  const targets: [
    component: string,
    newImage: string,
    pick: () => Promise<string | undefined>,
    grace?: number,
  ][] = [
    [
      "postgres",
      IMAGE_REFS["postgres-2"],
      async () => (await readPlatform(p.client, ns, p.name)).status?.postgres?.currentPrimary,
    ],
    ["redis", IMAGE_REFS["redis-2"], redisPrimaryPod],
    [
      "minio",
      IMAGE_REFS["minio-2"],
      async () =>
        (await podsOf(ns, "minio")).find((pod) => imageOf(pod, "minio") !== IMAGE_REFS["minio-2"])?.metadata
          ?.name ?? "minio-0",
      0,
    ],
  ];
  for (const [component, newImage, pick, grace] of targets) {
    if (kills.has(component)) continue;
    const pods = await podsOf(ns, component);
    if (!pods.some((pod) => isReady(pod) && imageOf(pod, component) === newImage)) continue;
    const victim = await pick();
    if (!victim) continue;
    const victimPod = pods.find((pod) => pod.metadata?.name === victim);
    const build = victimPod ? imageOf(victimPod, component) === newImage : false;
    await deletePod(ns, victim, grace);
    kills.set(
      component,
      `${victim} (${build ? "new" : "old"} build${grace === 0 ? ", no grace" : ""}) at +${((Date.now() - upgradeStarted) / 1000).toFixed(1)} s`,
    );
  }
}

describe("an upgrade of the real-node platform", () => {
  it("1.5.0-local.1 -> 1.5.0-local.2 rolls every member through a canary or a partition with the Postgres primary, the Redis primary and a MinIO member killed on the way; no acknowledged write lost, the data readable on every member", async () => {
    // Writers through the whole upgrade: Postgres through its read-write Service from a pod on the
    // node, Redis through the Sentinels, MinIO through any Ready member; and the one-primary sampler.
    useHaPlatform(p, pgPassword);
    await startWriter();
    const pgSampler = new Sampler();
    const redisLoop = new RedisWriteLoop(ns, redisPass).start();
    const minioLoop = new MinioWriteLoop(ns, "onto-data").start();
    // Stopping is idempotent: when the upgrade ends, and again where the figures are read.
    const stopWriters = async (): Promise<[LoopFigures, LoopFigures]> => {
      await pgSampler.stop();
      return [await redisLoop.stop(), await minioLoop.stop()];
    };
    const t = Date.now();
    const partitions = new Map<string, Set<number>>();
    const canaries = new Set<string>();
    let sampling = true;
    const canarySampler = (async () => {
      while (sampling) {
        await sampleCanaries();
        await new Promise((r) => setTimeout(r, 5_000));
      }
    })();
    const sampler = (async () => {
      while (sampling) {
        const [sts, deps] = await Promise.all([
          p.client.list<StatefulSetUpdateView & { metadata?: { name?: string } }>("apps/v1", "StatefulSet", {
            namespace: ns,
          }),
          p.client.list<{ metadata?: { name?: string } }>("apps/v1", "Deployment", { namespace: ns }),
        ]).catch(() => [{ items: [] }, { items: [] }] as const);
        for (const s of sts.items) {
          const set = partitions.get(s.metadata?.name ?? "") ?? new Set<number>();
          // Postgres's members are replaced by the operator (OnDelete): its partition is an annotation.
          set.add(statefulSetPartition(s));
          partitions.set(s.metadata?.name ?? "", set);
        }
        for (const d of deps.items) if (d.metadata?.name?.endsWith("-canary")) canaries.add(d.metadata.name);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const killer = (async () => {
      while (sampling && kills.size < 3) {
        await killDuringRoll(t).catch((err: unknown) =>
          console.log(`[real-platform] kill not made: ${String(err)}`),
        );
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    let upgradeEnd = 0;
    try {
      await setVersion(p.client, ns, p.name, "1.5.0-local.2");
      // Polled here rather than with eventually(): a failed upgrade ends the wait at once.
      const deadline = Date.now() + 900_000;
      for (;;) {
        const platform = await readPlatform(p.client, ns, p.name);
        const u = platform.status?.upgrade;
        if (u?.phase === "Failed" || u?.phase === "ForwardFix")
          throw new Error(`upgrade ${u.phase}: ${JSON.stringify(u.failure)}\n${await upgradeDiagnosis()}`);
        if (
          u?.phase === "Succeeded" &&
          platform.status?.version === "1.5.0-local.2" &&
          platform.status.phase === "Running"
        )
          break;
        if (Date.now() > deadline)
          throw new Error(`upgrade not done: ${JSON.stringify(u)}\n${await upgradeDiagnosis()}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      upgradeEnd = Date.now();
    } finally {
      sampling = false;
      await sampler;
      await canarySampler;
      await killer;
      await stopWriters();
    }
    lap("upgrade", t);
    console.log(`[real-platform] killed during the upgrade: ${JSON.stringify(Object.fromEntries(kills))}`);
    // How each Redis member last started: the primary it chose, and the failovers it asked for
    // when the Sentinels still named it, and a move to the primary they name since
    // (docs/operations/infrastructure.md, Redis with Sentinel).
    for (const member of REDIS_MEMBERS) {
      const decisions = await redisStartDecisions(ns, member);
      console.log(`[real-platform] ${member} started: ${decisions.join(" | ")}`);
    }
    expect([...kills.keys()].sort(), "a member of each killed during its roll").toEqual([
      "minio",
      "postgres",
      "redis",
    ]);
    const steps = auditLines(p.operator.auditLog).filter((l) => l.actor === "upgrade");
    console.log(
      `[real-platform] upgrade audit: ${steps.map((l) => `${l.reason}:${l.object.name}`).join(", ")}`,
    );
    // StatefulSets rolled through a partition (the canary is the highest ordinal), Deployments through a -canary.
    for (const name of ["postgres", "redis", "minio"]) {
      expect(
        [...(partitions.get(name) ?? [])].some((n) => n > 0),
        `${name} partitioned`,
      ).toBe(true);
    }
    for (const name of ["auth-service", "data-service"])
      expect(canaries.has(`${name}-canary`), `${name}-canary`).toBe(true);

    // Every member runs the second release's build.
    for (const [component, members, ref] of [
      ["postgres", PG_MEMBERS, IMAGE_REFS["postgres-2"]],
      ["redis", REDIS_MEMBERS, IMAGE_REFS["redis-2"]],
      ["minio", MINIO_MEMBERS, IMAGE_REFS["minio-2"]],
    ] as const) {
      for (const member of members) {
        const pod = await coreApi().readNamespacedPod({ namespace: ns, name: member });
        expect(imageOf(pod, component)).toBe(ref);
        const variant = await execIn(ns, member, ["cat", VARIANT_FILE]);
        expect(variant.stdout.trim(), `${member} runs the second build`).toBe("2");
      }
    }
    for (const service of ["auth-service", "data-service"] as const) {
      const pods = await podsOf(ns, service);
      expect(pods.length).toBeGreaterThan(0);
      for (const pod of pods) {
        expect(pod.spec?.containers[0]?.image).toBe(IMAGE_REFS[`${service}-2`]);
        expect(isReady(pod)).toBe(true);
      }
    }

    // Every write acknowledged during the upgrade is there: Postgres's on the primary (the kill was
    // an eviction: its WAL reached the standbys), Redis's on every member once in sync, MinIO's
    // through every member.
    const [redisFigures, minioFigures] = await stopWriters();
    const primary = await waitTwoStreaming();
    const pgLog = await writerLog();
    const pgGap = gapIn(pgLog, t, upgradeEnd);
    const pgLost = await lostWrites(upgradeEnd);
    console.log(
      `[real-platform] writes during the upgrade: postgres ${pgLog.ok.filter((w) => w.at >= t && w.at <= upgradeEnd).length} acknowledged, ${pgGap.failed} failed, longest gap ${pgGap.longestGapMs} ms, ${pgLost.length} lost, ${pgSampler.moments} samples, ${pgSampler.doubled.length} with two primaries; redis ${loopFigures(redisFigures, t)}; minio ${loopFigures(minioFigures, t)}`,
    );
    expect(pgLost, "Postgres writes acknowledged, then lost").toEqual([]);
    expect(pgSampler.doubled, "moments with two writable Postgres primaries").toEqual([]);
    expect(redisFigures.acknowledged, "Redis writes acknowledged during the upgrade").toBeGreaterThan(0);
    expect(minioFigures.acknowledged, "MinIO writes acknowledged during the upgrade").toBeGreaterThan(0);
    await kubectl(["delete", "pod", "-n", ns, "pg-writer", "--wait=false"]);

    // The data written before, on every member.
    // A figure: rolled by ordinal, the primary's own pod restart fails over (postgres-0 rolls last).
    console.log(`[real-platform] after the upgrade the primary is ${primary}`);
    for (const member of PG_MEMBERS) {
      const ip = await podIP(ns, member);
      for (const mark of marks) expect(await hasMark(ip, mark), `${mark} on ${member}`).toBe(true);
    }
    for (const member of REDIS_MEMBERS) {
      const ip = await podIP(ns, member);
      await eventually(
        `${member} in sync`,
        async () => {
          const info = await replicationInfo(ip, redisPass);
          return info.role === "master" || info.master_link_status === "up" ? true : undefined;
        },
        120_000,
        1000,
      );
      await withMember(ip, REDIS.port, redisPass, async (c) => {
        for (const [key, value] of redisKeys) expect(await c.get(key), `${key} on ${member}`).toBe(value);
      });
      // What the loop had acknowledged (WAIT 1) during the upgrade, the Redis primary killed on the
      // way; a restarted primary hands over (docs/operations/infrastructure.md, Redis with Sentinel).
      const missing = await redisLoop.missingOn(ip);
      console.log(
        `[real-platform] ${missing.length} of ${redisLoop.acked.size} Redis writes acknowledged during the upgrade missing on ${member}`,
      );
      expect(missing, `Redis writes acknowledged during the upgrade missing on ${member}`).toEqual([]);
    }
    for (const member of MINIO_MEMBERS) {
      const ip = await podIP(ns, member);
      const client = await minioClient(ns, ip);
      for (const o of objects)
        expect(await readObject(client, o.bucket, o.key), `${o.key} through ${member}`).toBe(o.value);
      const missing = await minioLoop.missingThrough(ip);
      expect(
        missing,
        `${missing.length} of ${minioLoop.acked.size} acknowledged objects not read through ${member}`,
      ).toEqual([]);
    }
    // Ten components, each through a canary or a partition with its soak: over the suite's 300 s
    // default on a loaded machine (276 s to 430 s measured); the loop above has its own deadline.
  }, 1_200_000);
});

// ---------------------------------------------------------------- retention

describe("the platform deleted under retentionPolicy.secrets Retain and created again", () => {
  it("comes back on the same data and logs in to its retained Postgres", async () => {
    const t = Date.now();
    const before = await readPlatform(p.client, ns, p.name);
    expect(before.spec.retentionPolicy?.secrets ?? "Retain").toBe("Retain");
    sentinel?.disconnect();
    sentinel = undefined;
    const formerPrimary = await waitTwoStreaming();
    await p.client.delete({ ...PLATFORM_REF, namespace: ns, name: p.name });
    await eventually(
      "the platform and its StatefulSets gone",
      async () => {
        const platform = await p.client.getIfExists({ ...PLATFORM_REF, namespace: ns, name: p.name });
        const sets = await p.client.list("apps/v1", "StatefulSet", { namespace: ns });
        const pods = await podsOf(ns, "postgres");
        return !platform && sets.items.length === 0 && pods.length === 0 ? true : undefined;
      },
      300_000,
      1000,
    );
    const { spec } = before;
    await p.client.apply({
      ...PLATFORM_REF,
      metadata: { name: p.name, namespace: ns },
      spec: { ...spec, version: "1.5.0-local.2" },
    });
    await eventually(
      "the re-created platform Running",
      async () => {
        const platform = await readPlatform(p.client, ns, p.name);
        if (
          platform.status?.phase === "Running" &&
          platform.status.observedGeneration === platform.metadata.generation
        )
          return true;
        // What a timeout reports: the phase and every condition as the operator last wrote them.
        const conditions = (platform.status?.conditions ?? [])
          .map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`)
          .join("; ");
        throw new Error(`phase ${platform.status?.phase ?? "none"}; ${conditions}`);
      },
      600_000,
      1000,
    );
    expect(await postgresPassword(ns)).toBe(pgPassword);
    // Every member starts at once (podManagementPolicy Parallel); the one that was the primary when
    // the platform was deleted goes on as the primary, whatever its ordinal, and the others follow it.
    const primary = await waitTwoStreaming();
    console.log(`[real-platform] primary before deletion ${formerPrimary}, after re-creation ${primary}`);
    expect(primary).toBe(formerPrimary);
    for (const member of PG_MEMBERS) {
      const ip = await podIP(ns, member);
      for (const mark of marks) expect(await hasMark(ip, mark), `${mark} on ${member}`).toBe(true);
    }
    // The stand-in logs in with the retained credentials too.
    for (const service of ["auth-service", "data-service"]) {
      const pods = await podsOf(ns, service);
      expect(pods.length > 0 && pods.every(isReady), `${service} Ready`).toBe(true);
    }
    lap("deleted and re-created", t);
  }, 960_000);
});
