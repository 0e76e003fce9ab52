// Unit rules of upgrades that need no cluster: which components a version change plans, which
// paths are refused, how a pod's state reads as a fault, and that render only restarts the pods
// whose image changes (no version label on pod templates).
import { describe, expect, it } from "vitest";
import { COMPONENTS, resolveSpec } from "../../api/index.js";
import { releaseFor } from "../../release/index.js";
import { renderPlatform, type RenderedObject } from "../../render/index.js";
import type { PodView, WorkloadView } from "../shared/kube-views.js";
import { podFault, readySince, statefulSetRolledOut, stuckStatefulSetPods } from "./health.js";
import { catalogWithFile } from "../../../test/support/releases.js";
import { pathFor, pathRefusal, planUpgrade } from "./plan.js";

const REGISTRY = { registry: "registry.example.com/coomia-dip" };
const catalog = catalogWithFile(
  new URL("../../../test/releases/upgrade-faults.yaml", import.meta.url).pathname,
);
const all = (version: string): Map<string, string> => new Map(COMPONENTS.map((c) => [c.name, version]));

describe("planUpgrade", () => {
  it("plans every component whose image changes, in plane order", () => {
    expect(planUpgrade(COMPONENTS, all("1.5.0"), "1.6.0", catalog, REGISTRY)).toEqual(
      COMPONENTS.map((c) => c.name),
    );
  });

  it("skips components whose image a patch release keeps", () => {
    const plan = planUpgrade(COMPONENTS, all("1.6.0"), "1.6.1", catalog, REGISTRY);
    expect(plan).toContain("redis");
    expect(plan).toContain("ontology-service");
    expect(plan).not.toContain("postgres");
    expect(plan).not.toContain("kafka");
  });

  it("plans from the version each component runs (after a partial upgrade)", () => {
    const current = all("1.5.0");
    current.set("postgres", "1.6.0");
    const plan = planUpgrade(COMPONENTS, current, "1.6.0", catalog, REGISTRY);
    expect(plan).not.toContain("postgres");
    expect(plan[0]).toBe("redis");
  });

  it("takes releases from objects: only the services of a test release change", () => {
    expect(planUpgrade(COMPONENTS, all("1.5.0"), "1.5.1-crashloop", catalog, REGISTRY)[0]).toBe(
      "ontology-service",
    );
  });
});

describe("the upgrade graph", () => {
  it("needs force for a downgrade and a skipped minor, and lets the next minor or a patch through", () => {
    expect(pathFor(catalog, "1.6.0", "1.5.0")).toMatchObject({
      path: "ForceRequired",
      message: expect.stringMatching(/^1\.6\.0 -> 1\.5\.0: a downgrade/) as unknown,
    });
    expect(pathRefusal(catalog, "1.5.0", "1.7.0", false)).toEqual({
      message: "1.5.0 -> 1.7.0: skips the 1.6 line and its migrations",
      forceHelps: true,
    });
    expect(pathRefusal(catalog, "1.5.0", "1.7.0", true)).toBeUndefined();
    expect(pathRefusal(catalog, "1.5.0", "1.6.0", false)).toBeUndefined();
    expect(pathRefusal(catalog, "1.6.0", "1.6.1", false)).toBeUndefined();
  });

  it("refuses what no rule covers and what a rule refuses, even forced", () => {
    expect(pathRefusal(catalog, "1.2.0", "1.4.2", true)).toMatchObject({
      message: expect.stringContaining("lists no upgrade path from 1.2.0") as unknown,
      forceHelps: false,
    });
    expect(pathFor(catalog, "1.5.0", "9.9.9").path).toBe("Refused");
  });
});

function pod(status: PodView["status"], labels: Record<string, string> = {}, name = "p-0"): PodView {
  return { apiVersion: "v1", kind: "Pod", metadata: { name, labels }, status };
}

describe("podFault", () => {
  it("reads a crash loop with exit code and message", () => {
    const fault = podFault(
      pod({
        phase: "Running",
        containerStatuses: [
          {
            name: "app",
            restartCount: 2,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { exitCode: 3, reason: "Error", message: "schema mismatch" } },
          },
        ],
      }),
    );
    expect(fault).toEqual({
      reason: "CrashLoopBackOff",
      message: "pod p-0: container app exited with code 3 (Error): schema mismatch; restarted 2 time(s)",
    });
  });

  it("reads an OOM kill before a crash loop", () => {
    const fault = podFault(
      pod({
        containerStatuses: [
          {
            name: "app",
            restartCount: 1,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { exitCode: 137, reason: "OOMKilled" } },
          },
        ],
      }),
    );
    expect(fault?.reason).toBe("OOMKilled");
    expect(fault?.message).toMatch(/exit code 137/);
  });

  it("fails an image that cannot be pulled at once, and not a pod that is merely not Ready", () => {
    expect(
      podFault(
        pod({ containerStatuses: [{ name: "app", state: { waiting: { reason: "ImagePullBackOff" } } }] }),
      )?.reason,
    ).toBe("ImagePullBackOff");
    const notReady = pod({
      phase: "Running",
      conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
      containerStatuses: [{ name: "app", restartCount: 0, state: { running: {} } }],
    });
    expect(podFault(notReady)).toBeUndefined();
    expect(readySince(notReady)).toBeUndefined();
  });
});

