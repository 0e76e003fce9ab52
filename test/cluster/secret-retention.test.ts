// Generated Secrets and retentionPolicy.secrets against the real API server and its garbage
// collector: under Retain a platform deleted and created again under the same name finds the
// credentials it generated the first time (its retained volumes still hold data those credentials
// open); under Delete they go with the platform. What the real Postgres does with them is proven
// on the real node.
import { useOperator } from "../support/operator.js";
import { PLATFORM_REF } from "../../src/api/index.js";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/index.js";
import { GENERATED_SECRET_LABEL } from "../../src/render/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, waitForPhase } from "../support/platform.js";

type Secret = KubeObject & { data?: Record<string, string> };
const NAME = "onto-minimal";
const fx = useOperator({ namespaces: ["secret-retention"] });
const { client, ns } = fx;

async function generatedSecrets(): Promise<Secret[]> {
  const list = await client.list<Secret>("v1", "Secret", {
    namespace: ns,
    labelSelector: `${GENERATED_SECRET_LABEL}=true,app.kubernetes.io/instance=${NAME}`,
  });
  return list.items.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
}

function values(secrets: Secret[]): Record<string, Record<string, string> | undefined> {
  const out: Record<string, Record<string, string> | undefined> = {};
  for (const s of secrets) out[s.metadata?.name ?? ""] = s.data;
  return out;
}

async function createPlatform(secrets: "Retain" | "Delete"): Promise<void> {
  const platform = loadSample("minimal.yaml", ns);
  platform.spec.retentionPolicy = { secrets };
  await client.apply(platform);
  await waitForPhase(client, ns, NAME, "Running");
}

/** Deletes the platform and waits until the garbage collector has removed what it owned. */
async function deletePlatform(): Promise<void> {
  await client.delete({ ...PLATFORM_REF, namespace: ns, name: NAME });
  await eventually(
    "the platform and its owned Deployments gone",
    async () => {
      const platform = await client.getIfExists({ ...PLATFORM_REF, namespace: ns, name: NAME });
      const deployments = await client.list("apps/v1", "Deployment", { namespace: ns });
      return !platform && deployments.items.length === 0 ? true : undefined;
    },
    120_000,
  );
}

describe("generated Secrets under retentionPolicy.secrets", () => {
  it("Retain: they outlive the platform and a platform created again reuses their values", async () => {
    await createPlatform("Retain");
    const first = await generatedSecrets();
    expect(first.map((s) => s.metadata?.name)).toEqual([
      "kafka-cluster",
      "minio-credentials",
      "postgres-credentials",
      "redis-credentials",
    ]);
    expect(first.every((s) => (s.metadata?.ownerReferences ?? []).length === 0)).toBe(true);

    await deletePlatform();
    const kept = await generatedSecrets();
    expect(values(kept)).toEqual(values(first));

    await createPlatform("Retain");
    const again = await generatedSecrets();
    expect(values(again)).toEqual(values(first));
    // The same objects, adopted: never deleted and re-created.
    expect(again.map((s) => s.metadata?.uid)).toEqual(first.map((s) => s.metadata?.uid));
  });

  it("restores a retained Secret deleted by hand, with new values (nothing is left to reuse)", async () => {
    const ref = { apiVersion: "v1", kind: "Secret", namespace: ns, name: "redis-credentials" };
    const before = await client.get<Secret>(ref);
    await client.delete(ref);
    const after = await eventually("redis-credentials re-created", async () => {
      const s = await client.getIfExists<Secret>(ref);
      return s && s.metadata?.uid !== before.metadata?.uid ? s : undefined;
    });
    expect(Object.keys(after.data ?? {})).toEqual(Object.keys(before.data ?? {}));
  });

  it("Delete: the platform owns them and they go with it", async () => {
    // Switching the policy on a live platform puts the owner reference on the existing Secrets.
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { retentionPolicy: { secrets: "Delete" } } },
    );
    await eventually("the generated Secrets owned by the platform", async () => {
      const secrets = await generatedSecrets();
      return secrets.length === 4 && secrets.every((s) => (s.metadata?.ownerReferences ?? []).length === 1)
        ? true
        : undefined;
    });
    await deletePlatform();
    await eventually("the generated Secrets deleted", async () =>
      (await generatedSecrets()).length === 0 ? true : undefined,
    );
  });
});
