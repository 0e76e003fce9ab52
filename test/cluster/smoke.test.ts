// Proof that the local control plane is real Kubernetes: controllers, scheduler, storage
// provisioning, admission, RBAC, server-side apply, watches and the KWOK fault stages all behave
// as on a real cluster.
import { isPodReady } from "../../src/controllers/shared/kube-views.js";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { adminKubeConfig, createTestNamespace, eventually } from "../support/cluster.js";

const kc = adminKubeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);

const restricted = {
  runAsNonRoot: true,
  runAsUser: 1000,
  seccompProfile: { type: "RuntimeDefault" },
} satisfies k8s.V1PodSecurityContext;

function container(image: string, extra: Partial<k8s.V1Container> = {}): k8s.V1Container {
  return {
    name: "app",
    image,
    resources: { requests: { cpu: "10m", memory: "16Mi" } },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    ...extra,
  };
}

function deployment(
  name: string,
  image: string,
  replicas: number,
  labels: Record<string, string> = {},
): k8s.V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...labels } },
        spec: { securityContext: restricted, containers: [container(image)] },
      },
    },
  };
}

async function podsOf(ns: string, app: string): Promise<k8s.V1Pod[]> {
  return (await core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items;
}

function statusCode(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

let ns = "";
beforeAll(async () => {
  ns = await createTestNamespace("smoke");
});

describe("workload controllers, scheduler and KWOK", () => {
  it("runs a Deployment through a ReplicaSet to Ready pods on simulated nodes", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment("web", "registry.local/web:1.0.0", 3),
    });
    const pods = await eventually("3 web pods Ready", async () => {
      const list = await podsOf(ns, "web");
      return list.length === 3 && list.every(isPodReady) ? list : undefined;
    });
    const sets = await apps.listNamespacedReplicaSet({ namespace: ns, labelSelector: "app=web" });
    expect(sets.items).toHaveLength(1);
    expect(pods.every((p) => p.metadata?.ownerReferences?.[0]?.kind === "ReplicaSet")).toBe(true);
    const nodes = new Set(pods.map((p) => p.spec?.nodeName));
    expect([...nodes].every((n) => n?.startsWith("worker-"))).toBe(true);
    const dep = await eventually("deployment status to count 3 ready replicas", async () => {
      const d = await apps.readNamespacedDeployment({ name: "web", namespace: ns });
      return d.status?.readyReplicas === 3 ? d : undefined;
    });
    expect(dep.status?.availableReplicas).toBe(3);
  });

  it("binds the PVCs of a StatefulSet and makes its pods Ready", async () => {
    await apps.createNamespacedStatefulSet({
      namespace: ns,
      body: {
        metadata: { name: "db" },
        spec: {
          serviceName: "db",
          replicas: 2,
          selector: { matchLabels: { app: "db" } },
          template: {
            metadata: { labels: { app: "db" } },
            spec: {
              securityContext: restricted,
              containers: [
                container("registry.local/db:1", { volumeMounts: [{ name: "data", mountPath: "/data" }] }),
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
            },
          ],
        },
      },
    });
    await eventually("2 db pods Ready", async () => {
      const list = await podsOf(ns, "db");
      return list.length === 2 && list.every(isPodReady) ? true : undefined;
    });
    const claims = await core.listNamespacedPersistentVolumeClaim({ namespace: ns });
    expect(claims.items.map((c) => c.metadata?.name).sort()).toEqual(["data-db-0", "data-db-1"]);
    await eventually("both PVCs Bound", async () => {
      const list = await core.listNamespacedPersistentVolumeClaim({ namespace: ns });
      return list.items.every((c) => c.status?.phase === "Bound") ? true : undefined;
    });
  });

  it("places a GPU pod only on a GPU node, and refuses GPU capacity to a pod without the toleration", async () => {
    const gpuPod = (name: string, tolerate: boolean): k8s.V1Pod => ({
      metadata: { name, labels: { app: name } },
      spec: {
        securityContext: restricted,
        tolerations: tolerate ? [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }] : [],
        containers: [
          container("registry.local/reasoning:1", {
            resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { "nvidia.com/gpu": "1" } },
          }),
        ],
      },
    });
    await core.createNamespacedPod({ namespace: ns, body: gpuPod("gpu-ok", true) });
    await core.createNamespacedPod({ namespace: ns, body: gpuPod("gpu-no-toleration", false) });
    const placed = await eventually("gpu-ok Ready", async () => {
      const p = await core.readNamespacedPod({ name: "gpu-ok", namespace: ns });
      return isPodReady(p) ? p : undefined;
    });
    expect(placed.spec?.nodeName).toMatch(/^gpu-/);
    const refused = await eventually("gpu-no-toleration reported Unschedulable", async () => {
      const p = await core.readNamespacedPod({ name: "gpu-no-toleration", namespace: ns });
      const cond = p.status?.conditions?.find((c) => c.type === "PodScheduled");
      return cond?.status === "False" ? p : undefined;
    });
    expect(refused.spec?.nodeName).toBeUndefined();
  });
});

