import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mergePatchDiff } from "./merge-patch.js";

/** RFC 7386's apply algorithm, to check that a diff turns `from` into `to`. */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

describe("mergePatchDiff", () => {
  it("sets removed keys to null and keeps unchanged ones out", () => {
    expect(mergePatchDiff({ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 2 } })).toEqual({ b: { d: null } });
    expect(mergePatchDiff({ a: [1, 2] }, { a: [1, 2] })).toBeUndefined();
    expect(mergePatchDiff({ a: [1, 2] }, { a: [2] })).toEqual({ a: [2] });
    expect(mergePatchDiff({ a: [{ x: 1, y: 2 }] }, { a: [{ y: 2, x: 1 }] })).toBeUndefined();
  });

  it("turns any object into any other when applied (property)", () => {
    // Objects without nulls: a merge patch cannot express a null value, by design.
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 })),
      node: fc.dictionary(fc.string({ maxLength: 3 }), tie("tree"), { maxKeys: 4 }),
      tree: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("node")),
    })).node;
    fc.assert(
      fc.property(value, value, (from, to) => {
        const patch = mergePatchDiff(from, to);
        expect(patch === undefined ? from : applyMergePatch(from, patch)).toEqual(to);
      }),
    );
  });
});
