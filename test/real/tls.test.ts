// The platform's TLS links on the real node, with the certificate the operator issues (no user
// Secret): distributed MinIO (four pods) serves HTTPS to its clients and to its peers; Postgres (a
// primary and a standby streaming over TLS) and Redis with its Sentinels (three pods) accept only
// TLS; a client verifies the chain against the platform CA and the names the certificate covers;
// plaintext and an unverified chain are refused; an object put through one member is read through
// another; the bucket Job and the stand-ins (the rendered S3_ENDPOINT, DATABASE_SSLMODE, REDIS_TLS
// and TLS_CA_FILE) connect verified. Then the certificate is re-issued: MinIO and Postgres serve the
// new one without a pod restart (Postgres reloaded by the operator), Redis rolls one pod at a time.
import { X509Certificate } from "node:crypto";
import { connect as netConnect } from "node:net";
import { TLSSocket, checkServerIdentity, connect, type PeerCertificate } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import { MINIO, POSTGRES, REDIS } from "../../src/render/endpoints.js";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import {
  isReady,
  minioClient,
  podIP,
  podsOf,
  postgresPassword,
  query,
  readObject,
  redisPassword,
  redisStartDecisions,
  removeVolumes,
  secretValue,
  startRealPlatform,
  uniqueValue,
  withMember,
  withPostgres,
  type RealPlatform,
} from "./platform-support.js";
import { coreApi, kubectl, loadImages, realNodes } from "./support.js";
import { TEST_RELEASE_IMAGES } from "../../src/localcluster/images/index.js";

const MINIO_MEMBERS = ["minio-0", "minio-1", "minio-2", "minio-3"];
let p: RealPlatform;
let ns = "";
const started = Date.now();

const POSTGRES_MEMBERS = ["postgres-0", "postgres-1"];
const REDIS_MEMBERS = ["redis-0", "redis-1", "redis-2"];

/**
 * samples/real.yaml with TLS: Postgres (a primary and one standby), Redis with Sentinels, MinIO and
 * the stand-ins auth-service (Postgres, Redis) and data-service (Postgres, MinIO) on the real node.
 */
function tlsPlatform(platform: OntoPlatform): void {
  const spec = platform.spec as unknown as {
    global: Record<string, unknown>;
    infrastructure: Record<string, Record<string, unknown>>;
  };
  spec.global.tlsEnabled = true;
  spec.global.tlsSecretName = "onto-tls";
  spec.infrastructure.postgres = { ...spec.infrastructure.postgres, replicas: POSTGRES_MEMBERS.length };
}

beforeAll(async () => {
  realNodes();
  await loadImages(TEST_RELEASE_IMAGES);
  p = await startRealPlatform("real-tls", { customize: tlsPlatform });
  ns = p.namespace;
}, 900_000);

