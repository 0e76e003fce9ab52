import { describe, expect, it } from "vitest";
import { rateLimited, withinWindow } from "../shared/healing-budget.js";
import type { NodeView } from "../shared/kube-views.js";
import {
  assessNodeLoss,
  createdAfter,
  inPool,
  lastSeen,
  notReadySince,
  pressureConditions,
} from "./nodes.js";

const now = new Date("2026-11-30T03:00:00Z");
function node(
  name: string,
  ready: string,
  since = "2026-11-30T02:00:00Z",
  extra: Partial<NodeView> = {},
): NodeView {
  return {
    metadata: { name, labels: { pool: "a" } },
    status: {
      conditions: [
        { type: "Ready", status: ready, lastTransitionTime: since },
        { type: "MemoryPressure", status: "False" },
      ],
    },
    ...extra,
  };
}
const pool = { nodeSelector: {}, tolerations: [] };

describe("assessNodeLoss", () => {
  it("reports a node NotReady past the grace as lost and rechecks one within it", () => {
    const nodes = [
      node("w1", "True"),
      node("w2", "Unknown", "2026-11-30T02:58:00Z"),
      node("w3", "False", "2026-11-30T02:59:50Z"),
      node("w4", "True"),
      node("w5", "True"),
      node("w6", "True"),
    ];
    const a = assessNodeLoss(nodes, pool, 30_000, now);
    expect(a.lost.map((n) => n.metadata?.name)).toEqual(["w2"]);
    expect(a.recheckAfterMs).toBe(20_000);
    expect(a.withheld).toBeUndefined();
  });

  it("withholds every action when more than half of the pool is NotReady", () => {
    const nodes = ["w1", "w2", "w3", "w4"]
      .map((n) => node(n, "Unknown"))
      .concat([node("w5", "True"), node("w6", "True")]);
    expect(assessNodeLoss(nodes, pool, 30_000, now)).toEqual({
      lost: [],
      withheld: { notReady: 4, total: 6 },
    });
    // exactly half is still a node failure
    const half = ["w1", "w2", "w3"]
      .map((n) => node(n, "Unknown"))
      .concat(["w4", "w5", "w6"].map((n) => node(n, "True")));
    expect(assessNodeLoss(half, pool, 30_000, now).lost).toHaveLength(3);
  });

  it("counts only the platform's pool: tainted GPU nodes and other selectors are outside it", () => {
    const gpu = node("gpu-1", "True", undefined, {
      spec: { taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }] },
    });
    const unreachable = node("w1", "Unknown", undefined, {
      spec: { taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute" }] },
    });
    expect(inPool(gpu, pool)).toBe(false);
    expect(
      inPool(gpu, { nodeSelector: {}, tolerations: [{ key: "nvidia.com/gpu", operator: "Exists" }] }),
    ).toBe(true);
    expect(inPool(unreachable, pool)).toBe(true);
    expect(inPool(unreachable, { nodeSelector: { pool: "b" }, tolerations: [] })).toBe(false);
  });
});

describe("pressureConditions", () => {
  it("lists the pressure conditions that are True, with their reason", () => {
    const n = node("w1", "True");
    n.status?.conditions?.push({ type: "DiskPressure", status: "True", reason: "KubeletHasDiskPressure" });
    expect(pressureConditions(n)).toEqual(["DiskPressure=True (KubeletHasDiskPressure)"]);
    expect(pressureConditions(undefined)).toEqual([]);
  });
});

describe("rate limit window", () => {
  it("keeps the last hour only and limits at maxActionsPerHour", () => {
    const recent = withinWindow(
      [
        { at: "2026-11-30T01:59:00Z", component: "a", action: "x" },
        { at: "2026-11-30T02:30:00Z", component: "a", action: "x" },
        { at: "2026-11-30T02:59:00Z", component: "b", action: "y" },
      ],
      now,
    );
    expect(recent).toHaveLength(2);
    expect(rateLimited(recent, 2)).toBe(true);
    expect(rateLimited(recent, 3)).toBe(false);
  });
});

describe("createdAfter / notReadySince", () => {
  it("tells a pod placed on a node after it went NotReady from one stranded there", () => {
    const down = node("w1", "Unknown", "2026-11-30T02:59:00Z");
    const since = notReadySince(down);
    expect(since).toBe(Date.parse("2026-11-30T02:59:00Z"));
    expect(createdAfter({ metadata: { creationTimestamp: "2026-11-30T02:59:30Z" } }, since)).toBe(true);
    expect(createdAfter({ metadata: { creationTimestamp: "2026-11-30T02:00:00Z" } }, since)).toBe(false);
    expect(notReadySince(node("w2", "True"))).toBeUndefined();
    const never: NodeView = { metadata: { name: "w3", creationTimestamp: "2026-11-30T02:58:00Z" } };
    expect(notReadySince(never)).toBe(Date.parse("2026-11-30T02:58:00Z"));
  });
});

describe("lastSeen", () => {
  it("is the Ready heartbeat, else the transition, else the node's creation", () => {
    const ready = {
      type: "Ready",
      status: "Unknown",
      lastHeartbeatTime: "2026-11-30T02:58:10Z",
      lastTransitionTime: "2026-11-30T02:58:50Z",
    };
    const n: NodeView = {
      metadata: { name: "w1", creationTimestamp: "2026-11-30T01:00:00Z" },
      status: { conditions: [ready] },
    };
    expect(lastSeen(n)).toBe(Date.parse("2026-11-30T02:58:10Z"));
    const noBeat: NodeView = { ...n, status: { conditions: [{ ...ready, lastHeartbeatTime: undefined }] } };
    expect(lastSeen(noBeat)).toBe(Date.parse("2026-11-30T02:58:50Z"));
    expect(lastSeen({ metadata: { name: "w2", creationTimestamp: "2026-11-30T01:00:00Z" } })).toBe(
      Date.parse("2026-11-30T01:00:00Z"),
    );
  });
});