describe("stuckStatefulSetPods", () => {
  const sts: WorkloadView = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "kafka", generation: 4 },
    spec: {
      replicas: 3,
      template: { spec: { containers: [{ name: "kafka", image: "apache/kafka:3.7.1" }] } },
    },
    status: { observedGeneration: 4, currentRevision: "kafka-old", updateRevision: "kafka-old" },
  };
  const ready = [{ type: "Ready", status: "True" }];
  const notReady = [{ type: "Ready", status: "False" }];
  const pods = [
    pod({ conditions: ready }, { "controller-revision-hash": "kafka-old" }, "kafka-0"),
    pod({ conditions: ready }, { "controller-revision-hash": "kafka-new" }, "kafka-1"),
    pod({ conditions: notReady }, { "controller-revision-hash": "kafka-new" }, "kafka-2"),
  ];

  it("names only not-Ready pods on another revision, once the reverted template is observed", () => {
    expect(stuckStatefulSetPods(sts, "apache/kafka:3.7.1", pods).map((p) => p.metadata?.name)).toEqual([
      "kafka-2",
    ]);
    expect(
      stuckStatefulSetPods(
        { ...sts, status: { ...sts.status, observedGeneration: 3 } },
        "apache/kafka:3.7.1",
        pods,
      ),
    ).toEqual([]);
    expect(stuckStatefulSetPods(sts, "apache/kafka:3.8.1", pods)).toEqual([]);
  });
});

describe("statefulSetRolledOut", () => {
  const image = "postgres:16.4";
  const sts = (annotations: Record<string, string>, updatedReplicas: number): WorkloadView => ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "postgres", generation: 2, annotations },
    spec: {
      replicas: 2,
      updateStrategy: { type: "OnDelete" },
      template: { spec: { containers: [{ name: "postgres", image }] } },
    },
    // Under OnDelete Kubernetes never moves currentRevision to the updateRevision.
    status: {
      observedGeneration: 2,
      replicas: 2,
      updatedReplicas,
      currentRevision: "old",
      updateRevision: "new",
    },
  });
  const ready = [{ type: "Ready", status: "True" }];
  const pods = (second: string) => [
    {
      ...pod({ conditions: ready }, { "controller-revision-hash": "new" }, "postgres-0"),
      spec: { containers: [{ name: "postgres", image }] },
    },
    {
      ...pod({ conditions: ready }, { "controller-revision-hash": second }, "postgres-1"),
      spec: { containers: [{ name: "postgres", image }] },
    },
  ];

  it("under OnDelete: every pod on the update revision and Ready, no partition annotation", () => {
    expect(statefulSetRolledOut(sts({}, 2), image, pods("new"))).toBe(true);
    expect(statefulSetRolledOut(sts({}, 1), image, pods("old"))).toBe(false);
    expect(statefulSetRolledOut(sts({ "onto.paas/partition": "1" }, 2), image, pods("new"))).toBe(false);
  });
});

describe("render during upgrades", () => {
  const objects = (version: string): RenderedObject[] => {
    const spec = resolveSpec({ version });
    return renderPlatform({
      platform: { name: "p", namespace: "ns", uid: "u" },
      spec,
      release: releaseFor(version),
      capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
      generateSecret: ({ length }) => "x".repeat(length),
    });
  };
  const template = (objs: RenderedObject[], kind: string, name: string): unknown => {
    const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
    return (found?.spec as { template?: unknown } | undefined)?.template;
  };

  it("keeps the pod template of a component whose image a version keeps (no restart)", () => {
    const before = objects("1.6.0");
    const after = objects("1.6.1");
    expect(template(after, "StatefulSet", "postgres")).toEqual(template(before, "StatefulSet", "postgres"));
    expect(template(after, "StatefulSet", "redis")).not.toEqual(template(before, "StatefulSet", "redis"));
    const labels = (
      template(after, "StatefulSet", "postgres") as { metadata: { labels: Record<string, string> } }
    ).metadata.labels;
    expect(labels["app.kubernetes.io/version"]).toBeUndefined();
    const workload = after.find((o) => o.kind === "StatefulSet" && o.metadata.name === "postgres");
    expect(workload?.metadata.labels["app.kubernetes.io/version"]).toBe("1.6.1");
  });
});
