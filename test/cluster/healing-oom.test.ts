// OOM healing end to end (issue 7): ontology-service pods are made to OOM by the KWOK fault stage
// (label fault.onto.paas/mode=oom on the Deployment's pod template, set by another field manager,
// so the operator neither reverts it nor drops it when it applies a new limit). The healer raises
// 4Gi -> 6Gi -> 9Gi -> 12Gi (selfHealing.maxMemory), each raise in status, rendered into the
// Deployment and rolled into new pods; at the cap the MemoryAtCap condition says the component is
// Degraded and nothing is raised again. Prints the time from fault to each raise.
import { useOperator } from "../support/operator.js";
import { auditLines } from "../support/audit.js";
import { afterAll, describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { loadSample, readPlatform } from "../support/platform.js";
import { events, memoryLimit, podsOf, seconds, testerClient } from "./healing-support.js";

const NAME = "onto-minimal";
const COMPONENT = "ontology-service";
const fx = useOperator({
  namespaces: ["heal-oom"],
  platform: (namespace) => {
    const platform: OntoPlatform = loadSample("minimal.yaml", namespace);
    platform.spec.controlPlane = {
      ontologyService: { resources: { requests: { cpu: "250m", memory: "1Gi" }, limits: { memory: "4Gi" } } },
    };
    // No cooldown: the test shows that comparing each pod's own limit with the one in force keeps a
    // burst of OOM kills (two replicas, old and new templates) to one raise per rollout.
    platform.spec.selfHealing = { maxMemory: "12Gi", cooldownSeconds: 0, maxActionsPerHour: 20 };
    return platform;
  },
});
const { client, ns } = fx;
const timeline: Record<string, string> = {};

type Deployment = KubeObject & {
  spec?: {
    template?: {
      spec?: { containers?: { name: string; resources?: { limits?: Record<string, string> } }[] };
    };
  };
};

async function templateLimit(): Promise<string | undefined> {
  const d = await client.get<Deployment>({
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: ns,
    name: COMPONENT,
  });
  return d.spec?.template?.spec?.containers?.find((c) => c.name === COMPONENT)?.resources?.limits?.memory;
}

async function override(): Promise<{ memoryLimit: string; raises: number; atCap: boolean } | undefined> {
  return (await readPlatform(client, ns, NAME)).status?.healing?.memoryOverrides?.[COMPONENT];
}

afterAll(() => {
  console.log(`OOM healing timeline (seconds from fault): ${JSON.stringify(timeline)}`);
});

describe("OOMKilled", () => {
  it("raises 4Gi to 6Gi, then 9Gi, then the 12Gi cap, rolling new pods each time, then stops", async () => {
    expect(await templateLimit()).toBe("4Gi");
    const fault = Date.now();
    await testerClient().mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: COMPONENT },
      { spec: { template: { metadata: { labels: { "fault.onto.paas/mode": "oom" } } } } },
    );

    for (const [limit, raises] of [
      ["6Gi", 1],
      ["9Gi", 2],
      ["12Gi", 3],
    ] as const) {
      const o = await eventually(
        `override ${limit}`,
        async () => {
          const found = await override();
          return found?.memoryLimit === limit ? found : undefined;
        },
        90_000,
      );
      timeline[`override ${limit}`] = seconds(fault);
      expect(o.raises).toBe(raises);
      expect(o.atCap).toBe(limit === "12Gi");
      await eventually(`Deployment template at ${limit}`, async () =>
        (await templateLimit()) === limit ? true : undefined,
      );
      await eventually(`a new pod with limit ${limit}`, async () => {
        const pods = await podsOf(client, ns, COMPONENT);
        return pods.some((p) => memoryLimit(p, COMPONENT) === limit) ? true : undefined;
      });
      timeline[`pod with ${limit}`] = seconds(fault);
    }

    const atCap = await eventually(
      "MemoryAtCap condition",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.conditions?.find((c) => c.type === "MemoryAtCap" && c.status === "True");
      },
      90_000,
    );
    timeline["MemoryAtCap"] = seconds(fault);
    expect(atCap.message).toContain(`${COMPONENT} is Degraded`);
    expect(atCap.message).toContain("12Gi");

    // Pods at the cap keep OOMing (the fault label stays): nothing is raised again.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    const last = await override();
    expect(last).toMatchObject({ memoryLimit: "12Gi", raises: 3, atCap: true });
    expect(await templateLimit()).toBe("12Gi");
    const raises = auditLines(fx.operator.auditLog, "healer").filter((l) => l.reason === "OOMKilled");
    expect(raises.map((l) => l.message.match(/to (\d+Gi)/)?.[1])).toEqual(["6Gi", "9Gi", "12Gi"]);
  });

  it("reports each raise in an Event on the platform and in onto_healing_actions_total", async () => {
    const notes = (await events(client, ns))
      .filter((e) => e.reason === "OOMKilled" && e.regarding?.name === NAME)
      .map((e) => e.note ?? "");
    expect(notes.some((n) => n.includes("from 4Gi to 6Gi"))).toBe(true);
    expect(notes.some((n) => n.includes("from 6Gi to 9Gi"))).toBe(true);
    const metric = await fx.operator.manager.metrics.registry.getSingleMetricAsString(
      "onto_healing_actions_total",
    );
    expect(metric).toMatch(/onto_healing_actions_total\{action="raise-memory",reason="OOMKilled"\} 3/);
    const raised = (await readPlatform(client, ns, NAME)).status?.conditions?.find(
      (c) => c.type === "MemoryRaised",
    );
    expect(raised).toMatchObject({ status: "True", reason: "OOMKilled" });
  });

  it("keeps the raised limit across an operator restart, and raises nothing more", async () => {
    let restarted = Date.now();
    await fx.restartOperator(() => (restarted = Date.now()));
    // The new operator sees the same OOM-killed pods at the cap: it must neither raise nor revert.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    expect(await override()).toMatchObject({ memoryLimit: "12Gi", raises: 3, atCap: true });
    expect(await templateLimit()).toBe("12Gi");
    expect(auditLines(fx.operator.auditLog, "healer").filter((l) => l.reason === "OOMKilled")).toEqual([]);
    timeline["restart checked"] = seconds(restarted);
  });

  it("drops the override when the user sets a limit at or above it (documented rule)", async () => {
    // The fault ends first, so the new limit is not raised again.
    await testerClient().mergePatch(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: COMPONENT },
      { spec: { template: { metadata: { labels: { "fault.onto.paas/mode": null } } } } },
    );
    await client.mergePatch(
      { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", namespace: ns, name: NAME },
      {
        spec: {
          controlPlane: { ontologyService: { resources: { limits: { memory: "16Gi" } } } },
          selfHealing: { maxMemory: "32Gi" },
        },
      },
    );
    await eventually("override dropped", async () => ((await override()) === undefined ? true : undefined));
    await eventually("Deployment template at 16Gi", async () =>
      (await templateLimit()) === "16Gi" ? true : undefined,
    );
    expect(auditLines(fx.operator.auditLog, "healer").some((l) => l.reason === "SpecLimitChanged")).toBe(
      true,
    );
  });

  it("turns everything off with selfHealing.enabled false, clearing its conditions", async () => {
    await client.mergePatch(
      { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform", namespace: ns, name: NAME },
      { spec: { selfHealing: { enabled: false } } },
    );
    const cleared = await eventually("MemoryAtCap cleared", async () => {
      const p = await readPlatform(client, ns, NAME);
      return p.status?.conditions?.find((c) => c.type === "MemoryAtCap" && c.reason === "HealingDisabled");
    });
    expect(cleared.status).toBe("False");
  });
});
