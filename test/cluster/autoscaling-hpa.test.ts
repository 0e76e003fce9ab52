// The HorizontalPodAutoscaler the operator renders, driven by real metrics: KWOK's emulated
// kubelets report the CPU a test puts on ontology-service's pods, metrics-server serves it as
// metrics.k8s.io, and the controller-manager's HPA controller scales the Deployment by the spec's
// behaviour (the seed's policies, with windows shortened through autoscaling.behavior). Meanwhile
// every request the operator sends is counted: it must send no write to the scaled Deployment
// (the HPA owns `replicas`). The test prints the replica timeline it measured.
import { useOperator } from "../support/operator.js";
import { describe, expect, it } from "vitest";
import type { KubeObject, RequestRecord } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { replicasOwners } from "../support/managed-fields.js";
import { simulateLoad } from "../support/load.js";
import { loadSample } from "../support/platform.js";

const NAME = "onto-minimal";
const COMPONENT = "ontology-service";
const MIN = 2;
const MAX = 6;
/** 50% of a 200m request: 100m per pod is on target. */
const REQUEST_MILLI = 200;
const TARGET_PERCENT = 50;
const UP = { pods: 2, periodSeconds: 15, stabilizationWindowSeconds: 0 };
const DOWN = { pods: 1, periodSeconds: 15, stabilizationWindowSeconds: 30 };

const fx = useOperator({
  namespaces: ["hpa"],
  waitMs: 300_000,
  platform: (namespace) => {
    const platform = loadSample("minimal.yaml", namespace);
    platform.spec.controlPlane = {
      ontologyService: {
        resources: { requests: { cpu: `${REQUEST_MILLI}m`, memory: "256Mi" } },
        autoscaling: {
          enabled: true,
          minReplicas: MIN,
          maxReplicas: MAX,
          targetCPUUtilization: TARGET_PERCENT,
          behavior: { scaleUp: UP, scaleDown: DOWN },
        },
      },
    };
    return platform;
  },
});
const { client, ns } = fx;

interface Sample {
  t: number;
  replicas: number;
  desired: number;
  cpu: string;
  /** The HPA's conditions that are not True (why it does not scale), for a failure's timeline. */
  blocked: string;
}

type Hpa = KubeObject & {
  status?: {
    currentReplicas?: number;
    desiredReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
    currentMetrics?: { resource?: { name: string; current?: { averageUtilization?: number } } }[];
  };
};
type Deployment = KubeObject & { spec?: { replicas?: number } };

