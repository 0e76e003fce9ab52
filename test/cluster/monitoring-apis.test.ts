// The monitoring and autoscaling APIs the local cluster serves from their upstream CRDs (the
// Prometheus Operator's monitoring.coreos.com/v1 at the version the chart documents, the VPA's
// autoscaling.k8s.io/v1) and metrics.k8s.io from metrics-server: the operator discovers them, and
// every ServiceMonitor and VerticalPodAutoscaler it renders is accepted by the real API server,
// by server-side dry run and by a real create. The chart's ServiceMonitor and PrometheusRule are
// covered by install-chart.test.ts.
import { beforeAll, describe, expect, it } from "vitest";
import { resolveSpec } from "../../src/api/index.js";
import { discoverCapabilities } from "../../src/controllers/operator.js";
import { InvalidError, type KubeObject } from "../../src/kube/index.js";
import { releaseFor } from "../../src/release/index.js";
import { renderPlatform, type RenderedObject } from "../../src/render/index.js";
import { createTestNamespace } from "../support/cluster.js";
import { adminClient, loadSample } from "../support/platform.js";

const client = adminClient();
let ns = "";
let rendered: RenderedObject[] = [];

beforeAll(async () => {
  ns = await createTestNamespace("monitoring-apis");
  const platform = loadSample("production.yaml", ns);
  const spec = resolveSpec({
    ...platform.spec,
    observability: { ...platform.spec.observability, metrics: { enabled: true, serviceMonitor: true } },
  });
  rendered = renderPlatform({
    platform: { name: platform.metadata.name, namespace: ns, uid: "00000000-0000-0000-0000-000000000001" },
    spec,
    release: releaseFor(spec.version),
    capabilities: await discoverCapabilities(client),
    generateSecret: ({ length }) => "x".repeat(length),
  });
});

describe("monitoring and autoscaling APIs of the local cluster", () => {
  it("are discovered by the operator: ServiceMonitor and VPA served, custom metrics and cert-manager not", async () => {
    // cert-manager's API is served only while test/cluster/tls-cert-manager.test.ts runs (alone).
    expect(await discoverCapabilities(client)).toEqual({
      serviceMonitor: true,
      verticalPodAutoscaler: true,
      customMetrics: false,
      certManager: false,
    });
    expect(await client.discovery.hasGroupVersion("metrics.k8s.io/v1beta1")).toBe(true);
    expect(await client.discovery.hasResource("monitoring.coreos.com/v1", "PodMonitor")).toBe(true);
    expect(await client.discovery.hasResource("monitoring.coreos.com/v1", "PrometheusRule")).toBe(true);
  });

  it("accept every ServiceMonitor and VPA the operator renders (dry run, then real create)", async () => {
    const monitoring = rendered
      .filter((o) => o.kind === "ServiceMonitor" || o.kind === "VerticalPodAutoscaler")
      // Owner references point at a platform that does not exist here; the garbage collector
      // would remove the objects before they are read back.
      .map((o) => ({ ...o, metadata: { ...o.metadata, ownerReferences: [] } }));
    const counts = { ServiceMonitor: 0, VerticalPodAutoscaler: 0 };
    for (const obj of monitoring) counts[obj.kind as keyof typeof counts]++;
    console.log(`rendered: ${counts.ServiceMonitor} ServiceMonitors, ${counts.VerticalPodAutoscaler} VPAs`);
    expect(counts.ServiceMonitor).toBeGreaterThanOrEqual(5);
    expect(counts.VerticalPodAutoscaler).toBeGreaterThanOrEqual(13);
    for (const obj of monitoring) await client.apply(obj, { dryRun: true, force: true });
    expect(
      await client.list("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", { namespace: ns }),
    ).toMatchObject({
      items: [],
    });
    for (const obj of monitoring) {
      await client.apply(obj, { force: true });
      const live = await client.get<KubeObject & { spec: unknown }>({
        apiVersion: obj.apiVersion ?? "",
        kind: obj.kind ?? "",
        namespace: ns,
        name: obj.metadata?.name ?? "",
      });
      // Nothing the operator renders is pruned by the CRDs' structural schemas.
      expect(live.spec).toEqual((obj as { spec?: unknown }).spec);
    }
  });

  it("refuse what the CRDs' schemas forbid (the checks are real)", async () => {
    const vpa = rendered.find((o) => o.kind === "VerticalPodAutoscaler") as RenderedObject & {
      spec: { updatePolicy: { updateMode: string } };
    };
    const bad = structuredClone(vpa);
    bad.spec.updatePolicy.updateMode = "Sometimes";
    bad.metadata = { ...bad.metadata, name: "refused", ownerReferences: [] };
    await expect(client.apply(bad as unknown as KubeObject, { dryRun: true })).rejects.toBeInstanceOf(
      InvalidError,
    );
    const monitor = rendered.find((o) => o.kind === "ServiceMonitor") as RenderedObject & {
      spec: { endpoints: { interval: string }[] };
    };
    const badMonitor = structuredClone(monitor);
    const first = badMonitor.spec.endpoints[0];
    if (first) first.interval = "thirty seconds";
    badMonitor.metadata = { ...badMonitor.metadata, name: "refused", ownerReferences: [] };
    await expect(client.apply(badMonitor as unknown as KubeObject, { dryRun: true })).rejects.toBeInstanceOf(
      InvalidError,
    );
  });
});
