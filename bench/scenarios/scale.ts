// Scale: N minimal platforms, each in its own namespace, applied at once. Measured: time until the
// first and until all are Running, the bench process's peak RSS and CPU seconds (the operator runs
// in it), reconcile time and queue wait from the operator's own histograms, operator requests per
// platform, and the latency of one spec change once all N are converged.
import type { Histogram } from "prom-client";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import type { FigureSet } from "../lib/figures.js";
import { histogramQuantile, median, percentile } from "../lib/stats.js";
import {
  PLATFORM_NAME,
  benchNamespace,
  createNamespace,
  deleteNamespace,
  minimalPlatform,
  platformRunning,
  waitFor,
  type BenchEnv,
} from "../lib/env.js";

async function quantiles(h: Histogram, qs: number[]): Promise<number[]> {
  const { values } = await h.get();
  const buckets = values
    .filter((v) => v.metricName?.endsWith("_bucket"))
    .map((v) => ({
      le: v.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(v.labels.le),
      count: v.value,
    }))
    .sort((a, b) => a.le - b.le);
  // Several label sets (controllers/queues) share bucket bounds: sum them per bound.
  const merged = new Map<number, number>();
  for (const b of buckets) merged.set(b.le, (merged.get(b.le) ?? 0) + b.count);
  const list = [...merged].map(([le, count]) => ({ le, count }));
  return qs.map((q) => histogramQuantile(q, list));
}

export async function scale(env: BenchEnv, figs: FigureSet, platforms: number): Promise<void> {
  const namespaces = Array.from({ length: platforms }, (_, i) => benchNamespace(`scale-${i}`));
  for (const ns of namespaces) await createNamespace(env.admin, ns);
  const metrics = env.operator.manager.metrics;
  metrics.reconcileTime.reset();
  metrics.workqueueQueueDuration.reset();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
  const cpuBefore = process.cpuUsage();
  env.requests.reset();
  const start = performance.now();
  await Promise.all(namespaces.map((ns) => env.admin.apply(minimalPlatform(ns))));
  let first = Number.NaN;
  const done = new Set<string>();
  await waitFor(
    `${platforms} platforms Running`,
    60 * 60_000,
    async () => {
      const list = await env.admin.list<OntoPlatform & KubeObject>(
        PLATFORM_REF.apiVersion,
        PLATFORM_REF.kind,
      );
      for (const p of list.items)
        if (
          p.metadata.namespace &&
          namespaces.includes(p.metadata.namespace) &&
          p.status?.phase === "Running" &&
          p.status.observedGeneration === p.metadata.generation
        )
          done.add(p.metadata.namespace);
      if (done.size > 0 && Number.isNaN(first)) first = performance.now() - start;
      return done.size === platforms;
    },
    500,
  );
  const allMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const requests = env.requests.total();
  env.log(`scale ${platforms}: operator requests by kind: ${env.requests.top(10).join("; ")}`);
  const [r50, r99] = await quantiles(metrics.reconcileTime, [0.5, 0.99]);
  const [q99] = await quantiles(metrics.workqueueQueueDuration, [0.99]);

  // One spec change in the converged fleet, a few times: patch to Running at the new generation.
  const changes = env.quick ? 3 : 5;
  const latencies: number[] = [];
  const target = namespaces[0] as string;
  for (let i = 0; i < changes; i++) {
    const t = performance.now();
    await env.admin.mergePatch(
      { ...PLATFORM_REF, namespace: target, name: PLATFORM_NAME },
      { spec: { observability: { logging: { level: i % 2 === 0 ? "DEBUG" : "INFO" } } } },
    );
    await waitFor(`${target} Running after a change`, 300_000, () => platformRunning(env.admin, target), 50);
    latencies.push(performance.now() - t);
  }
  clearInterval(sampler);

  const s = `scale${platforms}`;
  figs.add(s, "platforms", platforms, "platforms", "higher");
  figs.add(s, "firstRunning", Math.round(first), "ms");
  figs.add(s, "allRunning", Math.round(allMs), "ms");
  figs.add(s, "peakRss", Math.round(peakRss / 2 ** 20), "MiB");
  figs.add(s, "cpu", Number(((cpu.user + cpu.system) / 1e6).toFixed(1)), "s");
  figs.add(s, "reconcile.p50", Math.round((r50 ?? Number.NaN) * 1000), "ms");
  figs.add(s, "reconcile.p99", Math.round((r99 ?? Number.NaN) * 1000), "ms");
  figs.add(s, "queueWait.p99", Math.round((q99 ?? Number.NaN) * 1000), "ms");
  figs.add(s, "requestsPerPlatform", Number((requests / platforms).toFixed(1)), "requests");
  figs.add(s, "specChange.p50", Math.round(median(latencies)), "ms");
  figs.add(s, "specChange.p99", Math.round(percentile(latencies, 99)), "ms");
  env.log(`scale ${platforms}: all Running in ${Math.round(allMs)} ms; deleting namespaces`);
  await Promise.all(namespaces.map((ns) => deleteNamespace(env.admin, ns)));
}
