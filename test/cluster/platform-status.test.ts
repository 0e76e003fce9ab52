// The status says why a component is not coming up when the reason is the scheduler's: a node
// pool no node belongs to leaves every pod Pending, and the component's message carries the
// scheduler's own words; fixing the spec brings the platform to Running.
import { PLATFORM_REF } from "../../src/api/index.js";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform, waitForPhase } from "../support/platform.js";

const NAME = "onto-minimal";
const { client, ns } = useOperator({ namespaces: ["status"] });

describe("component status", () => {
  it("carries the scheduler's reason for pods it cannot place and is Degraded naming the field, until the spec is fixed", async () => {
    const platform = loadSample("minimal.yaml", ns);
    platform.spec.global = { nodePool: { nodeSelector: { "onto.paas/pool": "nowhere" } } };
    await client.apply(platform);
    const message = await eventually(
      "a component message with the scheduler's reason",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const found = Object.values(p.status?.componentStatuses ?? {}).find((s) =>
          s.message?.includes("cannot be scheduled"),
        );
        return found?.message;
      },
      60_000,
    );
    expect(message).toMatch(/didn't match Pod's node affinity\/selector/);
    // An unworkable spec is not "Provisioning": Degraded names the field to change.
    const stuck = await eventually(
      "Degraded naming the node selector",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const degraded = p.status?.conditions?.find((c) => c.type === "Degraded");
        return degraded?.reason === "NoMatchingNode" ? p : undefined;
      },
      60_000,
    );
    expect(stuck.status?.phase).toBe("Degraded");
    expect(stuck.status?.conditions?.find((c) => c.type === "Degraded")?.message).toContain(
      "spec.global.nodePool.nodeSelector: ",
    );

    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { global: { nodePool: { nodeSelector: null } } } },
    );
    const running = await waitForPhase(client, ns, NAME, "Running");
    expect(Object.values(running.status?.componentStatuses ?? {}).filter((s) => s.message)).toEqual([]);
  });
});
