// Cost of one upgrade decision plus the render it drives, on the production sample mid-upgrade
// (ontology-service canary soaking, 13 workloads and their pods in the caches): the CPU the
// operator spends per reconcile of an upgrade, beyond waiting for pods.
// Run: npx tsx bench/upgrade-decide.ts
import { readFileSync } from "node:fs";
import { Registry } from "prom-client";
import { parse } from "yaml";
import { COMPONENTS, componentSpec, resolveSpec, type OntoPlatform } from "../src/api/index.js";
import { UpgradeOrchestrator } from "../src/controllers/upgrade/index.js";
import type { KubeObject } from "../src/kube/index.js";
import { imageFor, releaseFor } from "../src/release/index.js";
import { renderPlatform } from "../src/render/index.js";
import { Store } from "../src/runtime/index.js";

const sample = parse(readFileSync("samples/production.yaml", "utf8")) as OntoPlatform;
sample.spec.version = "1.6.0";
const spec = resolveSpec(sample.spec);
const registry = spec.global.imageRegistry;
const now = new Date();
const stores = new Map<string, Store<KubeObject>>([
  ["Deployment", new Store()],
  ["StatefulSet", new Store()],
  ["Pod", new Store()],
  ["OntoPlatform", new Store()],
]);
const done = ["postgres", "redis", "minio", "kafka"];
for (const c of COMPONENTS) {
  const version = done.includes(c.name) ? "1.6.0" : "1.5.0";
  const image = imageFor(releaseFor(version), c.name, registry);
  const replicas = componentSpec(spec, c).replicas;
  stores.get(c.kind)?.upsert({
    apiVersion: "apps/v1",
    kind: c.kind,
    metadata: {
      name: c.name,
      namespace: "ns",
      generation: 2,
      labels: { "app.kubernetes.io/version": version },
    },
    spec: { replicas, template: { spec: { containers: [{ name: c.name, image }] } } },
    status: { observedGeneration: 2, replicas, readyReplicas: replicas, updatedReplicas: replicas },
  } as KubeObject);
  for (let i = 0; i < replicas; i++) {
    stores.get("Pod")?.upsert({
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `${c.name}-${i}`,
        namespace: "ns",
        labels: { "app.kubernetes.io/instance": "onto-production", "app.kubernetes.io/name": c.name },
      },
      spec: { containers: [{ name: c.name, image }] },
      status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: now.toISOString() }] },
    } as KubeObject);
  }
}
stores.get("Pod")?.upsert({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "ontology-service-canary-x",
    namespace: "ns",
    labels: {
      "app.kubernetes.io/instance": "onto-production",
      "app.kubernetes.io/name": "ontology-service",
      "onto.paas/track": "canary",
    },
  },
  spec: {
    containers: [
      { name: "ontology-service", image: imageFor(releaseFor("1.6.0"), "ontology-service", registry) },
    ],
  },
  status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: now.toISOString() }] },
} as KubeObject);

const platform: OntoPlatform = {
  ...sample,
  metadata: { ...sample.metadata, namespace: "ns", uid: "u", generation: 3 },
  status: {
    phase: "Upgrading",
    version: "1.5.0",
    upgrade: {
      from: "1.5.0",
      to: "1.6.0",
      phase: "InProgress",
      startedAt: now.toISOString(),
      stepStartedAt: now.toISOString(),
      completedComponents: done,
      planned: Object.fromEntries(COMPONENTS.map((c) => [c.name, "1.5.0"])),
      component: "ontology-service",
      group: "controlPlane",
      step: "Canary",
    },
  },
};
const orchestrator = new UpgradeOrchestrator({
  cache: (kind) => stores.get(kind.kind) ?? new Store(),
  registry: new Registry(),
});

function time(what: string, n: number, fn: () => void): void {
  for (let i = 0; i < 200; i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  const us = Number(process.hrtime.bigint() - start) / 1000 / n;
  console.log(`${what}: ${us.toFixed(1)} us per call (${n} calls)`);
}

time("decide (canary soaking)", 5_000, () => orchestrator.decide(platform, spec));
const step = orchestrator.decide(platform, spec)?.step;
time("render of the step (what the reconciler then compares with the cache)", 500, () =>
  renderPlatform({
    platform: { name: "onto-production", namespace: "ns", uid: "u" },
    spec,
    release: releaseFor("1.6.0"),
    capabilities: { serviceMonitor: true, verticalPodAutoscaler: false },
    ...(step ? { upgrade: step } : {}),
    generateSecret: ({ length }) => "x".repeat(length),
  }),
);
