import { describe, expect, it } from "vitest";
import type { KubeObject } from "../kube/index.js";
import { generationChanged, labelsChanged } from "./predicates.js";
import { Store, objectKey, splitKey, stripForCache } from "./store.js";

const obj = (
  ns: string | undefined,
  name: string,
  rv: string,
  extra: Partial<NonNullable<KubeObject["metadata"]>> = {},
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(ns ? { namespace: ns } : {}), resourceVersion: rv, ...extra },
});

describe("Store", () => {
  it("keys objects by namespace/name, or name when cluster-scoped", () => {
    expect(objectKey(obj("a", "x", "1"))).toBe("a/x");
    expect(objectKey(obj(undefined, "node-1", "1"))).toBe("node-1");
    expect(splitKey("a/x")).toEqual({ namespace: "a", name: "x" });
    expect(splitKey("node-1")).toEqual({ name: "node-1" });
  });

  it("keeps the namespace and owner indexes up to date through updates and removals", () => {
    const store = new Store();
    const owner = { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", name: "p", uid: "uid-p" };
    store.upsert(obj("a", "x", "1", { ownerReferences: [owner] }));
    store.upsert(obj("a", "y", "1"));
    store.upsert(obj("b", "z", "1", { ownerReferences: [owner] }));
    expect(store.byNamespace("a").map(objectKey).sort()).toEqual(["a/x", "a/y"]);
    expect(store.byOwner("uid-p").map(objectKey).sort()).toEqual(["a/x", "b/z"]);
    store.upsert(obj("a", "x", "2"));
    expect(store.byOwner("uid-p").map(objectKey)).toEqual(["b/z"]);
    store.remove("b/z");
    expect(store.byOwner("uid-p")).toEqual([]);
    expect(store.byNamespace("b")).toEqual([]);
    expect(() => store.byIndex("nope", "x")).toThrow(/no index named nope/);
  });

  it("builds an index added later over the objects already cached", () => {
    const store = new Store();
    store.upsert(obj("a", "x", "1", { labels: { tier: "db" } }));
    store.addIndexer("tier", (o) => (o.metadata?.labels?.tier ? [o.metadata.labels.tier] : []));
    expect(store.byIndex("tier", "db").map(objectKey)).toEqual(["a/x"]);
  });

  it("replace reports what was added, changed and deleted; an unchanged resourceVersion is no update", () => {
    const store = new Store();
    store.replace([obj("a", "keep", "1"), obj("a", "change", "1"), obj("a", "gone", "1")]);
    const diff = store.replace([obj("a", "keep", "1"), obj("a", "change", "2"), obj("a", "new", "1")]);
    expect(diff.added.map(objectKey)).toEqual(["a/new"]);
    expect(
      diff.updated.map(([old, now]) => [old.metadata?.resourceVersion, now.metadata?.resourceVersion]),
    ).toEqual([["1", "2"]]);
    expect(diff.deleted.map(objectKey)).toEqual(["a/gone"]);
    expect(store.keys().sort()).toEqual(["a/change", "a/keep", "a/new"]);
  });

  it("stripForCache drops managedFields and the last-applied annotation, and nothing else", () => {
    const full = obj("a", "x", "1", {
      managedFields: [{ manager: "kubectl" }],
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" },
      labels: { l: "v" },
    });
    const stripped = stripForCache(full);
    expect(stripped.metadata).toEqual({
      name: "x",
      namespace: "a",
      resourceVersion: "1",
      annotations: { keep: "me" },
      labels: { l: "v" },
    });
    expect(full.metadata?.managedFields).toHaveLength(1);
    const plain = obj("a", "y", "1");
    expect(stripForCache(plain)).toBe(plain);
  });
});

describe("predicates", () => {
  it("generationChanged passes spec changes, not status-only changes", () => {
    const v1 = obj("a", "x", "1", { generation: 1 });
    const statusOnly = obj("a", "x", "2", { generation: 1 });
    const specChange = obj("a", "x", "3", { generation: 2 });
    expect(generationChanged({ type: "update", old: v1, obj: statusOnly })).toBe(false);
    expect(generationChanged({ type: "update", old: v1, obj: specChange })).toBe(true);
    expect(generationChanged({ type: "add", obj: v1 })).toBe(true);
    expect(generationChanged({ type: "update", old: obj("a", "cm", "1"), obj: obj("a", "cm", "2") })).toBe(
      true,
    );
  });

  it("labelsChanged compares label maps", () => {
    const a = obj("a", "x", "1", { labels: { k: "v" } });
    expect(labelsChanged({ type: "update", old: a, obj: obj("a", "x", "2", { labels: { k: "v" } }) })).toBe(
      false,
    );
    expect(labelsChanged({ type: "update", old: a, obj: obj("a", "x", "2", { labels: { k: "w" } }) })).toBe(
      true,
    );
  });
});
