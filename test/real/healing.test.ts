// Healing with the real kubelet and the real kernel, on a small platform of its own (Postgres and
// a standalone Redis on the real node, the stand-in auth-service with the platform's TLS Secret,
// the rest on the simulated nodes):
// - a Secret the pods mount is deleted: the kubelet cannot start the new pod (ContainerCreating,
//   FailedMount naming the Secret), and the operator's diagnosis names the Secret;
// - Redis' dataset outgrows its memory limit: the kernel OOM-kills it while it loads (exit 137,
//   OOMKilled), the operator raises the limit until it runs, with its data;
// - Postgres loses global/pg_control: it exits on every start and the kubelet backs off
//   (CrashLoopBackOff); the diagnosis carries the exit code and what Postgres said.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as k8s from "@kubernetes/client-node";
import { Quantity, type OntoPlatform } from "../../src/api/index.js";
import { REDIS } from "../../src/render/endpoints.js";
import type { KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { readPlatform, tlsSecret } from "../support/platform.js";
import {
  deletePod,
  isReady,
  killContainer,
  podIP,
  podsOf,
  redisPassword,
  removeVolumes,
  secretValue,
  startRealPlatform,
  withMember,
  type ClientTls,
  type RealPlatform,
} from "./platform-support.js";
import { coreApi, execIn, loadImages, realNodes } from "./support.js";
import { TEST_RELEASE_IMAGES } from "../../src/localcluster/images/index.js";

let p: RealPlatform;
let userSecret: KubeObject;
let ns = "";
const timeline: Record<string, number> = {};
const REAL_POOL = {
  nodeSelector: { "onto.paas/node-kind": "real" },
  tolerations: [
    { key: "onto.paas/node-kind", operator: "Equal" as const, value: "real", effect: "NoSchedule" as const },
  ],
};

function small(platform: OntoPlatform): void {
  const spec = platform.spec as unknown as {
    global: Record<string, unknown>;
    selfHealing?: Record<string, unknown>;
    infrastructure: Record<string, Record<string, unknown>>;
    dataPlane: Record<string, Record<string, unknown>>;
  };
  spec.global.tlsEnabled = true;
  spec.global.tlsSecretName = "onto-tls";
  // Every OOM kill may raise at once: the test shows the sequence, not the cooldown.
  spec.selfHealing = { cooldownSeconds: 0 };
  spec.infrastructure.postgres = { ...spec.infrastructure.postgres, replicas: 1 };
  spec.infrastructure.redis = {
    replicas: 1,
    mode: "standalone",
    storage: "512Mi",
    resources: { requests: { cpu: "50m", memory: "32Mi" }, limits: { cpu: "500m", memory: "512Mi" } },
    nodePool: REAL_POOL,
  };
  // MinIO and data-service are not what this file tests: on the simulated nodes.
  spec.infrastructure.minio = { replicas: 1, storage: "1Gi", buckets: [{ name: "onto-data" }] };
  spec.dataPlane.dataService = { replicas: 1 };
}

beforeAll(async () => {
  realNodes();
  await loadImages(TEST_RELEASE_IMAGES);
  const t = Date.now();
  p = await startRealPlatform("real-healing", {
    customize: small,
    prepare: async (client, namespace) => {
      // The user's certificate names what the platform's TLS links verify, as a user's own must.
      userSecret = await tlsSecret(namespace, "onto-tls");
      await client.apply(userSecret);
    },
  });
  ns = p.namespace;
  timeline["platform Running"] = (Date.now() - t) / 1000;
}, 600_000);

afterAll(async () => {
  console.log(`[real-healing] seconds: ${JSON.stringify(timeline)}`);
  await p?.operator.stop();
  if (p) await removeVolumes(p.client, ns);
});

async function condition(
  type: string,
): Promise<{ status: string; reason: string; message: string } | undefined> {
  return (await readPlatform(p.client, ns, p.name)).status?.conditions?.find((c) => c.type === type);
}

describe("a missing Secret on the real node", () => {
  it("the kubelet cannot start the pod and the operator's diagnosis names the Secret", async () => {
    const t = Date.now();
    // A missing platform certificate is issued by the operator at once, unless the Secret where
    // it keeps the platform's CA is someone else's (it then writes nothing and says so).
    await p.client.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${p.name}-ca`, namespace: ns },
      data: { note: Buffer.from("not the operator's").toString("base64") },
    });
    await p.client.delete({ apiVersion: "v1", kind: "Secret", namespace: ns, name: "onto-tls" });
    const [old] = await podsOf(ns, "auth-service");
    await deletePod(ns, old?.metadata?.name ?? "");
    // What the kubelet says: the volume cannot be set up.
    const event = await eventually(
      "the kubelet's FailedMount Event",
      async () => {
        const list = await coreApi().listNamespacedEvent({ namespace: ns });
        return list.items.find(
          (e) =>
            e.reason === "FailedMount" &&
            e.involvedObject.name?.startsWith("auth-service") &&
            e.message?.includes("onto-tls"),
        );
      },
      120_000,
      1000,
    );
    expect(event.message).toMatch(/secret "onto-tls" not found/);
    const [pod] = await podsOf(ns, "auth-service");
    expect(pod?.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? "ContainerCreating").toBe(
      "ContainerCreating",
    );
    const diagnosed = await eventually(
      "the operator's diagnosis",
      async () => {
        const c = await condition("CrashLoop");
        return c?.status === "True" && c.reason === "MissingSecret" ? c : undefined;
      },
      120_000,
      1000,
    );
    expect(diagnosed.message).toContain("auth-service:");
    expect(diagnosed.message).toContain("Secret onto-tls (volume tls)");
    timeline["missing Secret diagnosed"] = (Date.now() - t) / 1000;
    // The same certificate again: nothing rolls for it.
    await p.client.apply(userSecret);
    await p.client.delete({ apiVersion: "v1", kind: "Secret", namespace: ns, name: `${p.name}-ca` });
    await eventually(
      "auth-service running again",
      async () => {
        const pods = await podsOf(ns, "auth-service");
        return pods.some((x) => x.status?.phase === "Running") ? true : undefined;
      },
      180_000,
      1000,
    );
  });
});

describe("a real OOM kill on the real node", () => {
  it("Redis OOM-killed by the kernel while it loads its data gets a higher limit and then runs, with its data", async () => {
    const t = Date.now();
    const password = await redisPassword(ns);
    // About 48 MiB of values, kept in the AOF on the volume.
    const value = "x".repeat(64 * 1024);
    const tls = await redisTls();
    await withMember(
      await podIP(ns, "redis-0"),
      REDIS.port,
      password,
      async (c) => {
        const pipeline = c.pipeline();
        for (let i = 0; i < 750; i++) pipeline.set(`oom:${i}`, `${i}:${value}`);
        await pipeline.exec();
        expect(await c.dbsize()).toBeGreaterThanOrEqual(750);
      },
      tls,
    );
    // The user sets a limit below what the dataset needs: the pod rolls, Redis loads the AOF and
    // is killed by the kernel on every start.
    await p.client.mergePatch(
      { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", namespace: ns, name: p.name },
      { spec: { infrastructure: { redis: { resources: { limits: { memory: "40Mi" } } } } } },
    );
    const killed = await eventually(
      "an OOM kill by the kernel",
      async () => {
        const pod = await coreApi().readNamespacedPod({ namespace: ns, name: "redis-0" });
        const status = pod.status?.containerStatuses?.find((s) => s.name === "redis");
        const term = status?.lastState?.terminated ?? status?.state?.terminated;
        return term?.reason === "OOMKilled" ? { pod, term } : undefined;
      },
      180_000,
      500,
    );
    timeline["first OOM kill"] = (Date.now() - t) / 1000;
    expect(killed.term.exitCode).toBe(137);
    expect(limitOf(killed.pod)).toBe("40Mi");

    const running = await eventually(
      "redis-0 running with a raised limit",
      async () => {
        const pod = await coreApi().readNamespacedPod({ namespace: ns, name: "redis-0" });
        const limit = limitOf(pod);
        return limit && Quantity.parse(limit).compareTo(Quantity.parse("40Mi")) > 0 && isReady(pod)
          ? pod
          : undefined;
      },
      420_000,
      1000,
    );
    timeline["running after raises"] = (Date.now() - t) / 1000;
    const platform = await readPlatform(p.client, ns, p.name);
    const override = platform.status?.healing?.memoryOverrides?.redis;
    expect(override?.memoryLimit).toBe(limitOf(running));
    console.log(`[real-healing] redis raised to ${override?.memoryLimit} in ${override?.raises} raise(s)`);
    await withMember(
      await podIP(ns, "redis-0"),
      REDIS.port,
      password,
      async (c) => {
        expect(await c.dbsize()).toBeGreaterThanOrEqual(750);
        expect((await c.get("oom:749"))?.startsWith("749:")).toBe(true);
      },
      tls,
    );
  });
});

/** Redis speaks only TLS here (global.tlsEnabled): verified against the user's CA, for the Service name. */
async function redisTls(): Promise<ClientTls> {
  return { ca: await secretValue(ns, "onto-tls", "ca.crt"), serverName: REDIS.service };
}

function limitOf(pod: k8s.V1Pod): string | undefined {
  return pod.spec?.containers.find((c) => c.name === "redis")?.resources?.limits?.memory;
}

describe("a real crash loop on the real node", () => {
  it("Postgres without global/pg_control exits on every start; the diagnosis has its exit code and last words", async () => {
    const t = Date.now();
    const rm = await execIn(ns, "postgres-0", ["sh", "-c", 'rm "$PGDATA/global/pg_control"']);
    expect(rm.code, rm.stderr).toBe(0);
    await killContainer(ns, "postgres-0", "postgres");
    const looping = await eventually(
      "CrashLoopBackOff from the kubelet",
      async () => {
        const pod = await coreApi().readNamespacedPod({ namespace: ns, name: "postgres-0" });
        const s = pod.status?.containerStatuses?.[0];
        return s?.state?.waiting?.reason === "CrashLoopBackOff" ? s : undefined;
      },
      180_000,
      1000,
    );
    const exitCode = looping.lastState?.terminated?.exitCode ?? 0;
    expect(exitCode).toBeGreaterThan(0);
    const diagnosed = await eventually(
      "the operator's diagnosis",
      async () => {
        const c = await condition("CrashLoop");
        return c?.status === "True" && c.message.includes("postgres:") ? c : undefined;
      },
      120_000,
      1000,
    );
    timeline["crash loop diagnosed"] = (Date.now() - t) / 1000;
    expect(diagnosed.reason).toBe("ContainerExited");
    expect(diagnosed.message).toContain(`exit code ${exitCode}`);
    // What Postgres said last, from the kubelet (terminationMessagePolicy FallbackToLogsOnError).
    expect(diagnosed.message).toMatch(/pg_control/);
  });
});