describe("HPA driven by metrics-server", () => {
  it("scales ontology-service up and down by the spec's behaviour; the operator never writes the Deployment", async () => {
    const started = Date.now();
    const seconds = () => Math.round((Date.now() - started) / 1000);
    const requests: RequestRecord[] = [];
    const stopCounting = fx.operator.manager.client.onRequest((r) => requests.push(r));
    const load = simulateLoad(client, {
      namespace: ns,
      platform: NAME,
      component: COMPONENT,
      totalCpuMilli: 1500,
    });
    const timeline: Sample[] = [];
    const sample = async (): Promise<Sample> => {
      const d = await client.get<Deployment>({
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: ns,
        name: COMPONENT,
      });
      const hpa = await client.get<Hpa>({
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        namespace: ns,
        name: COMPONENT,
      });
      const cpu = hpa.status?.currentMetrics?.find((m) => m.resource?.name === "cpu")?.resource?.current
        ?.averageUtilization;
      const s = {
        t: seconds(),
        replicas: d.spec?.replicas ?? 0,
        desired: hpa.status?.desiredReplicas ?? 0,
        cpu: cpu === undefined ? "-" : `${cpu}%`,
        blocked: (hpa.status?.conditions ?? [])
          .filter((c) => c.status !== "True")
          .map((c) => `${c.type}=${c.reason ?? c.status}`)
          .join(","),
      };
      const last = timeline[timeline.length - 1];
      if (
        !last ||
        last.replicas !== s.replicas ||
        last.desired !== s.desired ||
        last.cpu !== s.cpu ||
        last.blocked !== s.blocked
      )
        timeline.push(s);
      return s;
    };
    let dropAt = 0;
    try {
      // 1500m over the pods: 375% of the request on 2 pods; the HPA wants more than MAX.
      await eventually(
        `${COMPONENT} at ${MAX} replicas`,
        async () => ((await sample()).replicas === MAX ? true : undefined),
        360_000,
        2_000,
      );
      // 150m in all: 12% on 6 pods; the HPA wants MIN.
      load.setTotalCpuMilli(150);
      dropAt = seconds();
      await eventually(
        `${COMPONENT} back at ${MIN} replicas`,
        async () => ((await sample()).replicas === MIN ? true : undefined),
        600_000,
        2_000,
      );
    } finally {
      await load.stop();
      stopCounting();
      console.log(
        `HPA timeline (load 1500m from 0 s, 150m from ${dropAt} s; up ${UP.pods} pods/${UP.periodSeconds} s, down ${DOWN.pods} pod/${DOWN.periodSeconds} s after a ${DOWN.stabilizationWindowSeconds} s window):\n` +
          timeline
            .map(
              (s) =>
                `  t=${String(s.t).padStart(4)} s  replicas ${s.replicas}  desired ${s.desired}  cpu ${s.cpu}${s.blocked ? `  not true: ${s.blocked}` : ""}`,
            )
            .join("\n"),
      );
    }

    // Each change of spec.replicas the HPA made: up by at most UP.pods, down by DOWN.pods.
    const changes: { t: number; from: number; to: number }[] = [];
    for (let i = 1; i < timeline.length; i++) {
      const [a, b] = [timeline[i - 1], timeline[i]];
      if (a && b && a.replicas !== b.replicas) changes.push({ t: b.t, from: a.replicas, to: b.replicas });
    }
    const ups = changes.filter((c) => c.to > c.from);
    const downs = changes.filter((c) => c.to < c.from);
    expect(ups.length).toBeGreaterThanOrEqual(2); // 2 -> 4 -> 6: the rate limit shows
    for (const c of ups) expect(c.to - c.from).toBeLessThanOrEqual(UP.pods);
    expect(downs.map((c) => c.from - c.to)).toEqual(Array(MAX - MIN).fill(DOWN.pods));
    // Nothing goes down before the scale-down window has passed since the load dropped.
    expect((downs[0]?.t ?? 0) - dropAt).toBeGreaterThanOrEqual(DOWN.stabilizationWindowSeconds);

    // What the operator sent meanwhile to the scaled workload and its HPA.
    const scaled = requests.filter((r) =>
      new RegExp(`/(deployments|horizontalpodautoscalers)/${COMPONENT}(/|\\?|$)`).test(r.path),
    );
    const byMethod = new Map<string, number>();
    for (const r of requests) byMethod.set(r.method, (byMethod.get(r.method) ?? 0) + 1);
    const writes = new Map<string, number>();
    for (const r of requests.filter((r) => r.method !== "GET")) {
      const target = `${r.method} ${r.path.replace(/\?.*$/, "")}`;
      writes.set(target, (writes.get(target) ?? 0) + 1);
    }
    console.log(
      `operator requests during the test: ${requests.length} in all (${[...byMethod].map(([m, n]) => `${m} ${n}`).join(", ")}); ` +
        `to Deployment/HPA ${COMPONENT}: ${scaled.length} (${scaled.map((r) => `${r.method} ${r.path}`).join(", ") || "none"}); ` +
        `writes: ${[...writes].map(([t, n]) => `${n} x ${t}`).join(", ") || "none"}`,
    );
    expect(scaled.filter((r) => r.method !== "GET")).toEqual([]);
    // And no field manager of the operator owns spec.replicas.
    const d = await client.get<Deployment>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: ns,
      name: COMPONENT,
    });
    const owners = replicasOwners(d).map((o) => o.manager);
    console.log(`managers of spec.replicas: ${owners.join(", ")}`);
    expect(owners).not.toContain("onto-operator");
  }, 1_020_000);
});
