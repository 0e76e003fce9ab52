import { describe, expect, it } from "vitest";
import { REASON, resolveSpec, type OntoPlatform } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { storageClassProblems } from "./storage-class.js";
import { planClaimGrowth, planVolumeGrowth, withKeptStorage } from "./volume-growth.js";

function sts(name: string, storage: string): RenderedObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, namespace: "ns", labels: {} },
    spec: {
      replicas: 2,
      volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage } } } }],
    },
  };
}

function claim(name: string, storage: string, storageClassName?: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name, namespace: "ns" },
    spec: { ...(storageClassName ? { storageClassName } : {}), resources: { requests: { storage } } },
  } as KubeObject;
}

const classes: Record<string, KubeObject> = {
  grows: { metadata: { name: "grows" }, allowVolumeExpansion: true } as KubeObject,
  fixed: { metadata: { name: "fixed" } },
};
const storageClass = (name: string) => classes[name];
describe("planVolumeGrowth", () => {
  it("grows every claim of the StatefulSet that asks for less, where the class allows expansion", () => {
    const plan = planVolumeGrowth({
      desired: [sts("postgres", "30Gi")],
      live: () => sts("postgres", "20Gi"),
      claims: [
        claim("data-postgres-0", "20Gi", "grows"),
        claim("data-postgres-1", "20480Mi", "grows"),
        claim("data-postgres-extra", "1Gi", "grows"),
        claim("data-redis-0", "1Gi", "grows"),
      ],
      storageClass,
    });
    expect(plan.grow).toEqual([
      { claim: "data-postgres-0", workload: "postgres", from: "20Gi", to: "30Gi" },
      { claim: "data-postgres-1", workload: "postgres", from: "20480Mi", to: "30Gi" },
    ]);
    expect(plan.problems).toEqual([]);
    expect(plan.kept).toEqual(new Map());
  });

  it("never shrinks a claim, and leaves an equal one alone", () => {
    const plan = planVolumeGrowth({
      desired: [sts("redis", "5Gi")],
      live: () => undefined,
      claims: [claim("data-redis-0", "8Gi", "grows"), claim("data-redis-1", "5120Mi", "grows")],
      storageClass,
    });
    expect(plan.grow).toEqual([]);
    expect(plan.problems).toEqual([]);
  });

  it("a class without expansion: nothing grows, the template keeps its live size, the field and class are named", () => {
    const plan = planVolumeGrowth({
      desired: [sts("minio", "30Gi")],
      live: () => sts("minio", "20Gi"),
      claims: [claim("data-minio-0", "20Gi", "fixed"), claim("data-minio-1", "20Gi", "fixed")],
      storageClass,
    });
    expect(plan.grow).toEqual([]);
    expect(plan.kept).toEqual(new Map([["minio", "20Gi"]]));
    expect(plan.problems).toEqual([
      {
        field: "spec.infrastructure.minio.storage",
        reason: REASON.VolumeExpansionUnsupported,
        message:
          "minio: cannot grow data-minio-0, data-minio-1 to 30Gi: StorageClass fixed does not set allowVolumeExpansion: true; nothing was changed",
      },
    ]);
  });

  it("claims without a class or of a class that is gone cannot grow", () => {
    const plan = planVolumeGrowth({
      desired: [sts("nessie", "2Gi")],
      live: () => sts("nessie", "1Gi"),
      claims: [claim("data-nessie-0", "1Gi"), claim("data-nessie-1", "1Gi", "gone")],
      storageClass,
    });
    expect(plan.grow).toEqual([]);
    expect(plan.problems.map((p) => [p.field, p.message])).toEqual([
      [
        "spec.dataPlane.nessie.storage",
        "nessie: cannot grow data-nessie-0 to 2Gi: the claims have no StorageClass (statically provisioned volumes cannot grow); nothing was changed",
      ],
      [
        "spec.dataPlane.nessie.storage",
        "nessie: cannot grow data-nessie-1 to 2Gi: StorageClass gone does not exist; nothing was changed",
      ],
    ]);
  });

  it("the patch sets only the requested size", () => {
    const platform = { metadata: { name: "p", namespace: "ns" } } as OntoPlatform;
    const [action] = planClaimGrowth(platform, [
      { claim: "data-kafka-0", workload: "kafka", from: "50Gi", to: "60Gi" },
    ]);
    expect(action).toMatchObject({
      verb: "patch",
      reason: "VolumeGrown",
      target: { kind: "PersistentVolumeClaim", namespace: "ns", name: "data-kafka-0" },
    });
  });
});

describe("withKeptStorage", () => {
  it("sets the kept size at the component's spec path, on a resolved spec and on a written one", () => {
    const kept = new Map([
      ["postgres", "20Gi"],
      ["nessie", "1Gi"],
    ]);
    const resolved = withKeptStorage(resolveSpec({ version: "1.5.0" }), kept);
    expect(resolved.infrastructure.postgres.storage).toBe("20Gi");
    expect(resolved.dataPlane.nessie.storage).toBe("1Gi");
    const written = withKeptStorage(
      { version: "1.5.0", infrastructure: { postgres: { storage: "30Gi" } } },
      kept,
    );
    expect(written).toEqual({
      version: "1.5.0",
      infrastructure: { postgres: { storage: "20Gi" } },
      dataPlane: { nessie: { storage: "1Gi" } },
    });
  });
});

describe("storageClassProblems", () => {
  it("names spec.global.storageClass when the class does not exist", () => {
    const spec = (storageClass?: string) =>
      resolveSpec({ version: "1.5.0", global: storageClass ? { storageClass } : {} });
    expect(storageClassProblems(spec("grows"), storageClass)).toEqual([]);
    expect(storageClassProblems(spec(), storageClass)).toEqual([]);
    expect(storageClassProblems(spec("fast-ssd"), storageClass)).toEqual([
      {
        field: "spec.global.storageClass",
        reason: REASON.StorageClassNotFound,
        message:
          "StorageClass fast-ssd does not exist: the volumes of the stateful components cannot be provisioned",
      },
    ]);
  });
});
