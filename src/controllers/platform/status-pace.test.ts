// The reconciler's pace for status writes: what counts as progress alone (held back within the
// interval) and what is written at once.
import { describe, expect, it } from "vitest";
import type { OntoPlatformStatus } from "../../api/index.js";
import { PROGRESS_WRITE_INTERVAL_MS, ProgressPace, progressOnly } from "./status-pace.js";

const coming: OntoPlatformStatus = {
  phase: "Provisioning",
  observedGeneration: 1,
  ready: "1/3",
  readyComponents: 1,
  totalComponents: 3,
  conditions: [
    {
      type: "Available",
      status: "False",
      reason: "ComponentsNotReady",
      message: "1/3 components ready; waiting for redis, gateway",
      lastTransitionTime: "2026-12-05T07:00:00Z",
      observedGeneration: 1,
    },
  ],
  componentStatuses: {
    postgres: { ready: 1, desired: 1, phase: "Ready", version: "16.4" },
    redis: { ready: 0, desired: 1, phase: "Pending", message: "0/1 pods ready" },
  },
};

function changed(edit: (s: OntoPlatformStatus) => void): OntoPlatformStatus {
  const next = structuredClone(coming);
  edit(next);
  return next;
}

const oneMoreReady = changed((s) => {
  s.ready = "2/3";
  s.readyComponents = 2;
  s.conditions![0]!.message = "2/3 components ready; waiting for gateway";
  s.componentStatuses!.redis = { ready: 1, desired: 1, phase: "Ready" };
});

describe("progressOnly", () => {
  it("is true for ready counts, a component's phase and a condition's message", () => {
    expect(progressOnly(coming, oneMoreReady)).toBe(true);
  });

  it("is false when nothing changed, undefined fields counting as absent", () => {
    expect(progressOnly(coming, structuredClone(coming))).toBe(false);
    expect(progressOnly(coming, { ...coming, upgrade: undefined })).toBe(false);
  });

  it("is false for the platform's phase, a condition's status or reason, the generation, and other state", () => {
    const edits: ((s: OntoPlatformStatus) => void)[] = [
      (s) => (s.phase = "Running"),
      (s) => (s.conditions![0]!.status = "True"),
      (s) => (s.conditions![0]!.reason = "AllComponentsReady"),
      (s) => (s.observedGeneration = 2),
      (s) => (s.componentStatuses!.redis!.desired = 3),
      (s) => (s.componentStatuses!.redis!.version = "7.4"),
      (s) => delete s.componentStatuses!.redis,
      (s) => (s.postgres = { members: [{ name: "postgres-0", role: "primary" }] }),
    ];
    for (const edit of edits) {
      const next = changed((s) => {
        s.ready = "2/3";
        edit(s);
      });
      expect(progressOnly(coming, next), JSON.stringify(next)).toBe(false);
    }
  });
});

describe("ProgressPace", () => {
  it("holds progress back until the interval since the last write has passed", () => {
    const pace = new ProgressPace();
    expect(pace.waitMs("u", coming, oneMoreReady, 1000)).toBe(0);
    pace.wrote("u", 1000);
    expect(pace.waitMs("u", coming, oneMoreReady, 1500)).toBe(PROGRESS_WRITE_INTERVAL_MS - 500);
    expect(pace.waitMs("u", coming, oneMoreReady, 1000 + PROGRESS_WRITE_INTERVAL_MS)).toBe(0);
  });

  it("writes any other change at once, and each platform has its own pace", () => {
    const pace = new ProgressPace();
    pace.wrote("u", 1000);
    expect(pace.waitMs("u", coming, { ...oneMoreReady, phase: "Running" }, 1100)).toBe(0);
    expect(pace.waitMs("other", coming, oneMoreReady, 1100)).toBe(0);
    pace.forget("u");
    expect(pace.waitMs("u", coming, oneMoreReady, 1100)).toBe(0);
  });
});
