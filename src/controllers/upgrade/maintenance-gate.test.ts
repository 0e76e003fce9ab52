// A version upgrade restarts pods: with maintenance windows it starts only inside one (or when the
// user opts in), and until then every component keeps its running version.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatform, type OntoPlatformSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { Store } from "../../runtime/index.js";
import { UpgradeOrchestrator } from "./orchestrator.js";

function decide(
  now: string,
  windows: NonNullable<OntoPlatformSpec["maintenance"]>["windows"],
  annotations = {},
) {
  const spec: OntoPlatformSpec = { version: "1.6.0", maintenance: { windows } };
  const platform: OntoPlatform = {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "p", namespace: "ns", uid: "u", generation: 2, annotations },
    spec,
    status: { phase: "Running", version: "1.5.0" },
  };
  const o = new UpgradeOrchestrator({
    cache: () => new Store<KubeObject>(),
    registry: new Registry(),
    now: () => new Date(now),
  });
  return o.decide(platform, resolveSpec(spec));
}

const NIGHTLY = [{ start: "0 2 * * *", duration: "2h", timeZone: "UTC" }];

describe("upgrades and maintenance windows", () => {
  it("outside the window: waits, pins every component on its version, looks again when it opens", () => {
    const d = decide("2026-12-01T12:00:00Z", NIGHTLY);
    expect(d?.upgrade).toBeUndefined();
    expect(d?.condition).toMatchObject({ status: "False", reason: "WaitingForMaintenanceWindow" });
    expect(d?.condition?.message).toContain("the next opens at 2026-12-02T02:00:00.000Z");
    expect(Object.values(d?.step ?? {}).every((r) => r?.version === "1.5.0")).toBe(true);
    expect(d?.requeueAfterMs).toBe(14 * 3600_000);
  });

  it("inside the window, without windows, or opted in: starts", () => {
    expect(decide("2026-12-01T03:00:00Z", NIGHTLY)?.upgrade?.phase).toBe("InProgress");
    expect(decide("2026-12-01T12:00:00Z", [])?.upgrade?.phase).toBe("InProgress");
    expect(
      decide("2026-12-01T12:00:00Z", NIGHTLY, { "onto.paas/approve-restarts": "true" })?.upgrade?.phase,
    ).toBe("InProgress");
  });
});
