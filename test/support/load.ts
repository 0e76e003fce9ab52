// Simulated load on a component's KWOK pods: a total CPU (and optionally a memory per pod) shared
// by the pods that exist, written into the usage annotations KWOK's emulated kubelet reports
// (tools/monitoring/kwok-metrics.yaml) and metrics-server scrapes. Like real traffic behind a
// Service, the total spreads over new pods as the HPA adds them. Bounded: it stops by itself
// after `maxMs`.
import type { KubeClient, KubeObject } from "../../src/kube/index.js";
import { USAGE_ANNOTATIONS } from "../../src/localcluster/monitoring.js";
import { selectorLabels } from "../../src/render/index.js";

export interface Load {
  /** Total CPU in millicores over all pods of the component. */
  setTotalCpuMilli(milli: number): void;
  stop(): Promise<void>;
}

export function simulateLoad(
  client: KubeClient,
  opts: {
    namespace: string;
    platform: string;
    component: string;
    totalCpuMilli: number;
    memoryPerPod?: string;
    intervalMs?: number;
    maxMs?: number;
  },
): Load {
  let total = opts.totalCpuMilli;
  let running = true;
  const deadline = Date.now() + (opts.maxMs ?? 20 * 60_000);
  const selector = Object.entries(selectorLabels(opts.platform, opts.component))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const loop = (async () => {
    while (running && Date.now() < deadline) {
      const pods = (
        await client.list("v1", "Pod", { namespace: opts.namespace, labelSelector: selector })
      ).items
        .filter((p) => !(p.metadata as { deletionTimestamp?: string }).deletionTimestamp)
        .filter((p) => (p as KubeObject & { status?: { phase?: string } }).status?.phase === "Running");
      const perPod = pods.length > 0 ? `${Math.round(total / pods.length)}m` : "0m";
      for (const pod of pods) {
        const annotations = pod.metadata?.annotations ?? {};
        const want: Record<string, string> = { [USAGE_ANNOTATIONS.cpu]: perPod };
        if (opts.memoryPerPod) want[USAGE_ANNOTATIONS.memory] = opts.memoryPerPod;
        if (Object.entries(want).every(([k, v]) => annotations[k] === v)) continue;
        await client
          .mergePatch(
            { apiVersion: "v1", kind: "Pod", namespace: opts.namespace, name: pod.metadata?.name ?? "" },
            { metadata: { annotations: want } },
          )
          .catch(() => undefined); // a pod deleted meanwhile
      }
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 2_000));
    }
  })();
  return {
    setTotalCpuMilli: (milli) => {
      total = milli;
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
