import { describe, expect, it } from "vitest";
import { overrideSuperseded, planMemoryRaise, stuckOnOldLimit, type OomInput } from "./oom.js";

const now = new Date("2026-11-30T03:00:00Z");
const policy = { oomMemoryFactor: 1.5, maxMemory: "12Gi", cooldownSeconds: 300 };
const base: OomInput = { component: "ontology-service", podLimit: "4Gi", specLimit: "4Gi", policy, now };

describe("planMemoryRaise", () => {
  it("raises 4Gi to 6Gi, then 6Gi to 9Gi, then to the cap, counting raises", () => {
    const first = planMemoryRaise(base);
    expect(first).toMatchObject({
      kind: "raise",
      from: "4Gi",
      override: { memoryLimit: "6Gi", raises: 1, atCap: false },
    });
    if (first.kind !== "raise") throw new Error("no raise");
    const later = new Date(now.getTime() + 301_000);
    const second = planMemoryRaise({ ...base, podLimit: "6Gi", override: first.override, now: later });
    expect(second).toMatchObject({
      kind: "raise",
      override: { memoryLimit: "9Gi", raises: 2, atCap: false },
    });
    if (second.kind !== "raise") throw new Error("no raise");
    const third = planMemoryRaise({
      ...base,
      podLimit: "9Gi",
      override: second.override,
      now: new Date(later.getTime() + 301_000),
    });
    expect(third).toMatchObject({ kind: "raise", override: { memoryLimit: "12Gi", raises: 3, atCap: true } });
    if (third.kind !== "raise") throw new Error("no raise");
    const fourth = planMemoryRaise({ ...base, podLimit: "12Gi", override: third.override, now: later });
    expect(fourth).toEqual({ kind: "atCap", limit: "12Gi", cap: "12Gi" });
  });

  it("rounds up to whole mebibytes in the largest even unit", () => {
    const r = planMemoryRaise({ ...base, podLimit: "1000Mi", specLimit: undefined });
    expect(r).toMatchObject({ override: { memoryLimit: "1500Mi" } });
    const odd = planMemoryRaise({ ...base, podLimit: "333Mi", specLimit: undefined });
    expect(odd).toMatchObject({ override: { memoryLimit: "500Mi" } });
  });

  it("ignores pods of the old template (limit below the one in force)", () => {
    const override = { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:00:00Z", raises: 1, atCap: false };
    expect(planMemoryRaise({ ...base, podLimit: "4Gi", override }).kind).toBe("stale");
    // a user who raised the spec to 8Gi: pods still at 4Gi are rolling away
    expect(planMemoryRaise({ ...base, podLimit: "4Gi", specLimit: "8Gi" }).kind).toBe("stale");
  });

  it("waits out the cooldown after a raise", () => {
    const override = { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:58:20Z", raises: 1, atCap: false };
    expect(planMemoryRaise({ ...base, podLimit: "6Gi", override })).toEqual({
      kind: "cooldown",
      retryAfterMs: 200_000,
    });
  });

  it("raises the request only when it would exceed the new limit", () => {
    const r = planMemoryRaise({ ...base, podLimit: "4Gi", specRequest: "2Gi" });
    expect(r).toMatchObject({ kind: "raise", override: { memoryLimit: "6Gi" } });
    expect(r.kind === "raise" && "memoryRequest" in r.override).toBe(false);
    const capped = planMemoryRaise({
      ...base,
      podLimit: "4Gi",
      specRequest: "5Gi",
      policy: { ...policy, maxMemory: "4500Mi" },
    });
    expect(capped).toMatchObject({
      override: { memoryLimit: "4500Mi", memoryRequest: "4500Mi", atCap: true },
    });
  });
});

describe("overrideSuperseded (spec change rule)", () => {
  const override = { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:00:00Z", raises: 1, atCap: false };
  it("drops an override at or below the new spec limit, keeps a higher one", () => {
    expect(overrideSuperseded(override, "6Gi")).toBe(true);
    expect(overrideSuperseded(override, "8Gi")).toBe(true);
    expect(overrideSuperseded(override, "5Gi")).toBe(false);
    expect(overrideSuperseded(override, undefined)).toBe(false);
  });
});

describe("stuckOnOldLimit (a StatefulSet pod the raise does not reach by itself)", () => {
  const stuck = {
    podLimit: "40Mi",
    templateLimit: "60Mi",
    podRevision: "r1",
    updateRevision: "r2",
    ready: false,
  };
  it("holds for a pod of the old revision, below the template's limit, not Ready", () => {
    expect(stuckOnOldLimit(stuck)).toBe(true);
  });
  it("does not hold once the pod is of the update revision, Ready, or at the template's limit", () => {
    expect(stuckOnOldLimit({ ...stuck, podRevision: "r2" })).toBe(false);
    expect(stuckOnOldLimit({ ...stuck, ready: true })).toBe(false);
    expect(stuckOnOldLimit({ ...stuck, templateLimit: "40Mi" })).toBe(false);
    expect(stuckOnOldLimit({ ...stuck, templateLimit: undefined })).toBe(false);
    expect(stuckOnOldLimit({ ...stuck, updateRevision: undefined })).toBe(false);
  });
});
