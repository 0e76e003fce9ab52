import { describe, expect, it } from "vitest";
import { INSTANCE_LABEL, MANAGED_BY, MANAGED_BY_LABEL } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { findNamesakes, isPlatformObject } from "./namesakes.js";

const platform = { name: "onto", uid: "uid-1" };
const ours = { [MANAGED_BY_LABEL]: MANAGED_BY, [INSTANCE_LABEL]: "onto" };

function obj(name: string, meta: Partial<NonNullable<KubeObject["metadata"]>> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "ns", ...meta } };
}

describe("isPlatformObject", () => {
  it("takes an object owned by the platform, whatever its labels", () => {
    expect(isPlatformObject(obj("a", { ownerReferences: [{ uid: "uid-1" } as never] }), platform)).toBe(true);
  });
  it("takes an object labelled as made for a platform of this name (retained, its owner gone)", () => {
    expect(isPlatformObject(obj("a", { labels: ours }), platform)).toBe(true);
  });
  it("refuses a user's object, another platform's object and one made for another platform name", () => {
    expect(isPlatformObject(obj("a"), platform)).toBe(false);
    expect(isPlatformObject(obj("a", { ownerReferences: [{ uid: "uid-2" } as never] }), platform)).toBe(
      false,
    );
    expect(isPlatformObject(obj("a", { labels: { ...ours, [INSTANCE_LABEL]: "other" } }), platform)).toBe(
      false,
    );
    expect(isPlatformObject(obj("a", { labels: { [INSTANCE_LABEL]: "onto" } }), platform)).toBe(false);
  });
});

describe("findNamesakes", () => {
  it("names each desired object whose live namesake is not the platform's, and only those", () => {
    const desired = ["free", "mine", "users"].map((n) => obj(n) as RenderedObject);
    const live = new Map<string, KubeObject>([
      ["mine", obj("mine", { labels: ours })],
      ["users", obj("users", { labels: { team: "data" } })],
    ]);
    const found = findNamesakes(desired, (o) => live.get(o.metadata.name), platform);
    expect([...found.ids]).toEqual(["ConfigMap/users"]);
    expect(found.problems).toHaveLength(1);
    expect(found.problems[0]?.reason).toBe("NameTaken");
    expect(found.problems[0]?.field).toBe("ConfigMap/users");
    expect(found.problems[0]?.message).toContain("left as it is");
  });
});
