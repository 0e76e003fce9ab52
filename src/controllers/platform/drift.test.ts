import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import {
  APPLIED_HASH_ANNOTATION,
  applyNeed,
  contentHash,
  firstDifference,
  foreignItems,
  managerOf,
  withAppliedHash,
} from "./drift.js";

function deployment(image: string, memory = "4Gi"): RenderedObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "ontology-service", namespace: "onto", labels: { app: "x" }, ownerReferences: [] },
    spec: {
      template: { spec: { containers: [{ name: "main", image, resources: { limits: { memory } } }] } },
    },
  };
}

/** What the API server returns: our fields plus defaults and status. */
function stored(obj: RenderedObject): KubeObject {
  const o = structuredClone(obj) as RenderedObject & {
    metadata: { uid?: string; resourceVersion?: string };
    spec: { template: { spec: Record<string, unknown> } };
  };
  o.metadata.uid = "u1";
  o.metadata.resourceVersion = "42";
  o.spec.template.spec.restartPolicy = "Always";
  (o as { status?: unknown }).status = { readyReplicas: 3 };
  return o;
}

describe("contentHash", () => {
  it("ignores key order and changes with content", () => {
    expect(contentHash({ a: 1, b: { c: 2, d: 3 } })).toBe(contentHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  });
});

describe("firstDifference", () => {
  it("ignores fields only the live object has", () => {
    const d = deployment("img:1");
    expect(firstDifference(d, stored(d))).toBeUndefined();
  });
  it("names the path of a changed field", () => {
    expect(firstDifference(deployment("img:1"), stored(deployment("img:2")))).toBe(
      ".spec.template.spec.containers[name=main].image",
    );
  });
  it("compares quantities by value", () => {
    expect(
      firstDifference(deployment("img:1", "1024Mi"), stored(deployment("img:1", "1Gi"))),
    ).toBeUndefined();
    expect(
      firstDifference(deployment("img:1", "1.5Gi"), stored(deployment("img:1", "1536Mi"))),
    ).toBeUndefined();
    expect(firstDifference(deployment("img:1", "2Gi"), stored(deployment("img:1", "1Gi")))).toBe(
      ".spec.template.spec.containers[name=main].resources.limits.memory",
    );
  });
  it("treats a list of another length as a difference", () => {
    expect(firstDifference({ a: [1, 2] }, { a: [1] })).toBe(".a");
    expect(firstDifference({ a: [1] }, { a: [1, 2] })).toBe(".a");
  });
});

describe("applyNeed", () => {
  it("applies a missing object", () => {
    expect(applyNeed(withAppliedHash(deployment("img:1")), undefined)).toEqual({
      apply: true,
      reason: "Missing",
    });
  });
  it("skips an object applied with the same content and not changed since", () => {
    const d = withAppliedHash(deployment("img:1"));
    expect(applyNeed(d, stored(d))).toEqual({ apply: false });
  });
  it("re-applies when our content changed, even if only by removing a field", () => {
    const before = withAppliedHash({ ...deployment("img:1"), extra: { x: 1 } });
    const after = withAppliedHash(deployment("img:1"));
    expect(after.metadata.annotations?.[APPLIED_HASH_ANNOTATION]).not.toBe(
      before.metadata.annotations?.[APPLIED_HASH_ANNOTATION],
    );
    expect(applyNeed(after, stored(before))).toEqual({ apply: true, reason: "SpecChanged" });
  });
  it("reverts drift: a field we own edited by someone else", () => {
    const d = withAppliedHash(deployment("img:1"));
    const live = stored(d) as KubeObject & {
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    const container = live.spec.template.spec.containers[0];
    if (container) container.image = "img:hacked";
    expect(applyNeed(d, live)).toEqual({
      apply: true,
      reason: "Drift",
      path: ".spec.template.spec.containers[name=main].image",
    });
  });
  it("compares a Secret's stringData with the stored base64 data", () => {
    const secret = withAppliedHash({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "n", labels: {}, ownerReferences: [] },
      stringData: { password: "p4ss" },
    });
    const { stringData: _omit, ...rest } = secret;
    const live: KubeObject = {
      ...rest,
      data: { password: Buffer.from("p4ss").toString("base64") },
    } as KubeObject;
    expect(applyNeed(secret, live)).toEqual({ apply: false });
    const changed = { ...live, data: { password: Buffer.from("other").toString("base64") } } as KubeObject;
    expect(applyNeed(secret, changed)).toMatchObject({ apply: true, reason: "Drift" });
  });
});

type Template = { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };

/** `obj` as stored after another manager added an env var to its container (server-side apply keeps both). */
function withForeignEnv(obj: RenderedObject): KubeObject {
  const live = stored(obj) as KubeObject & Template;
  const container = live.spec.template.spec.containers[0]!;
  container.env = [{ name: "INJECTED_BY_OTHER", value: "1" }, ...((container.env as unknown[]) ?? [])];
  live.metadata!.managedFields = [
    { manager: "onto-operator", operation: "Apply", fieldsV1: { "f:spec": {} } },
    {
      manager: "sidecar-injector",
      operation: "Apply",
      fieldsV1: {
        "f:spec": {
          "f:template": {
            "f:spec": {
              "f:containers": {
                'k:{"name":"main"}': {
                  ".": {},
                  "f:name": {},
                  "f:env": { 'k:{"name":"INJECTED_BY_OTHER"}': {} },
                },
              },
            },
          },
        },
      },
    },
  ];
  return live;
}

describe("items another manager adds to a keyed list", () => {
  const withEnv = (): RenderedObject => {
    const d = deployment("img:1");
    (d as unknown as Template).spec.template.spec.containers[0]!.env = [{ name: "MODE", value: "a" }];
    return withAppliedHash(d);
  };

  it("are not drift: applying cannot remove them, so they are never re-applied over", () => {
    const d = withEnv();
    expect(applyNeed(d, withForeignEnv(d))).toEqual({ apply: false });
  });

  it("still let a changed item of ours count as drift, found by its key", () => {
    const d = withEnv();
    const live = withForeignEnv(d) as KubeObject & Template;
    (live.spec.template.spec.containers[0]!.env as { name: string; value: string }[])[1]!.value = "b";
    expect(applyNeed(d, live)).toEqual({
      apply: true,
      reason: "Drift",
      path: ".spec.template.spec.containers[name=main].env[name=MODE].value",
    });
  });

  it("are found, and the manager holding each is named from managedFields", () => {
    const d = withEnv();
    const live = withForeignEnv(d);
    const items = foreignItems(d, live);
    expect(items.map((i) => i.path)).toEqual([
      "spec.template.spec.containers[name=main].env[name=INJECTED_BY_OTHER]",
    ]);
    expect(managerOf(live.metadata?.managedFields, items[0]!, "onto-operator")).toBe("sidecar-injector");
    expect(foreignItems(d, stored(d))).toEqual([]);
  });
});
