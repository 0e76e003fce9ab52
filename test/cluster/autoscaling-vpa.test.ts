// Vertical scaling with the real VPA recommender: KWOK's emulated kubelets report the usage a
// test puts on the pods, metrics-server serves it, the recommender (v1.8.1, built from its Go
// module) writes recommendations into the VerticalPodAutoscalers the operator created, and the
// operator shows them in status and `onto status` and, in mode Apply, sets the requests through
// a normal rolling update. A component an HPA scales on CPU gets memory recommendations only.
import { useOperator } from "../support/operator.js";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OntoPlatform, VerticalState } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { eventually, kubeconfigPath } from "../support/cluster.js";
import { simulateLoad, type Load } from "../support/load.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "onto-minimal";
const APPLY = "schema-registry";
const HPA = "ontology-service";
const BOUNDS = { minAllowed: { cpu: "100m", memory: "128Mi" }, maxAllowed: { cpu: "2", memory: "2Gi" } };

const fx = useOperator({
  namespaces: ["vpa"],
  waitMs: 300_000,
  platform: (namespace) => {
    const platform = loadSample("minimal.yaml", namespace);
    platform.spec.controlPlane = {
      schemaRegistry: {
        resources: { requests: { cpu: "250m", memory: "256Mi" } },
        verticalScaling: { mode: "Apply", ...BOUNDS },
      },
      ontologyService: {
        resources: { requests: { cpu: "200m", memory: "256Mi" } },
        autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 4, targetCPUUtilization: 80 },
        verticalScaling: { mode: "Recommend" },
      },
    };
    return platform;
  },
});
const { client, ns } = fx;
const loads: Load[] = [];

type Deployment = KubeObject & {
  spec: {
    template: { spec: { containers: { name: string; resources: { requests: Record<string, string> } }[] } };
  };
  status?: { updatedReplicas?: number; replicas?: number; observedGeneration?: number };
};

async function mainRequests(name: string): Promise<Record<string, string>> {
  const d = await client.get<Deployment>({ apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name });
  return d.spec.template.spec.containers.find((c) => c.name === name)?.resources.requests ?? {};
}

/** A Kubernetes quantity as a number (enough for the comparisons below). */
function parse(q: string): number {
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(q);
  const unit: Record<string, number> = {
    "": 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
  };
  return Number(m?.[1]) * (unit[m?.[2] ?? ""] ?? NaN);
}

beforeAll(() => {
  // 600m and 700Mi per schema-registry pod (more than the 250m/256Mi it requests); ontology-service
  // at 100m per pod over its 2 pods, 300Mi each.
  loads.push(
    simulateLoad(client, {
      namespace: ns,
      platform: NAME,
      component: APPLY,
      totalCpuMilli: 1200,
      memoryPerPod: "700Mi",
    }),
    simulateLoad(client, {
      namespace: ns,
      platform: NAME,
      component: HPA,
      totalCpuMilli: 200,
      memoryPerPod: "300Mi",
    }),
  );
});

afterAll(async () => {
  for (const load of loads) await load.stop();
});

