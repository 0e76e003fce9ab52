import { describe, expect, it } from "vitest";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import { OWN_CREATE_TTL_MS, OwnCreates } from "./own-creates.js";
import { planApply } from "./apply.js";
import type { RenderedObject } from "../../render/index.js";
import { withAppliedHash } from "./drift.js";

const obj = (rv: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "data-service-canary", namespace: "ns", resourceVersion: rv },
});

describe("OwnCreates", () => {
  it("stands in for the cached copy until the cache shows the object", () => {
    const own = new OwnCreates();
    own.record("k", obj("7"), 1_000);
    expect(own.lookup("k", undefined, 1_500)?.metadata?.resourceVersion).toBe("7");
    // The cache shows it: the cached copy from then on, also when it goes again (deleted).
    expect(own.lookup("k", obj("8"), 1_600)?.metadata?.resourceVersion).toBe("8");
    expect(own.lookup("k", undefined, 1_700)).toBeUndefined();
  });

  it("stands in for at most OWN_CREATE_TTL_MS", () => {
    const own = new OwnCreates();
    own.record("k", obj("7"), 0);
    expect(own.lookup("k", undefined, OWN_CREATE_TTL_MS)).toBeDefined();
    expect(own.lookup("k", undefined, OWN_CREATE_TTL_MS + 1)).toBeUndefined();
  });

  it("a second pass before the cache shows a create plans no second create", async () => {
    const desired: RenderedObject = withAppliedHash({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "ns", labels: {}, ownerReferences: [] },
      data: { a: "1" },
    });
    const own = new OwnCreates();
    const live = (o: RenderedObject) => own.lookup(`${o.kind}/${o.metadata.name}`, undefined, 0);
    const first = planApply([desired], live, (o) => own.record(`${o.kind}/${o.metadata?.name}`, o, 0));
    expect(first.map((a) => a.verb)).toEqual(["create"]);
    // The server answers the apply with the object as stored.
    const client = {
      apply: async (o: KubeObject) => Promise.resolve({ ...o, metadata: { ...o.metadata, uid: "u" } }),
    } as unknown as KubeClient; // only apply() is used
    await first[0]?.run(client);
    expect(planApply([desired], live)).toEqual([]);
  });
});

describe("OwnCreates memory", () => {
  it("drops creates past their time when another is recorded (a deleted platform's are never looked up)", () => {
    const own = new OwnCreates();
    own.record("gone", obj("1"), 0);
    own.record("new", obj("2"), OWN_CREATE_TTL_MS + 1);
    // Looked up at a time when "gone" would still be fresh, were it kept.
    expect(own.lookup("gone", undefined, 0)).toBeUndefined();
    expect(own.lookup("new", undefined, OWN_CREATE_TTL_MS + 1)).toBeDefined();
  });
});
