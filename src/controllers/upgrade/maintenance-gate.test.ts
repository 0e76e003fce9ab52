// A version upgrade restarts pods: with maintenance windows it starts only inside one (or when the
// user opts in), and only with a slot of the operator's fleet limit; until then every component
// keeps its running version.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatform, type OntoPlatformSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { Store } from "../../runtime/index.js";
import { FleetLimit } from "../shared/fleet-limit.js";
import { UpgradeOrchestrator } from "./orchestrator.js";

function decide(
  now: string,
  windows: NonNullable<OntoPlatformSpec["maintenance"]>["windows"],
  annotations = {},
  fleet?: FleetLimit,
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
    fleet,
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

describe("upgrades and the fleet limit", () => {
  const fleetOf = (restarting: string[]) =>
    new FleetLimit({
      limit: 1,
      restartingInCaches: () => new Set(restarting),
      exists: () => true,
      wake: () => undefined,
      now: () => new Date("2026-12-01T12:00:00Z"),
    });

  it("waits while another platform restarts pods, and names it", () => {
    const d = decide("2026-12-01T12:00:00Z", [], {}, fleetOf(["other/q"]));
    expect(d?.upgrade).toBeUndefined();
    expect(d?.condition).toMatchObject({ status: "False", reason: "WaitingForFleetLimit" });
    expect(d?.condition?.message).toBe(
      "upgrade 1.5.0 -> 1.6.0 waits for the fleet limit: 1 other platform(s) restarting pods (at most 1 at once: other/q), 0 waiting longer",
    );
    expect(Object.values(d?.step ?? {}).every((r) => r?.version === "1.5.0")).toBe(true);
    expect(d?.requeueAfterMs).toBe(15_000);
    expect(d?.notes?.map((n) => n.reason)).toEqual(["WaitingForFleetLimit"]);
  });

  it("starts with a free slot and keeps it: a second platform then waits", () => {
    const fleet = fleetOf([]);
    expect(decide("2026-12-01T12:00:00Z", [], {}, fleet)?.upgrade?.phase).toBe("InProgress");
    expect(fleet.request("other/q", { wants: true, rolling: false, since: new Date() })).toMatchObject({
      admitted: false,
      restarting: ["ns/p"],
    });
  });
});