afterAll(async () => {
  console.log(`[real-tls] file ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await p?.operator.stop();
  if (p) await removeVolumes(p.client, ns);
});

interface Handshake {
  authorized: boolean;
  error?: string;
  cert?: PeerCertificate;
}

/** A TLS handshake with `host`:`port`, verifying against `ca` (system roots when absent) for `name`. */
function handshake(host: string, port: number, name: string, ca?: string): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      servername: name,
      rejectUnauthorized: false,
      ...(ca ? { ca } : {}),
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error(`handshake with ${host}:${port} timed out`)));
    socket.once("secureConnect", () => {
      const result: Handshake = {
        authorized: socket.authorized,
        cert: socket.getPeerCertificate(),
        ...(socket.authorizationError ? { error: String(socket.authorizationError) } : {}),
      };
      socket.end();
      resolve(result);
    });
    socket.once("error", reject);
  });
}

const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber.toUpperCase();

/** The serial of the certificate a connection's server presented (upper-case hex); "" when plaintext. */
function peerSerial(stream: unknown): string {
  return stream instanceof TLSSocket ? stream.getPeerCertificate().serialNumber.toUpperCase() : "";
}

/** What a server answers to a plaintext PING within 3 s (a TLS-only port closes or stays silent). */
function plaintextAnswer(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let answer = "";
    const socket = netConnect({ host, port }, () => socket.write("PING\r\n"));
    const done = () => {
      socket.destroy();
      resolve(answer);
    };
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    socket.setTimeout(3_000, done);
    socket.once("close", done);
    socket.once("error", done);
  });
}

describe("TLS on the real node with the issued platform certificate", () => {
  it("MinIO serves it to clients and peers: verified against the platform CA, plaintext refused", async () => {
    const ca = await secretValue(ns, "onto-tls", "ca.crt");
    const serial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
    for (const member of MINIO_MEMBERS) {
      const ip = await podIP(ns, member);
      for (const name of [
        `${member}.minio-headless.${ns}.svc`,
        `${MINIO.service}.${ns}.svc`,
        MINIO.service,
      ]) {
        const verified = await handshake(ip, MINIO.port, name, ca);
        expect(verified.authorized, `${member} as ${name}: ${verified.error ?? ""}`).toBe(true);
        expect(verified.cert?.serialNumber.toUpperCase()).toBe(serial);
      }
      // The chain is the platform's own: without its CA it does not verify.
      const unverified = await handshake(ip, MINIO.port, `${MINIO.service}.${ns}.svc`);
      expect(unverified.authorized).toBe(false);
      expect(unverified.error).toMatch(/UNABLE_TO_VERIFY|SELF_SIGNED|unable to/i);
      // A name the certificate does not cover: the chain verifies, the name does not.
      const wrong = await handshake(ip, MINIO.port, "minio.elsewhere.svc", ca);
      expect(wrong.authorized).toBe(false);
      expect(wrong.error).toMatch(/ALTNAME/);
      expect(checkServerIdentity("minio.elsewhere.svc", wrong.cert as PeerCertificate)).toBeInstanceOf(Error);
      const plain = await fetch(`http://${ip}:${MINIO.port}/minio/health/live`).then(
        (r) => r.status,
        (err: unknown) => `refused: ${String(err)}`,
      );
      expect(plain, `${member} over plaintext`).not.toBe(200);
    }
    console.log(`[real-tls] ${MINIO_MEMBERS.length} MinIO members serve serial ${serial}, verified`);
  });

  it("keeps an object put through one member and read through another, over verified TLS", async () => {
    const ca = await secretValue(ns, "onto-tls", "ca.crt");
    const tls = { ca, serverName: `${MINIO.service}.${ns}.svc` };
    const writer = await minioClient(ns, await podIP(ns, "minio-1"), MINIO.port, tls);
    const value = uniqueValue("tls");
    // The bucket Job created the buckets through mc over verified TLS.
    expect(await writer.bucketExists("onto-data")).toBe(true);
    await writer.putObject("onto-data", "tls/mark.txt", value);
    const reader = await minioClient(ns, await podIP(ns, "minio-3"), MINIO.port, tls);
    expect(await readObject(reader, "onto-data", "tls/mark.txt")).toBe(value);
  });

  it("the stand-in data-service is Ready through the rendered https endpoint and TLS_CA_FILE", async () => {
    const [pod] = await podsOf(ns, "data-service");
    expect(pod && isReady(pod)).toBe(true);
    const metrics = await (await fetch(`http://${pod!.status!.podIP}:8080/metrics`)).text();
    expect(metrics).toMatch(/^standin_ready 1$/m);
    expect(metrics.split("\n").filter((l) => /^standin_dependency_failing\{.*\} 1$/.test(l))).toEqual([]);
  });

  it("Postgres accepts only verified TLS, and its standby streams from the primary over TLS", async () => {
    const ca = await secretValue(ns, "onto-tls", "ca.crt");
    const serial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
    const password = await postgresPassword(ns);
    const tls = { ca, serverName: `${POSTGRES.service}.${ns}.svc` };
    let primary = "";
    for (const member of POSTGRES_MEMBERS) {
      const ip = await podIP(ns, member);
      const seen = await withPostgres(
        ip,
        password,
        async (c) => {
          const row = (
            await c.query<{ ssl: boolean; recovery: boolean }>(
              "SELECT ssl, pg_is_in_recovery() AS recovery FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            )
          ).rows[0];
          return { ...row, serial: peerSerial(c.connection.stream) };
        },
        POSTGRES.port,
        tls,
      );
      expect(seen.ssl, `${member} over TLS`).toBe(true);
      expect(seen.serial).toBe(serial);
      if (seen.recovery === false) primary = member;
      const plain = await withPostgres(ip, password, async () => "connected").catch((err: unknown) =>
        String(err),
      );
      expect(plain, `${member} in plaintext`).toMatch(/no encryption|pg_hba/);
      // The platform's own chain: without its CA nothing verifies.
      const unverified = await withPostgres(ip, password, async () => "connected", POSTGRES.port, {
        ca: "",
        serverName: tls.serverName,
      }).catch((err: unknown) => String(err));
      expect(unverified).toMatch(/self.signed|unable to (verify|get)/i);
    }
    expect(primary, "one member answers as the primary").not.toBe("");
    const primaryIp = await podIP(ns, primary);
    // A standby (re)connecting at this moment streams again within seconds.
    const links = await eventually(
      "every standby streaming from the primary",
      async () => {
        const rows = await query<{ application_name: string; state: string; ssl: boolean }>(
          primaryIp,
          password,
          "SELECT r.application_name, r.state, s.ssl FROM pg_stat_replication r JOIN pg_stat_ssl s ON s.pid = r.pid",
          [],
          tls,
        );
        return rows.length === POSTGRES_MEMBERS.length - 1 && rows.every((r) => r.state === "streaming")
          ? rows
          : undefined;
      },
      120_000,
      1_000,
    );
    for (const link of links)
      expect(link, "a standby's WAL link").toMatchObject({ state: "streaming", ssl: true });
    const mark = uniqueValue("pg-tls");
    await query(primaryIp, password, "CREATE TABLE IF NOT EXISTS tls_marks (v text)", [], tls);
    await query(primaryIp, password, "INSERT INTO tls_marks VALUES ($1)", [mark], tls);
    const standby = await podIP(ns, POSTGRES_MEMBERS.find((m) => m !== primary) ?? "");
    await eventually(
      "the write replicated to the standby over TLS",
      async () => {
        const rows = await query<{ v: string }>(
          standby,
          password,
          "SELECT v FROM tls_marks WHERE v = $1",
          [mark],
          tls,
        ).catch(() => []);
        return rows.length === 1 ? true : undefined;
      },
      30_000,
      500,
    );
    console.log(
      `[real-tls] Postgres: ${POSTGRES_MEMBERS.length} members serve serial ${serial}; ${links.length} standby streams over TLS; plaintext refused`,
    );
  });

  it("Redis and its Sentinels accept only verified TLS, and the replicas follow the primary over it", async () => {
    const ca = await secretValue(ns, "onto-tls", "ca.crt");
    const serial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
    const password = await redisPassword(ns);
    // How each member started (the primary it decided to follow) and what its Sentinel saw since
    // (a failover on a loaded machine), for reading a failure below.
    for (const member of REDIS_MEMBERS) {
      const decisions = await redisStartDecisions(ns, member);
      const sentinelLog = (await kubectl(["logs", "-n", ns, member, "-c", "sentinel"])).stdout;
      const events = sentinelLog
        .split("\n")
        .filter((l) => /[+-](sdown|odown|switch-master|failover-end)\b/.test(l));
      console.log(
        `[real-tls] ${member} started: ${decisions.join(" | ")}; its Sentinel saw: ${events.map((l) => l.replace(/^.*?[#*] /, "")).join(" | ") || "nothing"}`,
      );
    }
    const tlsOf = (member: string) => ({ ca, serverName: `${member}.redis-headless.${ns}.svc` });
    // One primary with both replicas linked to it, over TLS. Awaited rather than sampled once: a
    // Sentinel failover (a primary slow to answer on a loaded machine) relinks the replicas within
    // seconds, and the steady state after it is what this asserts.
    const replication = await eventually(
      "one Redis primary with two linked replicas",
      async () => {
        const seen = new Map<string, string>();
        for (const member of REDIS_MEMBERS) {
          const info = await withMember(
            await podIP(ns, member),
            REDIS.port,
            password,
            async (c) => ({ replication: await c.info("replication"), serial: peerSerial(c.stream) }),
            tlsOf(member),
          );
          expect(info.serial, `${member} serves the platform certificate`).toBe(serial);
          seen.set(member, info.replication);
        }
        const state = (text: string) =>
          ["role", "connected_slaves", "master_host", "master_link_status"]
            .map((key) => new RegExp(`^${key}:(.*?)\r?$`, "m").exec(text)?.[1])
            .filter((v) => v !== undefined)
            .join(" ");
        const settled =
          [...seen.values()].filter((r) => /^role:master/m.test(r) && /^connected_slaves:2\r?$/m.test(r))
            .length === 1 &&
          [...seen.values()].filter((r) => /^role:slave/m.test(r) && /^master_link_status:up\r?$/m.test(r))
            .length ===
            REDIS_MEMBERS.length - 1;
        if (!settled)
          throw new Error([...seen].map(([member, text]) => `${member}: ${state(text)}`).join("; "));
        return seen;
      },
      90_000,
      1_000,
    );
    const primary = [...replication].find(([, r]) => /^role:master/m.test(r))?.[0] ?? "";
    for (const member of REDIS_MEMBERS) {
      const ip = await podIP(ns, member);
      const sentinel = await withMember(
        ip,
        REDIS.sentinelPort,
        undefined,
        async (c) => ({
          primary: (await c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", REDIS.masterName)) as string[],
          serial: peerSerial(c.stream),
        }),
        tlsOf(member),
      );
      expect(sentinel.serial, `${member}'s Sentinel serves the platform certificate`).toBe(serial);
      expect(sentinel.primary[0], `${member}'s Sentinel names the primary`).toBe(
        `${primary}.redis-headless.${ns}.svc`,
      );
      // No plaintext listener: a plaintext PING gets no PONG, on either port.
      for (const port of [REDIS.port, REDIS.sentinelPort])
        expect(await plaintextAnswer(ip, port), `${member}:${port} in plaintext`).not.toMatch(/PONG/);
    }
    const roles = [...replication.values()].map((r) => /^role:(\w+)/m.exec(r)?.[1] ?? "?");
    expect(roles.sort(), "the members' roles").toEqual(["master", "slave", "slave"]);
    // The stand-in auth-service reaches Redis through the Sentinels and Postgres, both verified
    // (Ready again within its probe period when one of them was restarting a moment ago).
    const pod = await eventually(
      "the stand-in auth-service Ready",
      async () => (await podsOf(ns, "auth-service")).find((x) => isReady(x)),
      120_000,
      1_000,
    );
    const metrics = await (await fetch(`http://${pod.status!.podIP}:8080/metrics`)).text();
    expect(metrics).toMatch(/^standin_ready 1$/m);
    console.log(
      `[real-tls] Redis: ${REDIS_MEMBERS.length} servers and Sentinels serve serial ${serial}; replicas linked over TLS; plaintext refused`,
    );
  });

  it("a re-issued certificate: MinIO and Postgres serve it without a restart, Redis rolls one pod at a time", async () => {
    const podState = async (component: string) =>
      new Map(
        (await podsOf(ns, component)).map((pod) => [
          pod.metadata!.name!,
          { uid: pod.metadata!.uid, restarts: pod.status?.containerStatuses?.[0]?.restartCount ?? 0 },
        ]),
      );
    const before = { minio: await podState("minio"), postgres: await podState("postgres") };
    const redisBefore = await podState("redis");
    const oldSerial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
    // Redis members being replaced at once (gone, terminating, or a replacement not Ready yet),
    // sampled through the roll; and, as a figure, members not Ready at once for any reason (a
    // replica re-syncing with the primary a failover named is not Ready for a moment too).
    let redisDownMost = 0;
    let redisNotReadyMost = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pods = await podsOf(ns, "redis").catch(() => undefined);
        if (pods) {
          const serving = pods.filter((pod) => isReady(pod) && !pod.metadata?.deletionTimestamp).length;
          redisNotReadyMost = Math.max(redisNotReadyMost, REDIS_MEMBERS.length - serving);
          const present = pods.filter((pod) => !pod.metadata?.deletionTimestamp);
          const replacing = present.filter(
            (pod) => redisBefore.get(pod.metadata!.name!)?.uid !== pod.metadata?.uid && !isReady(pod),
          ).length;
          redisDownMost = Math.max(redisDownMost, REDIS_MEMBERS.length - present.length + replacing);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    // A new lifetime re-issues the certificate at once (same CA, same names).
    await p.client.mergePatch(
      { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", namespace: ns, name: p.name },
      { spec: { global: { tls: { certificateLifetime: "720h" } } } },
    );
    const t = Date.now();
    const newSerial = await eventually(
      "a new certificate in onto-tls",
      async () => {
        const serial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
        return serial !== oldSerial ? serial : undefined;
      },
      60_000,
      500,
    );
    const issuedMs = Date.now() - t;
    const ca = await secretValue(ns, "onto-tls", "ca.crt");
    const pgPassword = await postgresPassword(ns);
    const redisPw = await redisPassword(ns);
    const servedAt: Record<string, number> = {};
    const served: Record<string, (member: string) => Promise<string>> = {
      minio: async (member) =>
        (
          await handshake(await podIP(ns, member), MINIO.port, `${MINIO.service}.${ns}.svc`, ca)
        ).cert?.serialNumber.toUpperCase() ?? "",
      postgres: async (member) =>
        withPostgres(
          await podIP(ns, member),
          pgPassword,
          async (c) => peerSerial(c.connection.stream),
          POSTGRES.port,
          {
            ca,
            serverName: `${POSTGRES.service}.${ns}.svc`,
          },
        ),
      redis: async (member) =>
        withMember(await podIP(ns, member), REDIS.port, redisPw, async (c) => peerSerial(c.stream), {
          ca,
          serverName: `${member}.redis-headless.${ns}.svc`,
        }),
    };
    const members: Record<string, string[]> = {
      minio: MINIO_MEMBERS,
      postgres: POSTGRES_MEMBERS,
      redis: REDIS_MEMBERS,
    };
    const everyone = Object.entries(members).flatMap(([component, names]) =>
      names.map((m) => [component, m] as const),
    );
    await eventually(
      "every MinIO, Postgres and Redis member serving the new certificate",
      async () => {
        for (const [component, member] of everyone) {
          if (servedAt[member] !== undefined) continue;
          const serial = await served[component]!(member).catch(() => "");
          if (serial === newSerial) servedAt[member] = Date.now() - t;
        }
        return Object.keys(servedAt).length === everyone.length ? true : undefined;
      },
      420_000,
      2_000,
    );
    // The roll is over once every Redis pod is Ready again.
    await eventually(
      "every Redis pod Ready",
      async () => {
        const pods = await podsOf(ns, "redis");
        return pods.length === REDIS_MEMBERS.length && pods.every(isReady) ? true : undefined;
      },
      180_000,
      1_000,
    );
    sampling = false;
    await sampler;
    for (const [component, was] of Object.entries(before)) {
      for (const pod of await podsOf(ns, component)) {
        const prior = was.get(pod.metadata!.name!);
        expect(pod.metadata?.uid, `${pod.metadata?.name} kept its pod`).toBe(prior?.uid);
        expect(pod.status?.containerStatuses?.[0]?.restartCount ?? 0).toBe(prior?.restarts);
      }
    }
    const redisAfter = await podsOf(ns, "redis");
    const replaced = redisAfter.filter(
      (pod) => redisBefore.get(pod.metadata!.name!)?.uid !== pod.metadata?.uid,
    );
    expect(
      replaced.map((pod) => pod.metadata?.name).sort(),
      "Redis reads its certificate at start: every pod replaced",
    ).toEqual(REDIS_MEMBERS);
    expect(redisDownMost, "Redis pods being replaced at once during the roll").toBeLessThanOrEqual(1);
    // Reloads that worked (one asked too early or timed out on a loaded node is tried again).
    const reloads = (await coreApi().listNamespacedEvent({ namespace: ns })).items.filter(
      (e) =>
        e.reason === "PostgresConfigReloaded" &&
        e.message?.includes(`ssl_cert_file serial ${oldSerial} -> serial ${newSerial}`),
    );
    // The operator's Events are the platform's; the message names the member.
    const reloaded = new Set(reloads.map((e) => /^Postgres (\S+) reloaded/.exec(e.message ?? "")?.[1]));
    expect([...reloaded].sort(), "the operator reloaded each Postgres member").toEqual(POSTGRES_MEMBERS);
    const platform = await readPlatform(p.client, ns, p.name);
    expect(platform.status?.certificates?.["onto-tls"]?.serial?.toUpperCase()).toBe(newSerial);
    console.log(
      `[real-tls] re-issued in ${issuedMs} ms; served by ${JSON.stringify(servedAt)} (ms after the change); 0 MinIO or Postgres pods restarted; ${replaced.length} Redis pods replaced, at most ${redisDownMost} being replaced at once, at most ${redisNotReadyMost} not Ready at once`,
    );
  });
});
