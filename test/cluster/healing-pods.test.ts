// Crash-loop diagnosis and evicted-pod cleanup end to end (issue 7).
// - Crash loop: the platform's TLS Secret is deleted (with a Secret of someone else's in the
//   platform CA's place, so the operator cannot issue a new one) and schema-registry's new pods crash-loop
//   (KWOK fault stage crashloop, exit code and message from annotations): the CrashLoop condition
//   and a Warning Event name the missing Secret, the exit code and the message; nothing restarts.
//   With kafka's pods never Ready, a crash-looping data-service is diagnosed DependencyNotReady.
// - Evicted: a Ready auth-service pod is given the status the kubelet writes when it evicts (phase
//   Failed, reason Evicted) on a node whose status reports DiskPressure: the healer deletes it and
//   the Event carries the node's pressure condition. The node is restored in a finally block.
// - Rate limit: with maxActionsPerHour 1, one memory raise, then HealingWithheld.
import { useOperator } from "../support/operator.js";
import { auditLines } from "../support/audit.js";
import { isPodReady } from "../../src/controllers/shared/kube-views.js";
import { afterAll, describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, readPlatform, tlsSecret } from "../support/platform.js";
import { events, podsOf, seconds, testerClient } from "./healing-support.js";

const NAME = "onto-minimal";
const fx = useOperator({
  namespaces: ["heal-pods"],
  tlsSecret: true,
  platform: (namespace) => {
    const platform: OntoPlatform = loadSample("minimal.yaml", namespace);
    platform.spec.global = { tlsEnabled: true, tlsSecretName: "onto-tls" };
    return platform;
  },
});
const { client, ns } = fx;
const timeline: Record<string, string> = {};

type NodeObj = KubeObject & {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
};

afterAll(() => {
  console.log(`pod healing timeline (seconds from fault): ${JSON.stringify(timeline)}`);
});

