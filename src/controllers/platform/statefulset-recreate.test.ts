import { describe, expect, it } from "vitest";
import { INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL, type OntoPlatform } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { immutableChanges, planRecreations } from "./statefulset-recreate.js";

const platform = { metadata: { name: "p", namespace: "ns", uid: "u1" } } as OntoPlatform;
const labels = { [MANAGED_BY_LABEL]: MANAGED_BY, [INSTANCE_LABEL]: "p" };

function sts(storage: string, extra: Record<string, unknown> = {}): RenderedObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "redis", namespace: "ns", labels },
    spec: {
      serviceName: "redis-headless",
      podManagementPolicy: "OrderedReady",
      selector: { matchLabels: { app: "redis" } },
      replicas: 1,
      volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage } } } }],
      ...extra,
    },
  };
}

/** The live copy as the API server keeps it: defaults added, owned by the platform. */
function live(obj: RenderedObject, extra: Record<string, unknown> = {}): KubeObject {
  const copy = structuredClone(obj) as unknown as KubeObject & { spec: { volumeClaimTemplates: object[] } };
  copy.spec.volumeClaimTemplates = copy.spec.volumeClaimTemplates.map((t) => ({
    ...t,
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    status: { phase: "Pending" },
  }));
  return {
    ...copy,
    metadata: {
      ...copy.metadata,
      uid: "s1",
      ownerReferences: [{ apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", name: "p", uid: "u1" }],
      ...extra,
    },
  };
}

describe("immutableChanges", () => {
  it("names the claim template's storage, not the API server's defaults; quantities compare by value", () => {
    expect(immutableChanges(sts("5Gi"), live(sts("5120Mi")))).toEqual([]);
    expect(immutableChanges(sts("6Gi"), live(sts("5Gi")))).toEqual([
      "spec.volumeClaimTemplates[0].spec.resources.requests.storage",
    ]);
  });

  it("names podManagementPolicy and serviceName; replicas and the template are not immutable", () => {
    const want = sts("5Gi", { podManagementPolicy: "Parallel", serviceName: "other", replicas: 3 });
    expect(immutableChanges(want, live(sts("5Gi")))).toEqual([
      "spec.serviceName",
      "spec.podManagementPolicy",
    ]);
  });
});

describe("planRecreations", () => {
  const plan = (desired: RenderedObject, current: KubeObject | undefined) =>
    planRecreations(platform, [desired], () => current);

  it("plans one re-creation for an immutable change and keeps the object from the apply stage", () => {
    const { actions, ids } = plan(sts("6Gi"), live(sts("5Gi")));
    expect(actions.map((a) => [a.reason, a.target.name])).toEqual([["Recreated", "redis"]]);
    expect(ids).toEqual(new Set(["StatefulSet/redis"]));
  });

  it("nothing for a missing StatefulSet (apply creates it) or an unchanged one", () => {
    expect(plan(sts("6Gi"), undefined).actions).toEqual([]);
    expect(plan(sts("5Gi"), live(sts("5Gi"))).actions).toEqual([]);
  });

  it("never deletes a StatefulSet the platform does not own", () => {
    const foreign = { ...live(sts("5Gi")), metadata: { name: "redis", namespace: "ns", labels } };
    expect(plan(sts("6Gi"), foreign as KubeObject).actions).toEqual([]);
  });

  it("a StatefulSet still being deleted (a pass interrupted after the delete) is waited for and created", () => {
    const terminating = live(sts("5Gi"), {
      deletionTimestamp: "2026-12-01T00:00:00Z",
      finalizers: ["orphan"],
    });
    const { actions, ids } = plan(sts("6Gi"), terminating);
    expect(actions.map((a) => a.message)).toEqual([
      "re-created StatefulSet/redis after its deletion finished; its pods were kept",
    ]);
    expect(ids.has("StatefulSet/redis")).toBe(true);
  });
});