describe("API server machinery", () => {
  it("server-side apply records the field manager and reports a conflict between managers", async () => {
    const cm = (value: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "ssa", namespace: ns },
      data: { level: value },
    });
    await objects.patch(
      cm("info"),
      undefined,
      undefined,
      "manager-a",
      false,
      k8s.PatchStrategy.ServerSideApply,
    );
    const stored = await core.readNamespacedConfigMap({ name: "ssa", namespace: ns });
    expect(stored.metadata?.managedFields?.map((f) => f.manager)).toContain("manager-a");
    const conflict = await objects
      .patch(cm("debug"), undefined, undefined, "manager-b", false, k8s.PatchStrategy.ServerSideApply)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(statusCode(conflict)).toBe(409);
    await objects.patch(
      cm("debug"),
      undefined,
      undefined,
      "manager-b",
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
    const forced = await core.readNamespacedConfigMap({ name: "ssa", namespace: ns });
    expect(forced.data?.level).toBe("debug");
  });

  it("a watch sees every change in order", async () => {
    const seen: string[] = [];
    const watch = new k8s.Watch(kc);
    const controller = await watch.watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { labelSelector: "watched=yes" },
      (phase, obj: k8s.V1ConfigMap) => seen.push(`${phase}:${obj.metadata?.name}:${obj.data?.v ?? ""}`),
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: "w", labels: { watched: "yes" } }, data: { v: "1" } },
      });
      await core.patchNamespacedConfigMap(
        { name: "w", namespace: ns, body: { data: { v: "2" } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ name: "w", namespace: ns });
      await eventually("three watch events", async () => (seen.length >= 3 ? true : undefined), 10_000);
    } finally {
      controller.abort();
    }
    expect(seen).toEqual(["ADDED:w:1", "MODIFIED:w:2", "DELETED:w:2"]);
  });

  it("a CRD with a CEL rule refuses an object that breaks it, naming the field", async () => {
    // A group of its own per run, so a leftover CRD from an interrupted run never collides.
    const group = `smoke${Date.now().toString(36)}.onto.test`;
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `ranges.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "ranges", singular: "range", kind: "Range", listKind: "RangeList" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: {
                    spec: {
                      type: "object",
                      properties: { min: { type: "integer" }, max: { type: "integer" } },
                      x_kubernetes_validations: [
                        {
                          rule: "self.min <= self.max",
                          message: "min must not exceed max",
                          fieldPath: ".min",
                        },
                      ],
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    const range = (min: number, max: number) => ({
      apiVersion: `${group}/v1`,
      kind: "Range",
      metadata: { name: `r-${min}-${max}`, namespace: ns },
      spec: { min, max },
    });
    await eventually("the CRD to be served", async () => {
      const created = await objects.create(range(1, 2)).catch(() => undefined);
      return created ? true : undefined;
    });
    const refused = await objects.create(range(5, 2)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(statusCode(refused)).toBe(422);
    expect(String((refused as k8s.ApiException<unknown>).body)).toContain("spec.min");
    expect(String((refused as k8s.ApiException<unknown>).body)).toContain("min must not exceed max");
    await ext.deleteCustomResourceDefinition({ name: `ranges.${group}` });
  });

  it("an identity bound to a narrow Role is refused outside it", async () => {
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: "narrow" } } });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: "read-configmaps" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: "narrow-read-configmaps" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-configmaps" },
        subjects: [{ kind: "ServiceAccount", name: "narrow", namespace: ns }],
      },
    });
    const token = await core.createNamespacedServiceAccountToken({
      name: "narrow",
      namespace: ns,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const narrow = new k8s.KubeConfig();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("admin kubeconfig has no cluster");
    narrow.loadFromClusterAndUser(cluster, { name: "narrow", token: token.status?.token ?? "" });
    const narrowCore = narrow.makeApiClient(k8s.CoreV1Api);
    const allowed = await eventually("the binding to take effect", async () =>
      narrowCore.listNamespacedConfigMap({ namespace: ns }).catch(() => undefined),
    );
    expect(allowed.items.length).toBeGreaterThan(0);
    const secrets = await narrowCore.listNamespacedSecret({ namespace: ns }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusCode(secrets)).toBe(403);
    const elsewhere = await narrowCore.listNamespacedConfigMap({ namespace: "default" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(statusCode(elsewhere)).toBe(403);
    const write = await narrowCore
      .createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "not-allowed" } } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(statusCode(write)).toBe(403);
  });
});

describe("KWOK fault stages", () => {
  it("oom: the container is OOMKilled again and again, restart count rising", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment("oom", "registry.local/svc:1.0.0-oom", 1),
    });
    const first = await eventually("an OOMKilled last state", async () => {
      const [pod] = await podsOf(ns, "oom");
      const status = pod?.status?.containerStatuses?.[0];
      return status?.lastState?.terminated?.reason === "OOMKilled" ? status : undefined;
    });
    expect(first.lastState?.terminated?.exitCode).toBe(137);
    expect(first.state?.waiting?.reason).toBe("CrashLoopBackOff");
    const later = await eventually(
      "the restart count to rise",
      async () => {
        const [pod] = await podsOf(ns, "oom");
        const status = pod?.status?.containerStatuses?.[0];
        return (status?.restartCount ?? 0) > first.restartCount ? status : undefined;
      },
      30_000,
    );
    expect(later.restartCount).toBeGreaterThan(first.restartCount);
  });

  it("crashloop by label: CrashLoopBackOff with the exit code and message from annotations", async () => {
    const body = deployment("crash", "registry.local/svc:1.0.0", 1, { "fault.onto.paas/mode": "crashloop" });
    body.spec!.template.metadata!.annotations = {
      "fault.onto.paas/exit-code": "3",
      "fault.onto.paas/message": "secret db-credentials not found",
    };
    await apps.createNamespacedDeployment({ namespace: ns, body });
    const status = await eventually("CrashLoopBackOff", async () => {
      const [pod] = await podsOf(ns, "crash");
      const s = pod?.status?.containerStatuses?.[0];
      return s?.state?.waiting?.reason === "CrashLoopBackOff" ? s : undefined;
    });
    expect(status.lastState?.terminated?.exitCode).toBe(3);
    expect(status.lastState?.terminated?.message).toBe("secret db-credentials not found");
    expect(status.ready).toBe(false);
  });

  it("never-ready by image tag: the pod runs but never becomes Ready", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment("stuck", "registry.local/svc:1.6.0-never-ready", 1),
    });
    const pod = await eventually("the pod Running", async () => {
      const [p] = await podsOf(ns, "stuck");
      return p?.status?.phase === "Running" ? p : undefined;
    });
    expect(isPodReady(pod)).toBe(false);
    // Give KWOK time to (wrongly) make it Ready, then check it did not.
    await new Promise((r) => setTimeout(r, 3000));
    const [again] = await podsOf(ns, "stuck");
    expect(again && isPodReady(again)).toBe(false);
    const dep = await apps.readNamespacedDeployment({ name: "stuck", namespace: ns });
    expect(dep.status?.readyReplicas ?? 0).toBe(0);
  });

  it("a running pod marked not Ready by the node lifecycle controller is Ready again, as a kubelet re-posts it", async () => {
    await apps.createNamespacedDeployment({
      namespace: ns,
      body: deployment("marked", "registry.local/svc:1.0.0", 1),
    });
    const ready = await eventually("the pod Ready", async () => {
      const [p] = await podsOf(ns, "marked");
      return p && isPodReady(p) ? p : undefined;
    });
    // What the node lifecycle controller writes when the pod's node missed its heartbeats (e.g.
    // while the API server was down): Ready False, every other condition left as it was.
    const marked = await eventually(
      "the pod marked not Ready",
      async () => {
        const pod = await core.readNamespacedPod({ name: ready.metadata!.name!, namespace: ns });
        pod.status!.conditions = pod.status!.conditions!.map((c) =>
          c.type === "Ready" ? { ...c, status: "False", lastTransitionTime: new Date() } : c,
        );
        return core
          .replaceNamespacedPodStatus({ name: ready.metadata!.name!, namespace: ns, body: pod })
          .then(
            (p) => (isPodReady(p) ? undefined : p),
            () => undefined,
          );
      },
      30_000,
    );
    expect(isPodReady(marked)).toBe(false);
    await eventually(
      "the pod Ready again and the Deployment's replica ready",
      async () => {
        const pod = await core.readNamespacedPod({ name: ready.metadata!.name!, namespace: ns });
        const dep = await apps.readNamespacedDeployment({ name: "marked", namespace: ns });
        return isPodReady(pod) && dep.status?.readyReplicas === 1 ? true : undefined;
      },
      60_000,
    );
  });

  it("node not-ready: the node lifecycle controller taints the node and evicts its pods", async () => {
    const nodeName = "worker-6";
    const pod: k8s.V1Pod = {
      metadata: { name: "on-doomed-node", labels: { app: "doomed" } },
      spec: {
        nodeName,
        securityContext: restricted,
        // Short toleration, so eviction follows the taint within seconds instead of the default 30 s.
        tolerations: [
          {
            key: "node.kubernetes.io/not-ready",
            operator: "Exists",
            effect: "NoExecute",
            tolerationSeconds: 2,
          },
          {
            key: "node.kubernetes.io/unreachable",
            operator: "Exists",
            effect: "NoExecute",
            tolerationSeconds: 2,
          },
        ],
        containers: [container("registry.local/svc:1.0.0")],
      },
    };
    await core.createNamespacedPod({ namespace: ns, body: pod });
    await eventually("the pod Ready", async () =>
      isPodReady(await core.readNamespacedPod({ name: "on-doomed-node", namespace: ns })) ? true : undefined,
    );
    const label = (value: string | null) =>
      core.patchNode(
        { name: nodeName, body: { metadata: { labels: { "fault.onto.paas/node-not-ready": value } } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    await label("true");
    try {
      const node = await eventually(
        "the node NotReady and tainted",
        async () => {
          const n = await core.readNode({ name: nodeName });
          const ready = n.status?.conditions?.find((c) => c.type === "Ready");
          const tainted = n.spec?.taints?.some(
            (t) => t.key === "node.kubernetes.io/not-ready" && t.effect === "NoExecute",
          );
          return ready?.status === "False" && tainted ? n : undefined;
        },
        60_000,
      );
      expect(node.spec?.taints?.map((t) => t.key)).toContain("node.kubernetes.io/not-ready");
      await eventually(
        "the pod evicted",
        async () => {
          const gone = await core.readNamespacedPod({ name: "on-doomed-node", namespace: ns }).then(
            (p) => p.metadata?.deletionTimestamp !== undefined,
            (err: unknown) => statusCode(err) === 404,
          );
          return gone ? true : undefined;
        },
        60_000,
      );
    } finally {
      await label(null);
      await eventually(
        "the node Ready again",
        async () => {
          const n = await core.readNode({ name: nodeName });
          return n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
            ? true
            : undefined;
        },
        60_000,
      );
    }
  });
});
