// The status tree, progress bar, ages and upgrade progress of `onto status` / `onto upgrade`,
// from fixed platforms and a fixed clock (no cluster, no terminal).
import { describe, expect, it } from "vitest";
import type { OntoPlatform } from "../api/index.js";
import { nextVersion } from "./commands/demo.js";
import { untilOutcome } from "./commands/status.js";
import { progressLine, upgradeProgress } from "./commands/upgrade.js";
import { plain } from "./output.js";
import { age, disruptionLines, formatStatus, progressBar, table, upgradeLine } from "./status-view.js";

const NOW = new Date("2026-11-30T03:00:00Z");

function platform(overrides: Partial<OntoPlatform["status"]> = {}, spec: Partial<OntoPlatform["spec"]> = {}) {
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "onto-production", namespace: "onto-system", generation: 2, uid: "u1" },
    spec: { version: "1.5.0", ...spec },
    status: {
      phase: "Running",
      version: "1.5.0",
      observedGeneration: 2,
      ready: "2/2",
      components: {
        infrastructure: "Ready",
        controlPlane: "NotReady",
        dataPlane: "Disabled",
        intelligencePlane: "Disabled",
        gateway: "Disabled",
      },
      componentStatuses: {
        postgres: { ready: 3, desired: 3, phase: "Ready", version: "1.5.0" },
        "ontology-service": {
          ready: 1,
          desired: 3,
          phase: "Progressing",
          version: "1.5.0",
          message: "ontology-service: 1/3 pods ready",
        },
      },
      conditions: [
        {
          type: "Available",
          status: "False",
          reason: "ComponentsNotReady",
          message: "1/2 components ready",
          lastTransitionTime: "2026-11-30T02:55:00Z",
        },
      ],
      ...overrides,
    },
  } as OntoPlatform;
}

describe("Postgres in onto status", () => {
  it("shows the primary, each standby's role and lag, and a held-back failover", () => {
    const text = formatStatus(
      {
        platform: platform({
          postgres: {
            currentPrimary: "postgres-1",
            targetPrimary: "postgres-1",
            timeline: 3,
            members: [
              { name: "postgres-0", role: "standby", lagBytes: 0, receivedLsn: "0/5000060" },
              { name: "postgres-1", role: "primary", receivedLsn: "0/5000060" },
              { name: "postgres-2", role: "lagging", lagBytes: 40 * 1024 * 1024 },
            ],
            failoverWithheld: "2 of 3 nodes are NotReady: no failover while most nodes are down",
            lastFailover: {
              at: "2026-11-30T02:58:00Z",
              from: "postgres-0",
              to: "postgres-1",
              reason: "PrimaryPodGone",
            },
          },
        }),
        events: [],
      },
      { now: NOW, colors: plain },
    );
    const lines = text.split("\n");
    expect(lines).toContain("Postgres: primary postgres-1, timeline 3");
    expect(lines.some((l) => /postgres-0\s+standby\s+lag 0 B\s+0\/5000060/.test(l))).toBe(true);
    expect(lines.some((l) => /postgres-2\s+lagging\s+lag 40\.0 MiB/.test(l))).toBe(true);
    expect(text).toContain("failover held back: 2 of 3 nodes are NotReady");
    expect(text).toContain("last promotion 2m ago: postgres-0 -> postgres-1 (PrimaryPodGone)");
  });
});

describe("disruption control in onto status", () => {
  it("shows what waits (workload, cause, reasons, since), the next window and what restarts", () => {
    const text = formatStatus(
      {
        platform: platform({
          disruption: {
            waiting: [
              {
                workload: "StatefulSet/kafka",
                reasons: ["template"],
                cause: "OperatorChange",
                since: "2026-11-30T02:55:00Z",
              },
              {
                workload: "Deployment/gateway",
                reasons: ["resources", "certificate"],
                cause: "MaintenanceWindow",
                since: "2026-11-29T22:00:00Z",
              },
            ],
            nextWindow: "2026-11-30T05:00:00Z",
            restarting: ["Deployment/ontology-service"],
          },
        }),
        events: [],
      },
      { now: NOW, colors: plain },
    );
    const lines = text.split("\n");
    const at = lines.indexOf("Disruption control");
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 7)).toEqual([
      "  2 workload(s) wait to restart their pods",
      "    WORKLOAD            HELD BY            RESTARTS FOR            WAITING",
      "    StatefulSet/kafka   OperatorChange     template                5m (since 2026-11-30T02:55:00Z)",
      "    Deployment/gateway  MaintenanceWindow  resources, certificate  5h (since 2026-11-29T22:00:00Z)",
      "  next maintenance window 2026-11-30T05:00:00Z (in 2h)",
      "  restarting pods now: Deployment/ontology-service",
    ]);
  });

  it("shows the window open now, and nothing at all without status.disruption", () => {
    expect(disruptionLines({ windowOpenUntil: "2026-11-30T03:30:00Z" }, NOW, plain)).toEqual([
      "  maintenance window open until 2026-11-30T03:30:00Z (30m left)",
    ]);
    expect(disruptionLines(undefined, NOW, plain)).toEqual([]);
    expect(formatStatus({ platform: platform(), events: [] }, { now: NOW, colors: plain })).not.toContain(
      "Disruption control",
    );
  });
});

