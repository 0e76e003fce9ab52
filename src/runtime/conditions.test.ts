import { describe, expect, it } from "vitest";
import {
  conditionsEqual,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
} from "./conditions.js";

const t0 = new Date("2025-01-01T00:00:00.123Z");
const t1 = new Date("2025-01-01T00:05:00Z");

describe("conditions", () => {
  it("adds a condition with the time of the call, at second precision", () => {
    const list = setCondition(undefined, { type: "Available", status: "False", reason: "Provisioning" }, t0);
    expect(list).toEqual([
      {
        type: "Available",
        status: "False",
        reason: "Provisioning",
        message: "",
        lastTransitionTime: "2025-01-01T00:00:00Z",
      },
    ]);
  });

  it("keeps lastTransitionTime while the status stays, and moves it when the status changes", () => {
    const a = setCondition(
      [],
      { type: "Ready", status: "False", reason: "Waiting", observedGeneration: 1 },
      t0,
    );
    const b = setCondition(
      a,
      { type: "Ready", status: "False", reason: "StillWaiting", message: "2 of 3", observedGeneration: 2 },
      t1,
    );
    expect(findCondition(b, "Ready")).toMatchObject({
      reason: "StillWaiting",
      message: "2 of 3",
      observedGeneration: 2,
      lastTransitionTime: "2025-01-01T00:00:00Z",
    });
    const c = setCondition(b, { type: "Ready", status: "True", reason: "AllReady" }, t1);
    expect(findCondition(c, "Ready")?.lastTransitionTime).toBe("2025-01-01T00:05:00Z");
    expect(isConditionTrue(c, "Ready")).toBe(true);
    expect(a).toHaveLength(1);
    expect(findCondition(a, "Ready")?.reason).toBe("Waiting");
  });

  it("keeps one entry per type and the order of the others", () => {
    let list = setCondition([], { type: "A", status: "True", reason: "Ok" }, t0);
    list = setCondition(list, { type: "B", status: "True", reason: "Ok" }, t0);
    list = setCondition(list, { type: "A", status: "False", reason: "Broken" }, t1);
    expect(list.map((c) => `${c.type}=${c.status}`)).toEqual(["A=False", "B=True"]);
    expect(removeCondition(list, "A").map((c) => c.type)).toEqual(["B"]);
  });

  it("refuses a reason that is not a CamelCase word, naming the condition", () => {
    expect(() => setCondition([], { type: "Ready", status: "True", reason: "all good" }, t0)).toThrow(
      /condition Ready: reason "all good"/,
    );
    expect(() => setCondition([], { type: "Ready", status: "True", reason: "" }, t0)).toThrow(/reason/);
  });

  it("compares condition lists regardless of order", () => {
    const a = setCondition(
      setCondition([], { type: "A", status: "True", reason: "Ok" }, t0),
      { type: "B", status: "False", reason: "No" },
      t0,
    );
    const b = [a[1]!, a[0]!];
    expect(conditionsEqual(a, b)).toBe(true);
    expect(
      conditionsEqual(a, setCondition(a, { type: "B", status: "False", reason: "No", message: "x" }, t0)),
    ).toBe(false);
    expect(conditionsEqual(a, a.slice(1))).toBe(false);
  });
});
