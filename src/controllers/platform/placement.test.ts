import { describe, expect, it } from "vitest";
import { resolveSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { placementProblems } from "./placement.js";

function gateway(nodeSelector: Record<string, string>, requests: Record<string, string>): RenderedObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "gateway", namespace: "onto", labels: {}, ownerReferences: [] },
    spec: {
      template: { spec: { nodeSelector, containers: [{ name: "gateway", resources: { requests } }] } },
    },
  };
}

function node(name: string, labels: Record<string, string>, cpu: string, memory: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels },
    status: { allocatable: { cpu, memory } },
  } as KubeObject;
}

const nodes = [
  node("a", { "node-pool": "platform" }, "4", "16Gi"),
  node("b", { "node-pool": "gpu" }, "8", "64Gi"),
];

describe("placementProblems", () => {
  it("finds nothing when a matching node can give the requests", () => {
    const spec = resolveSpec({ version: "1.5.0" });
    expect(
      placementProblems(spec, [gateway({ "node-pool": "platform" }, { cpu: "2", memory: "4Gi" })], nodes),
    ).toEqual([]);
  });

  it("names the node selector field when no schedulable node has its labels", () => {
    const spec = resolveSpec({
      version: "1.5.0",
      global: { nodePool: { nodeSelector: { "node-pool": "nowhere" } } },
    });
    const problems = placementProblems(spec, [gateway({ "node-pool": "nowhere" }, { cpu: "1" })], nodes);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      field: "spec.global.nodePool.nodeSelector",
      reason: "NoMatchingNode",
    });
    expect(problems[0]?.message).toContain("gateway: no schedulable node has node-pool=nowhere");
  });

  it("names the requests field when they are larger than every matching node", () => {
    const spec = resolveSpec({ version: "1.5.0" });
    const problems = placementProblems(
      spec,
      [gateway({ "node-pool": "platform" }, { cpu: "6", memory: "4Gi" })],
      nodes,
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]?.reason).toBe("RequestsExceedNodes");
    expect(problems[0]?.field).toMatch(
      /^spec\..*gateway.*\.resources\.requests$|^spec\.gateway\.resources\.requests$/,
    );
    expect(problems[0]?.message).toContain("cpu 6");
  });

  it("does not judge a cluster whose nodes it cannot see", () => {
    const spec = resolveSpec({ version: "1.5.0" });
    expect(placementProblems(spec, [gateway({ x: "y" }, { cpu: "1000" })], [])).toEqual([]);
  });
});