describe("age", () => {
  it("reads like kubectl's AGE column", () => {
    expect(age("2026-11-30T02:59:18Z", NOW)).toBe("42s");
    expect(age("2026-11-30T02:55:00Z", NOW)).toBe("5m");
    expect(age("2026-11-29T22:00:00Z", NOW)).toBe("5h");
    expect(age("2026-11-27T03:00:00Z", NOW)).toBe("3d");
    expect(age(undefined, NOW)).toBe("?");
    expect(age("2026-11-30T03:00:10Z", NOW)).toBe("0s");
  });
});

describe("progressBar", () => {
  it("fills in proportion and says the count", () => {
    expect(progressBar(0, 4, 8)).toBe("[--------] 0/4");
    expect(progressBar(2, 4, 8)).toBe("[####----] 2/4");
    expect(progressBar(4, 4, 8)).toBe("[########] 4/4");
    expect(progressBar(0, 0, 4)).toBe("[####] 0/0");
    expect(progressBar(9, 4, 4)).toBe("[####] 9/4");
  });
});

describe("table", () => {
  it("pads columns to the widest visible cell, ignoring colour codes", () => {
    const red = "\x1b[31mred\x1b[39m";
    expect(
      table(
        [
          ["a", red, "x"],
          ["long", "b", "y"],
        ],
        "",
      ),
    ).toEqual(["a     " + red + "  x", "long  b    y"]);
  });
});

