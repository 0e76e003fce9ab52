import { describe, expect, it } from "vitest";
import { MAX_REAL_NODES, REAL_NODES_SUPERNET, SERVICE_CIDR, cidrsOverlap, planNetwork } from "./network.js";

describe("real-node network plan", () => {
  it("gives each cluster index its own /20, bridge and names inside the supernet", () => {
    const a = planNetwork(0, 2);
    expect(a.clusterCidr).toBe("10.192.0.0/20");
    expect(a.hostAddress).toBe("10.192.0.1");
    expect(a.nodes.map((n) => [n.name, n.address, n.podCidr, n.netns, n.hostVeth])).toEqual([
      ["real-1", "10.192.0.11", "10.192.1.0/24", "onto0-real-1", "onto0v1"],
      ["real-2", "10.192.0.12", "10.192.2.0/24", "onto0-real-2", "onto0v2"],
    ]);
    const last = planNetwork(255, MAX_REAL_NODES);
    expect(last.clusterCidr).toBe("10.207.240.0/20");
    expect(last.nodes.at(-1)?.podCidr).toBe("10.207.255.0/24");
    // Linux interface names hold at most 15 bytes.
    expect(last.bridge.length).toBeLessThanOrEqual(15);
    expect(last.nodes.every((n) => n.hostVeth.length <= 15)).toBe(true);
  });

  it("never overlaps another index, the service range or outside the supernet", () => {
    const ranges = Array.from({ length: 256 }, (_, i) => planNetwork(i, 1).clusterCidr);
    for (const [i, r] of ranges.entries()) {
      expect(cidrsOverlap(r, REAL_NODES_SUPERNET)).toBe(true);
      expect(cidrsOverlap(r, SERVICE_CIDR)).toBe(false);
      const next = ranges[(i + 1) % 256] ?? r;
      expect(cidrsOverlap(r, next)).toBe(false);
    }
  });

  it("refuses indexes and node counts out of range", () => {
    expect(() => planNetwork(256, 1)).toThrow(/out of 0\.\.255/);
    expect(() => planNetwork(1, MAX_REAL_NODES + 1)).toThrow(/real nodes/);
  });

  it("tells overlapping ranges apart", () => {
    expect(cidrsOverlap("10.255.255.53/32", REAL_NODES_SUPERNET)).toBe(false);
    expect(cidrsOverlap("10.200.3.4/32", REAL_NODES_SUPERNET)).toBe(true);
    expect(cidrsOverlap("10.0.0.0/8", "10.96.0.0/16")).toBe(true);
    expect(cidrsOverlap("192.0.2.0/24", "10.96.0.0/16")).toBe(false);
  });
});
