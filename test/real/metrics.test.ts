// metrics-server scrapes the real node's kubelet (its serving certificate is signed by the cluster
// CA for the node's address) as it scrapes KWOK's: the node and a pod that burns CPU on it show
// real usage in metrics.k8s.io, which the HPA and the VPA recommender read.
import { beforeAll, describe, expect, it } from "vitest";
import { createTestNamespace, eventually } from "../support/cluster.js";
import { busybox, createPod, kubectl, loadImages, onRealNode, realNodes, waitRunning } from "./support.js";

let ns = "";

beforeAll(async () => {
  realNodes();
  await loadImages(["busybox"]);
  ns = await createTestNamespace("real-metrics");
});

/** Millicores of a metrics.k8s.io CPU quantity ("12345678n", "15m", "1"). */
function milliCpu(q: string): number {
  const m = /^([0-9.]+)([num]?)$/.exec(q);
  if (!m) throw new Error(`not a CPU quantity: ${q}`);
  const scale = { n: 1e-6, u: 1e-3, m: 1, "": 1000 }[m[2] ?? ""] ?? 1;
  return Number(m[1]) * scale;
}

async function raw<T>(path: string): Promise<T | undefined> {
  const r = await kubectl(["get", "--raw", path]);
  return r.code === 0 ? (JSON.parse(r.stdout) as T) : undefined;
}

describe("resource metrics of the real node", () => {
  it("serves the real node's usage and a busy pod's CPU through metrics.k8s.io", async () => {
    const [node] = realNodes();
    // A loop capped at 200m by its limit: its usage is real CPU time, measured by the kernel.
    await createPod(
      ns,
      "busy",
      onRealNode({
        containers: [
          busybox("busy", "while :; do :; done", {
            resources: { requests: { cpu: "50m", memory: "16Mi" }, limits: { cpu: "200m", memory: "16Mi" } },
          }),
        ],
        terminationGracePeriodSeconds: 0,
      }),
    );
    await waitRunning(ns, "busy");

    const nodeUsage = await eventually(
      `NodeMetrics of ${node}`,
      async () =>
        (await raw<{ usage: { cpu: string; memory: string } }>(`/apis/metrics.k8s.io/v1beta1/nodes/${node}`))
          ?.usage,
      120_000,
      2_000,
    );
    const podCpu = await eventually(
      "PodMetrics of the busy pod with its CPU",
      async () => {
        const m = await raw<{ containers: { name: string; usage: { cpu: string } }[] }>(
          `/apis/metrics.k8s.io/v1beta1/namespaces/${ns}/pods/busy`,
        );
        const cpu = m?.containers.find((c) => c.name === "busy")?.usage.cpu;
        return cpu && milliCpu(cpu) > 20 ? milliCpu(cpu) : undefined;
      },
      120_000,
      2_000,
    );
    console.log(
      `[metrics] ${node}: cpu ${Math.round(milliCpu(nodeUsage.cpu))}m, memory ${nodeUsage.memory}; busy pod (limit 200m): cpu ${Math.round(podCpu)}m`,
    );
    expect(milliCpu(nodeUsage.cpu)).toBeGreaterThan(0);
    // Throttled at its limit by the kernel's CFS quota (a little above with measurement jitter).
    expect(podCpu).toBeLessThan(260);
  });
});