describe("formatStatus", () => {
  it("draws planes and their components with ready/desired, then conditions and Events", () => {
    const text = formatStatus(
      {
        platform: platform(),
        events: [
          {
            type: "Normal",
            reason: "Missing",
            note: "created Service/postgres",
            eventTime: "2026-11-30T02:59:00Z",
          },
          {
            type: "Warning",
            reason: "ApplyFailed",
            note: "could not apply X",
            eventTime: "2026-11-30T02:59:30Z",
            series: { count: 3, lastObservedTime: "2026-11-30T02:59:50Z" },
          },
        ],
      },
      { now: NOW, colors: plain },
    );
    expect(text).toContain("OntoPlatform onto-system/onto-production  Running  version 1.5.0  ready 2/2");
    expect(text).toContain("generation 2, observed 2");
    expect(text).not.toContain("not yet reconciled");
    const lines = text.split("\n");
    expect(lines).toContain("├─ infrastructure  Ready");
    expect(lines).toContain("├─ control plane  NotReady");
    expect(lines).toContain("├─ data plane  Disabled");
    expect(lines).toContain("└─ gateway  Disabled");
    expect(lines.find((l) => l.includes("postgres"))).toMatch(/^│ {2}└─ postgres\s+3\/3 {2}Ready\s+1\.5\.0$/);
    expect(lines.find((l) => l.includes("ontology-service"))).toMatch(
      /^│ {2}└─ ontology-service\s+1\/3\s+Progressing\s+1\.5\.0\s+ontology-service: 1\/3 pods ready$/,
    );
    expect(text).toMatch(/Available\s+False\s+ComponentsNotReady\s+5m\s+1\/2 components ready/);
    // Events oldest first, the newest last, with the series count.
    const events = lines.slice(lines.findIndex((l) => l.startsWith("Events")));
    expect(events[2]).toMatch(/60s\s+Normal\s+Missing\s+created Service\/postgres/);
    expect(events[3]).toMatch(/10s\s+Warning\s+ApplyFailed\s+could not apply X \(x3\)/);
  });

  it("says when the spec is newer than the status, and when the platform is paused", () => {
    const p = platform({ observedGeneration: 1 }, { paused: true, version: "1.6.0" });
    const text = formatStatus({ platform: p, events: [] }, { now: NOW, colors: plain });
    expect(text).toContain("version 1.5.0 (spec 1.6.0)");
    expect(text).toContain("generation 2, observed 1 (not yet reconciled)");
    expect(text).toContain("PAUSED");
    expect(text).toContain("Events (last 10)\n  (none)");
    expect(text).not.toContain("Healing");
  });

  it("lists the memory healing raised, and says when it is at the cap", () => {
    const healing = {
      memoryOverrides: {
        kafka: { memoryLimit: "6Gi", raisedAt: "2026-11-30T02:58:00Z", raises: 1, atCap: false },
        postgres: {
          memoryLimit: "32Gi",
          memoryRequest: "32Gi",
          raisedAt: "2026-11-30T02:50:00Z",
          raises: 4,
          atCap: true,
        },
      },
    };
    const text = formatStatus({ platform: platform({ healing }), events: [] }, { now: NOW, colors: plain });
    expect(text).toContain("Healing: memory raised after OOM kills\n");
    expect(text).toMatch(/ {2}kafka\s+limit 6Gi\s+1 raise\(s\), last 2m ago\n/);
    expect(text).toMatch(
      / {2}postgres\s+limit 32Gi, request 32Gi\s+4 raise\(s\), last 10m ago\s+at the cap \(selfHealing\.maxMemory\)\n/,
    );
  });

  it("lists the VPA recommendations, whether the requests are within their range, and what was applied", () => {
    const verticalScaling = {
      "schema-registry": {
        mode: "Apply" as const,
        container: "schema-registry",
        target: { cpu: "587m", memory: "700Mi" },
        withinRange: true,
        applied: { cpu: "587m", memory: "700Mi" },
        appliedAt: "2026-11-30T02:58:00Z",
      },
      "ontology-service": {
        mode: "Recommend" as const,
        container: "ontology-service",
        target: { memory: "380258472" },
        withinRange: false,
      },
    };
    const text = formatStatus(
      { platform: platform({ verticalScaling }), events: [] },
      { now: NOW, colors: plain },
    );
    expect(text).toContain("Vertical scaling: VerticalPodAutoscaler recommendations\n");
    expect(text).toMatch(
      / {2}schema-registry\s+Apply\s+cpu 587m, memory 700Mi\s+within range\s+cpu 587m, memory 700Mi, 2m ago\n/,
    );
    expect(text).toMatch(/ {2}ontology-service\s+Recommend\s+memory 363Mi\s+outside range\s+-\n/);
  });

  it("shows the upgrade with its progress, current component and step, and a failure", () => {
    const upgrade = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress" as const,
      group: "controlPlane",
      component: "ontology-service",
      step: "Canary",
      startedAt: "2026-11-30T02:50:00Z",
      stepStartedAt: "2026-11-30T02:59:30Z",
      completedComponents: ["postgres"],
    };
    expect(upgradeLine(upgrade, ["postgres", "ontology-service"], NOW, plain, 4)).toBe(
      "1.5.0 -> 1.6.0  InProgress  [##--] 1/2  controlPlane/ontology-service Canary for 30s",
    );
    const failed = {
      ...upgrade,
      phase: "Failed" as const,
      failure: { component: "ontology-service", reason: "CanaryUnhealthy", message: "crash loop" },
    };
    const text = formatStatus(
      { platform: platform({ upgrade: failed }), events: [] },
      { now: NOW, colors: plain },
    );
    expect(text).toContain("Upgrade\n  1.5.0 -> 1.6.0  Failed  [");
    expect(text).toContain("failed at ontology-service: CanaryUnhealthy: crash loop");
  });
});

describe("untilOutcome", () => {
  it("waits for the phase at the current generation", () => {
    expect(untilOutcome(platform(), "Running")).toEqual({ code: 0, message: "phase Running" });
    expect(untilOutcome(platform({ observedGeneration: 1 }), "Running")).toBeUndefined();
    expect(untilOutcome(platform({ phase: "Provisioning" }), "Running")).toBeUndefined();
  });

  it("fails on phase Error and on a failed upgrade to the spec's version", () => {
    const error = untilOutcome(
      platform({
        phase: "Error",
        conditions: [
          {
            type: "Degraded",
            status: "True",
            reason: "NamespaceTaken",
            message: "taken",
            lastTransitionTime: "2026-11-30T02:55:00Z",
          },
        ],
      }),
      "Running",
    );
    expect(error).toEqual({ code: 1, message: "phase Error: NamespaceTaken: taken" });
    const upgrade = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "Failed" as const,
      startedAt: "2026-11-30T02:50:00Z",
      completedComponents: [],
      failure: { component: "kafka", reason: "RolloutTimeout", message: "not ready in 300 s" },
    };
    expect(untilOutcome(platform({ upgrade }, { version: "1.6.0" }), "Running")?.code).toBe(1);
    // An old failure of another target does not fail a later watch.
    expect(untilOutcome(platform({ upgrade }, { version: "1.5.0" }), "Running")?.code).toBe(0);
  });
});