describe("vertical scaling from the VPA recommender", () => {
  it("reads the recommendation into status, applies it within bounds through a rollout, and shows it in onto status", async () => {
    const started = Date.now();
    const before = await mainRequests(APPLY);
    // The recommender's first answer comes before it has seen the load (its minimum, raised to
    // minAllowed); as samples arrive it follows the usage. Each state the status went through:
    const seen: string[] = [];
    const state = await eventually(
      `${APPLY}'s recommendation, following the usage, applied in status`,
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const s = p.status?.verticalScaling?.[APPLY];
        const line = `recommended ${JSON.stringify(s?.target)} within range ${String(s?.withinRange)} applied ${JSON.stringify(s?.applied)}`;
        if (s && seen[seen.length - 1]?.endsWith(line) !== true)
          seen.push(`t=${Math.round((Date.now() - started) / 1000)} s ${line}`);
        return s?.applied?.cpu &&
          s.applied.memory &&
          parse(s.applied.cpu) > parse("250m") &&
          parse(s.applied.memory) > parse("256Mi")
          ? s
          : undefined;
      },
      420_000,
      2_000,
    ).finally(() =>
      console.log(
        `${APPLY} vertical scaling (spec requests ${JSON.stringify(before)}):\n  ${seen.join("\n  ")}`,
      ),
    );
    expect(state.mode).toBe("Apply");
    // The recommender saw the usage: more CPU and memory than the spec requested, within bounds.
    expect(parse(state.applied?.cpu ?? "0")).toBeGreaterThan(parse("250m"));
    expect(parse(state.applied?.cpu ?? "0")).toBeLessThanOrEqual(parse(BOUNDS.maxAllowed.cpu));
    expect(parse(state.applied?.memory ?? "0")).toBeGreaterThan(parse("256Mi"));
    expect(parse(state.applied?.memory ?? "0")).toBeLessThanOrEqual(parse(BOUNDS.maxAllowed.memory));

    // Rendered into the Deployment and rolled out like any spec change.
    await eventually(
      `${APPLY}'s pods running with the applied requests`,
      async () => {
        const requests = await mainRequests(APPLY);
        if (requests.cpu !== state.applied?.cpu || requests.memory !== state.applied?.memory)
          return undefined;
        const d = await client.get<Deployment>({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: ns,
          name: APPLY,
        });
        return d.status?.observedGeneration === d.metadata?.generation &&
          d.status?.updatedReplicas === d.status?.replicas
          ? true
          : undefined;
      },
      180_000,
      2_000,
    );
    const pods = (
      await client.list<KubeObject & { spec: Deployment["spec"]["template"]["spec"] }>("v1", "Pod", {
        namespace: ns,
        labelSelector: `app.kubernetes.io/name=${APPLY},app.kubernetes.io/instance=${NAME}`,
      })
    ).items.filter((p) => !(p.metadata as { deletionTimestamp?: string }).deletionTimestamp);
    expect(pods.length).toBeGreaterThan(0);
    for (const pod of pods)
      expect(pod.spec.containers.find((c) => c.name === APPLY)?.resources.requests).toMatchObject(
        state.applied ?? {},
      );

    // The action is on record, and onto status shows it.
    const events = await client.list<KubeObject & { reason?: string; note?: string }>(
      "events.k8s.io/v1",
      "Event",
      {
        namespace: ns,
      },
    );
    expect(events.items.some((e) => e.reason === "VerticalScalingApplied")).toBe(true);
    const text = execFileSync(
      "node",
      ["bin/onto.js", "status", NAME, "-n", ns, "--kubeconfig", kubeconfigPath()],
      {
        encoding: "utf8",
      },
    );
    console.log(
      text
        .split("\n")
        .filter((l) => /Vertical scaling|COMPONENT|schema-registry|ontology-service/.test(l))
        .join("\n"),
    );
    expect(text).toContain("Vertical scaling: VerticalPodAutoscaler recommendations");
    expect(text).toMatch(new RegExp(`${APPLY}\\s+Apply\\s+cpu `));
  }, 720_000);

  it("recommends memory only for the component an HPA scales on CPU, and leaves its CPU request alone", async () => {
    const state = await eventually<VerticalState>(
      `${HPA}'s recommendation in status`,
      async () => (await readPlatform(client, ns, NAME)).status?.verticalScaling?.[HPA],
      300_000,
      2_000,
    );
    console.log(`${HPA}: recommendation ${JSON.stringify(state.target)} (mode ${state.mode})`);
    expect(Object.keys(state.target ?? {})).toEqual(["memory"]);
    expect(state.applied).toBeUndefined();
    expect((await mainRequests(HPA)).cpu).toBe("200m");
    const vpa = await client.get<
      KubeObject & {
        status?: { recommendation?: { containerRecommendations?: { target: Record<string, string> }[] } };
      }
    >({
      apiVersion: "autoscaling.k8s.io/v1",
      kind: "VerticalPodAutoscaler",
      namespace: ns,
      name: HPA,
    });
    // The recommender itself was told so: its recommendation has no CPU.
    expect(Object.keys(vpa.status?.recommendation?.containerRecommendations?.[0]?.target ?? {})).toEqual([
      "memory",
    ]);
    const p: OntoPlatform = await readPlatform(client, ns, NAME);
    expect(p.status?.phase).toBe("Running");
  }, 400_000);
});
