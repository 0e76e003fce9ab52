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
    const started = Date.now();
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    await client.apply(platform);
    const message = await eventually(
      "a component message with the scheduler's reason",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        // The scheduler's first word on a pod whose claim is not bound yet is about the claim; its
        // reason for the node selector follows once the claim is bound.
        const found = Object.values(p.status?.componentStatuses ?? {}).find(
          (s) =>
            s.message?.includes("cannot be scheduled") &&
            /didn't match Pod's node affinity\/selector/.test(s.message),
        );
        return found?.message;
      },
      60_000,
    );
    console.log(`[status] the scheduler's reason in status after ${seconds()} s: ${message}`);
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
    console.log(`[status] Degraded naming the node selector after ${seconds()} s`);
    expect(stuck.status?.phase).toBe("Degraded");
    expect(stuck.status?.conditions?.find((c) => c.type === "Degraded")?.message).toContain(
      "spec.global.nodePool.nodeSelector: ",
    );

    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { global: { nodePool: { nodeSelector: null } } } },
    );
    const fixed = Date.now();
    const running = await waitForPhase(client, ns, NAME, "Running");
    console.log(`[status] Running ${((Date.now() - fixed) / 1000).toFixed(1)} s after the fix`);
    expect(Object.values(running.status?.componentStatuses ?? {}).filter((s) => s.message)).toEqual([]);
    // Its own waits allow 60 + 60 + 180 s: more than the project's 180 s a test may take.
  }, 330_000);
});