describe("upgradeProgress", () => {
  it("counts components Ready at the target when the operator reports no upgrade", () => {
    const p = platform(
      {
        version: "1.5.0",
        componentStatuses: {
          postgres: { ready: 3, desired: 3, phase: "Ready", version: "1.6.0" },
          "ontology-service": { ready: 1, desired: 3, phase: "Progressing", version: "1.6.0" },
        },
      },
      { version: "1.6.0" },
    );
    const progress = upgradeProgress(p, "1.6.0");
    expect(progress).toMatchObject({
      done: 1,
      total: 2,
      finished: false,
      current: "ontology-service Progressing",
    });
    expect(progressLine(progress, "1.6.0", plain)).toBe(
      "upgrading to 1.6.0 [############------------] 1/2  ontology-service Progressing",
    );
  });

  it("follows status.upgrade, and is finished when status.version is the target", () => {
    const upgrade = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress" as const,
      group: "controlPlane",
      component: "ontology-service",
      step: "Soak",
      startedAt: "2026-11-30T02:50:00Z",
      completedComponents: ["postgres"],
    };
    expect(upgradeProgress(platform({ upgrade }, { version: "1.6.0" }), "1.6.0")).toMatchObject({
      done: 1,
      total: 2,
      current: "controlPlane/ontology-service Soak",
      finished: false,
    });
    const done = upgradeProgress(platform({ version: "1.6.0", upgrade }, { version: "1.6.0" }), "1.6.0");
    expect(done).toMatchObject({ done: 2, total: 2, finished: true });
    expect(progressLine(done, "1.6.0", plain)).toBe("done to 1.6.0 [########################] 2/2");
    const failed = upgradeProgress(
      platform(
        {
          upgrade: {
            ...upgrade,
            phase: "Failed",
            failure: { component: "ontology-service", reason: "CanaryUnhealthy", message: "crash loop" },
          },
        },
        { version: "1.6.0" },
      ),
      "1.6.0",
    );
    expect(failed.failure).toBe("ontology-service: CanaryUnhealthy: crash loop");
  });

  it("counts the orchestrator's plan, shows a rollback, and fails on a refusal of this generation", () => {
    const upgrade = {
      from: "1.5.0",
      to: "1.6.0",
      phase: "RollingBack" as const,
      component: "ontology-service",
      step: "Canary",
      startedAt: "2026-11-30T02:50:00Z",
      completedComponents: ["postgres"],
      planned: { postgres: "1.5.0", redis: "1.5.0", "ontology-service": "1.5.0" },
    };
    const back = upgradeProgress(platform({ upgrade }, { version: "1.6.0" }), "1.6.0");
    expect(back).toMatchObject({ done: 1, total: 3, rollingBack: true, finished: false });
    expect(progressLine(back, "1.6.0", plain)).toMatch(
      /^rolling back to 1\.6\.0 \[#{8}-{16}\] 1\/3 {2}ontology-service Canary$/,
    );

    const refused = (observedGeneration: number) =>
      platform(
        {
          conditions: [
            {
              type: "Upgrading",
              status: "False",
              reason: "UpgradeRefused",
              message: "downgrade 1.6.0 -> 1.5.0 refused",
              lastTransitionTime: "2026-11-30T02:55:00Z",
              observedGeneration,
            },
          ],
        },
        { version: "1.5.0" },
      );
    expect(upgradeProgress(refused(2), "1.7.0").failure).toBe(
      "UpgradeRefused: downgrade 1.6.0 -> 1.5.0 refused",
    );
    // A condition about an older generation says nothing about this change.
    expect(upgradeProgress(refused(1), "1.7.0").failure).toBeUndefined();
  });
});

describe("the demo's next upgrade", () => {
  it("is the next version the operator accepts without force", () => {
    expect(nextVersion("1.5.0")).toBe("1.6.0");
    expect(nextVersion("1.6.0")).toBe("1.6.1");
    expect(nextVersion("1.4.2")).toBe("1.5.0");
  });
});
