import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../kube/index.js";
import { platformKeyOfPod } from "./healer.js";
import { nodeHealthChanged } from "./register.js";

function node(ready: string, heartbeat: string, taints: { key: string; effect: string }[] = []): KubeObject {
  return {
    metadata: { name: "w1" },
    spec: { taints },
    status: {
      conditions: [
        { type: "Ready", status: ready, lastHeartbeatTime: heartbeat },
        { type: "MemoryPressure", status: "False", lastHeartbeatTime: heartbeat },
      ],
    },
  } as KubeObject;
}

describe("nodeHealthChanged", () => {
  it("ignores heartbeats and passes readiness, pressure and taint changes", () => {
    const old = node("True", "2026-11-30T03:00:00Z");
    expect(nodeHealthChanged({ type: "update", old, obj: node("True", "2026-11-30T03:00:20Z") })).toBe(false);
    expect(nodeHealthChanged({ type: "update", old, obj: node("Unknown", "2026-11-30T03:00:00Z") })).toBe(
      true,
    );
    const tainted = node("True", "2026-11-30T03:00:00Z", [
      { key: "node.kubernetes.io/unreachable", effect: "NoExecute" },
    ]);
    expect(nodeHealthChanged({ type: "update", old, obj: tainted })).toBe(true);
    expect(nodeHealthChanged({ type: "add", obj: old })).toBe(true);
  });
});

describe("platformKeyOfPod", () => {
  it("maps a platform pod to namespace/instance, and nothing else", () => {
    const labels = { "app.kubernetes.io/instance": "onto", "app.kubernetes.io/managed-by": "onto-operator" };
    expect(platformKeyOfPod({ metadata: { namespace: "ns", labels } })).toBe("ns/onto");
    expect(
      platformKeyOfPod({
        metadata: { namespace: "ns", labels: { ...labels, "app.kubernetes.io/managed-by": "helm" } },
      }),
    ).toBeUndefined();
    expect(platformKeyOfPod({ metadata: { namespace: "ns" } })).toBeUndefined();
  });
});
