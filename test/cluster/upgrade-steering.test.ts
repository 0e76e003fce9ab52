// Issue 6, steering an upgrade in flight: spec.paused holds it (the canary stays, nothing is
// promoted) and it goes on when unpaused; a new spec.version during the upgrade lets the component
// in flight finish under the old target, then re-plans from the versions actually running
// (Superseded) and ends on the new version.
import { useOperator } from "../support/operator.js";
import { PLATFORM_REF } from "../../src/api/index.js";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import { auditLines, setVersion, upgradeSample, type Workload } from "./upgrade-support.js";

const NAME = "onto-minimal";
const fx = useOperator({
  namespaces: ["upg-steer"],
  platform: (namespace) => upgradeSample("minimal.yaml", namespace, { soakSeconds: 2 }),
});
const { client, ns } = fx;

const deployment = (name: string) =>
  client.getIfExists<Workload>({ apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name });
const image = (w: Workload | undefined) => w?.spec?.template?.spec?.containers?.[0]?.image ?? "";
const pause = (paused: boolean) =>
  client.mergePatch({ ...PLATFORM_REF, namespace: ns, name: NAME }, { spec: { paused } });

describe("spec.paused during an upgrade", () => {
  it("holds the canary without promoting it, and goes on when unpaused", async () => {
    await setVersion(client, ns, NAME, "1.6.0");
    await eventually(
      "the ontology-service canary",
      async () => ((await deployment("ontology-service-canary")) ? true : undefined),
      120_000,
      100,
    );
    await pause(true);
    await new Promise((r) => setTimeout(r, 6_000)); // longer than the soak
    const held = await readPlatform(client, ns, NAME);
    expect(held.status?.upgrade).toMatchObject({
      component: "ontology-service",
      step: "Canary",
      phase: "InProgress",
    });
    expect(held.status?.phase).toBe("Upgrading");
    expect(held.status?.conditions?.find((c) => c.type === "Progressing")?.reason).toBe("Paused");
    expect(await deployment("ontology-service-canary")).toBeDefined();
    expect(image(await deployment("ontology-service"))).toMatch(/:1\.5\.0$/);
    expect(
      auditLines(fx.operator.auditLog).some(
        (l) => l.reason === "Promoted" && l.object.name === "ontology-service",
      ),
    ).toBe(false);

    await pause(false);
    await eventually("ontology-service promoted after the pause", async () => {
      return image(await deployment("ontology-service")).endsWith(":1.6.0") ? true : undefined;
    });
  });
});

describe("a new spec.version during an upgrade", () => {
  it("finishes the component in flight, then re-plans from what runs and ends on the new version", async () => {
    // The 1.6.0 upgrade from above is still running: change the target while a canary is up.
    await eventually(
      "a canary of the 1.6.0 upgrade",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.upgrade?.to === "1.6.0" && p.status.upgrade.step === "Canary" ? p : undefined;
      },
      120_000,
      100,
    );
    const inFlight = (await readPlatform(client, ns, NAME)).status?.upgrade?.component ?? "";
    await setVersion(client, ns, NAME, "1.6.1");
    const done = await eventually(
      "the platform on 1.6.1",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.version === "1.6.1" && p.status.phase === "Running" ? p : undefined;
      },
      300_000,
      500,
    );
    expect(done.status?.upgrade).toMatchObject({ from: "1.5.0", to: "1.6.1", phase: "Succeeded" });
    const lines = auditLines(fx.operator.auditLog).filter((l) => l.actor === "upgrade");
    const superseded = lines.find((l) => l.reason === "UpgradeSuperseded");
    expect(superseded?.message).toMatch(/upgrade 1\.5\.0 -> 1\.6\.0 superseded by spec\.version 1\.6\.1/);
    // The component in flight finished under 1.6.0 before the new plan started.
    const finished = lines.filter((l) => l.reason === "ComponentUpgraded" && l.object.name === inFlight);
    expect(finished.length).toBeGreaterThanOrEqual(1);
    expect(finished[0] && superseded && finished[0].time <= superseded.time).toBe(true);
    // Postgres kept its image from 1.6.0 to 1.6.1: not part of the second plan.
    const second = lines.slice(lines.indexOf(superseded ?? lines[0]!));
    const started = second.find((l) => l.reason === "UpgradeStarted");
    expect(started?.message).not.toMatch(/\bpostgres\b/);
    expect(image(await deployment("gateway"))).toMatch(/:1\.6\.1$/);
  });
});