describe("CrashLoopBackOff", () => {
  it("names the missing Secret, the exit code and the message in the condition and an Event", async () => {
    // A missing platform certificate is issued by the operator at once, unless the Secret where
    // it keeps the platform's CA is someone else's (it then writes nothing and says so).
    await client.apply({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${NAME}-ca`, namespace: ns },
      data: { note: Buffer.from("not the operator's").toString("base64") },
    });
    await client.delete({ apiVersion: "v1", kind: "Secret", namespace: ns, name: "onto-tls" });
    const fault = Date.now();
    await testerClient().mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "schema-registry" },
      {
        spec: {
          template: {
            metadata: {
              labels: { "fault.onto.paas/mode": "crashloop" },
              annotations: {
                "fault.onto.paas/exit-code": "3",
                "fault.onto.paas/message": "open /etc/onto/tls/tls.crt: no such file or directory",
              },
            },
          },
        },
      },
    );
    const condition = await eventually(
      "the CrashLoop condition",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.conditions?.find((c) => c.type === "CrashLoop" && c.status === "True");
      },
      90_000,
    );
    timeline["crash loop diagnosed"] = seconds(fault);
    expect(condition.reason).toBe("MissingSecret");
    expect(condition.message).toContain("schema-registry:");
    expect(condition.message).toContain("Secret onto-tls (volume tls)");
    expect(condition.message).toContain("exit code 3");
    expect(condition.message).toContain("no such file or directory");

    const event = await eventually("a MissingSecret Event", async () =>
      (await events(client, ns)).find((e) => e.reason === "MissingSecret" && e.type === "Warning"),
    );
    expect(event.note).toContain("Secret onto-tls");
    // No blind restart: the healer deleted no pod of the crash-looping component.
    expect(auditLines(fx.operator.auditLog, "healer").filter((l) => l.verb !== "status")).toEqual([]);
  });

  it("clears the condition once the Secret is back and the pods run", async () => {
    await client.apply(await tlsSecret(ns, "onto-tls"));
    await client.delete({ apiVersion: "v1", kind: "Secret", namespace: ns, name: `${NAME}-ca` });
    await testerClient().mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "schema-registry" },
      { spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } } },
    );
    const cleared = await eventually(
      "the CrashLoop condition False",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.conditions?.find((c) => c.type === "CrashLoop" && c.status === "False");
      },
      90_000,
    );
    expect(cleared.reason).toBe("NoCrashLoop");
  });
});

describe("CrashLoopBackOff with a dependency down", () => {
  it("names the backing service that is not Ready", async () => {
    const tester = testerClient();
    const kafka = { apiVersion: "apps/v1", kind: "StatefulSet", namespace: ns, name: "kafka" };
    const dataService = { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "data-service" };
    const fault = Date.now();
    try {
      await tester.mergePatch(kafka, {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "never-ready" } } } },
      });
      await tester.mergePatch(dataService, {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "crashloop" } } } },
      });
      const condition = await eventually(
        "a DependencyNotReady diagnosis",
        async () => {
          const p = await readPlatform(client, ns, NAME);
          const c = p.status?.conditions?.find((c) => c.type === "CrashLoop" && c.status === "True");
          return c?.message.includes("data-service:") && c.message.includes("kafka (") ? c : undefined;
        },
        90_000,
      );
      timeline["dependency diagnosed"] = seconds(fault);
      expect(condition.message).toMatch(/data-service: .* depends on kafka \(\d+\/\d+ pods ready\)/);
      const event = await eventually("a DependencyNotReady Event", async () =>
        (await events(client, ns)).find((e) => e.reason === "DependencyNotReady"),
      );
      expect(event.note).toContain("kafka");
    } finally {
      await tester.mergePatch(dataService, {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } },
      });
      await tester.mergePatch(kafka, {
        spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } },
      });
    }
  });
});

describe("Evicted", () => {
  it("deletes an evicted pod and records the node's pressure condition in the Event", async () => {
    const pod = (await podsOf(client, ns, "auth-service")).find(isPodReady);
    if (!pod?.metadata?.name || !pod.spec?.nodeName) throw new Error("no Ready auth-service pod");
    const nodeName = pod.spec.nodeName;
    const nodeRef = { apiVersion: "v1", kind: "Node", name: nodeName };
    const tester = testerClient();
    // The label keeps KWOK's heartbeat from writing DiskPressure back to False (stages.yaml); the
    // condition is also written here so that it shows at once rather than at the next heartbeat.
    const setDiskPressure = async (on: boolean): Promise<void> => {
      await tester.mergePatch(nodeRef, {
        metadata: { labels: { "fault.onto.paas/disk-pressure": on ? "true" : null } },
      });
      const node = await client.get<NodeObj>(nodeRef);
      const conditions = (node.status?.conditions ?? []).map((c) =>
        c.type === "DiskPressure"
          ? {
              ...c,
              status: on ? "True" : "False",
              reason: on ? "KubeletHasDiskPressure" : "KubeletHasNoDiskPressure",
              message: on ? "simulated: the node's disk is nearly full" : "kubelet has no disk pressure",
            }
          : c,
      );
      await tester.mergePatch(nodeRef, { status: { conditions } }, "status");
    };
    try {
      await setDiskPressure(true);
      // The healer reads nodes from its cache: wait until it holds the pressure.
      const nodes = fx.operator.manager.informers.informer({ apiVersion: "v1", kind: "Node" }).store;
      await eventually("the operator's cache to see DiskPressure", async () => {
        const held: NodeObj | undefined = nodes.getByName(undefined, nodeName);
        return held?.status?.conditions?.some((c) => c.type === "DiskPressure" && c.status === "True")
          ? true
          : undefined;
      });
      const fault = Date.now();
      await tester.mergePatch(
        { apiVersion: "v1", kind: "Pod", namespace: ns, name: pod.metadata.name },
        {
          status: {
            phase: "Failed",
            reason: "Evicted",
            message: "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi.",
          },
        },
        "status",
      );
      await eventually("the evicted pod deleted", async () =>
        (await client.getIfExists({
          apiVersion: "v1",
          kind: "Pod",
          namespace: ns,
          name: pod.metadata?.name ?? "",
        }))
          ? undefined
          : true,
      );
      timeline["evicted pod deleted"] = seconds(fault);
      const event = await eventually("an Evicted Event", async () =>
        (await events(client, ns)).find(
          (e) => e.reason === "Evicted" && e.note?.includes(pod.metadata?.name ?? "?"),
        ),
      );
      expect(event.note).toContain("low on resource: ephemeral-storage");
      expect(event.note).toContain(`node ${nodeName} reports DiskPressure=True (KubeletHasDiskPressure)`);
      const metric = await fx.operator.manager.metrics.registry.getSingleMetricAsString(
        "onto_healing_actions_total",
      );
      expect(metric).toMatch(/action="delete-evicted",reason="Evicted"\} 1/);
    } finally {
      await setDiskPressure(false);
    }
  });
});

describe("the hourly rate limit", () => {
  it("raises once with maxActionsPerHour 1, then holds back and says so", async () => {
    await client.mergePatch(
      { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", namespace: ns, name: NAME },
      { spec: { selfHealing: { maxActionsPerHour: 1, cooldownSeconds: 0 } } },
    );
    const fault = Date.now();
    await testerClient().mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "auth-service" },
      { spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "oom" } } } } },
    );
    const withheld = await eventually(
      "HealingWithheld for the rate limit",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const c = p.status?.conditions?.find((c) => c.type === "HealingWithheld" && c.status === "True");
        return c?.message.includes("rate limit of 1 healing actions per hour") ? c : undefined;
      },
      90_000,
    );
    timeline["rate limit reached"] = seconds(fault);
    expect(withheld.message).toContain("raise the memory limit of auth-service");
    const platform = await readPlatform(client, ns, NAME);
    // The default limit (1Gi) was raised once, to 1536Mi, and not again.
    expect(platform.status?.healing?.memoryOverrides?.["auth-service"]).toMatchObject({
      memoryLimit: "1536Mi",
      raises: 1,
    });
    expect(platform.status?.healing?.recentActions?.length).toBe(1);
  });
});
