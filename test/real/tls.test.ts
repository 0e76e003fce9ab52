// The platform's TLS links on the real node, with the certificate the operator issues (no user
// Secret): distributed MinIO (four pods) serves HTTPS to its clients and to its peers; a client
// verifies the chain against the platform CA and the names the certificate covers; plaintext and an
// unverified chain are refused; an object put through one member is read through another; the
// bucket Job and the stand-in data-service (the rendered S3_ENDPOINT and TLS_CA_FILE) connect
// verified. Then the certificate is re-issued: MinIO serves the new one without a pod restart.
import { X509Certificate } from "node:crypto";
import { checkServerIdentity, connect, type PeerCertificate } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import { MINIO } from "../../src/render/endpoints.js";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import {
  isReady,
  minioClient,
  podIP,
  podsOf,
  readObject,
  removeVolumes,
  secretValue,
  startRealPlatform,
  uniqueValue,
  type RealPlatform,
} from "./platform-support.js";
import { loadImages, realNodes } from "./support.js";
import { TEST_RELEASE_IMAGES } from "../../src/localcluster/images/index.js";

const MINIO_MEMBERS = ["minio-0", "minio-1", "minio-2", "minio-3"];
let p: RealPlatform;
let ns = "";
const started = Date.now();

/** Postgres (one member), distributed MinIO and data-service on the real node; the rest simulated. */
function tlsPlatform(platform: OntoPlatform): void {
  const spec = platform.spec as unknown as {
    global: Record<string, unknown>;
    infrastructure: Record<string, Record<string, unknown>>;
    controlPlane: Record<string, Record<string, unknown>>;
  };
  spec.global.tlsEnabled = true;
  spec.global.tlsSecretName = "onto-tls";
  spec.infrastructure.postgres = { ...spec.infrastructure.postgres, replicas: 1 };
  // Redis and auth-service are not what this file tests: on the simulated nodes.
  const { nodePool: _redisPool, ...redis } = spec.infrastructure.redis ?? {};
  spec.infrastructure.redis = redis;
  const { nodePool: _authPool, ...auth } = spec.controlPlane.authService ?? {};
  spec.controlPlane.authService = auth;
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

  it("a re-issued certificate is served by every MinIO member without a pod restart", async () => {
    const before = new Map(
      (await podsOf(ns, "minio")).map((pod) => [
        pod.metadata!.name!,
        { uid: pod.metadata!.uid, restarts: pod.status?.containerStatuses?.[0]?.restartCount ?? 0 },
      ]),
    );
    const oldSerial = serialOf(await secretValue(ns, "onto-tls", "tls.crt"));
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
    const servedAt: Record<string, number> = {};
    await eventually(
      "every MinIO member serving the new certificate",
      async () => {
        for (const member of MINIO_MEMBERS) {
          if (servedAt[member] !== undefined) continue;
          const shake = await handshake(
            await podIP(ns, member),
            MINIO.port,
            `${MINIO.service}.${ns}.svc`,
            ca,
          );
          if (shake.authorized && shake.cert?.serialNumber.toUpperCase() === newSerial)
            servedAt[member] = Date.now() - t;
        }
        return Object.keys(servedAt).length === MINIO_MEMBERS.length ? true : undefined;
      },
      240_000,
      2_000,
    );
    const after = await podsOf(ns, "minio");
    for (const pod of after) {
      const was = before.get(pod.metadata!.name!);
      expect(pod.metadata?.uid, `${pod.metadata?.name} kept its pod`).toBe(was?.uid);
      expect(pod.status?.containerStatuses?.[0]?.restartCount ?? 0).toBe(was?.restarts);
    }
    const platform = await readPlatform(p.client, ns, p.name);
    expect(platform.status?.certificates?.["onto-tls"]?.serial?.toUpperCase()).toBe(newSerial);
    console.log(
      `[real-tls] re-issued in ${issuedMs} ms; served by ${JSON.stringify(servedAt)} (ms after the change); 0 MinIO pods restarted`,
    );
  });
});
