// Tenancy (seed section 6, issue 8) against the real API server: two tenants side by side, each
// fenced into its own namespace with a quota, a limit range, network policies and the restricted
// Pod Security Standard enforced by the API server's own admission; a quota too small for the
// platform is reported, not a silent stall; a spec naming another namespace is refused.
import { useOperator } from "../support/operator.js";
import { describe, expect, it } from "vitest";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { InvalidError, type KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "tenant-alpha";
const fx = useOperator({
  namespaces: ["tenant-alpha", "tenant-beta"],
  platform: (namespace) => loadSample("tenant.yaml", namespace),
});
const { client } = fx;
const [alpha = "", beta = ""] = fx.namespaces;

async function listIn(namespace: string, apiVersion: string, kind: string): Promise<KubeObject[]> {
  return (await client.list(apiVersion, kind, { namespace })).items;
}

describe("two tenants", () => {
  it("keep every object of a tenant in the tenant's own namespace", async () => {
    const platformA = await readPlatform(client, alpha, NAME);
    const platformB = await readPlatform(client, beta, NAME);
    for (const kind of fx.operator.reconciler.servedKinds()) {
      const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
      const all = (
        await client.list(apiVersion, kind.kind, { labelSelector: `app.kubernetes.io/instance=${NAME}` })
      ).items;
      for (const obj of all) {
        const owner = obj.metadata?.ownerReferences?.find((r) => r.kind === "OntoPlatform")?.uid;
        if (owner === platformA.metadata.uid) expect(obj.metadata?.namespace).toBe(alpha);
        if (owner === platformB.metadata.uid) expect(obj.metadata?.namespace).toBe(beta);
      }
    }
    expect((await listIn(alpha, "apps/v1", "Deployment")).length).toBeGreaterThan(5);
  });

  it("have a quota, a limit range, a default-deny policy and an allow policy admitting onto-system and DNS", async () => {
    const quotas = await listIn(alpha, "v1", "ResourceQuota");
    expect(
      quotas.map((q) => (q as KubeObject & { spec: { hard: Record<string, string> } }).spec.hard),
    ).toEqual([
      { "limits.cpu": "20", "limits.memory": "40Gi", "requests.cpu": "10", "requests.memory": "20Gi" },
    ]);
    expect(await listIn(alpha, "v1", "LimitRange")).toHaveLength(1);
    const policies = (await listIn(alpha, "networking.k8s.io/v1", "NetworkPolicy")) as (KubeObject & {
      spec: {
        podSelector: object;
        ingress?: { from?: unknown[] }[];
        egress?: { ports?: { port: number }[] }[];
      };
    })[];
    const deny = policies.find((p) => !p.spec.ingress && !p.spec.egress);
    expect(deny?.spec.podSelector).toEqual({});
    const allow = policies.find((p) => p.spec.ingress);
    expect(JSON.stringify(allow?.spec.ingress)).toContain("onto-system");
    expect(allow?.spec.egress?.some((e) => e.ports?.some((p) => p.port === 53))).toBe(true);
  });

  it("enforce the restricted Pod Security Standard, and every platform pod is admitted under it", async () => {
    const ns = await client.get({ apiVersion: "v1", kind: "Namespace", name: alpha });
    expect(ns.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    // The API server refuses a privileged pod in the tenant namespace...
    const refused = await client
      .create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "privileged", namespace: alpha },
        spec: { containers: [{ name: "x", image: "busybox", securityContext: { privileged: true } }] },
      } as KubeObject)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(String(refused)).toContain('violates PodSecurity "restricted:latest"');
    // ...while every pod the operator rendered exists and is Ready.
    const platform = await readPlatform(client, alpha, NAME);
    const desired = Object.values(platform.status?.componentStatuses ?? {}).reduce(
      (n, s) => n + s.desired,
      0,
    );
    const pods = (await listIn(alpha, "v1", "Pod")).filter(
      (p) => !p.metadata?.ownerReferences?.some((o) => o.kind === "Job"),
    );
    expect(pods.length).toBe(desired);
  });

  it("report a quota too small for the platform on the platform, naming the quota key", async () => {
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: beta, name: NAME },
      { spec: { tenancy: { resourceQuota: { "requests.cpu": "2" } } } },
    );
    const degraded = await eventually("a QuotaExceeded condition", async () => {
      const p = await readPlatform(client, beta, NAME);
      const c = p.status?.conditions?.find((x) => x.type === "Degraded");
      return c?.reason === "QuotaExceeded" ? { p, c } : undefined;
    });
    expect(degraded.c.message).toContain('spec.tenancy.resourceQuota["requests.cpu"]');
    expect(degraded.c.message).toContain("the quota allows 2");
    expect(degraded.p.status?.phase).toBe("Degraded");
  });

  it("refuse a spec that names a Secret in another namespace, naming the field", async () => {
    const doc = loadSample("tenant.yaml", alpha) as OntoPlatform & { metadata: { name: string } };
    doc.metadata.name = "sneaky";
    doc.spec.global = { tlsEnabled: true, tlsSecretName: "kube-system/admin-tls" };
    const err = await client.apply(doc as unknown as KubeObject, { dryRun: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvalidError);
    expect(String((err as Error).message)).toContain("spec.global.tlsSecretName");
  });

  it("refuse a second platform in a namespace that already has one", async () => {
    const doc = loadSample("minimal.yaml", alpha) as OntoPlatform & { metadata: { name: string } };
    doc.metadata.name = "intruder";
    await client.apply(doc);
    const p = await eventually("the intruder reported", async () => {
      const got = await readPlatform(client, alpha, "intruder");
      return got.status?.conditions?.some((c) => c.reason === "NamespaceTaken") ? got : undefined;
    });
    expect(p.status?.phase).toBe("Error");
    expect(p.status?.conditions?.find((c) => c.reason === "NamespaceTaken")?.message).toContain(NAME);
    const deployments = await listIn(alpha, "apps/v1", "Deployment");
    expect(deployments.every((d) => d.metadata?.labels?.["app.kubernetes.io/instance"] === NAME)).toBe(true);
  });
});
