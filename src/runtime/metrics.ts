// Prometheus metrics under controller-runtime's and client-go's names, so existing dashboards and
// alerts work. Each manager has its own registry (two managers in one process, as in tests, do not
// collide).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, exponentialBuckets } from "prom-client";
import type { KubeClient } from "../kube/index.js";
import type { WorkQueueObserver } from "./queue.js";

export class RuntimeMetrics {
  readonly registry = new Registry();

  readonly reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: [
      0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25,
      1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
    ],
    registers: [this.registry],
  });
  readonly maxConcurrentReconciles = new Gauge({
    name: "controller_runtime_max_concurrent_reconciles",
    help: "Maximum number of concurrent reconciles per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: "controller_runtime_active_workers",
    help: "Number of currently used workers per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly workqueueDepth = new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly workqueueAdds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly workqueueQueueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: ["name"] as const,
    buckets: exponentialBuckets(10e-9, 10, 12),
    registers: [this.registry],
  });
  readonly workqueueWorkDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: ["name"] as const,
    buckets: exponentialBuckets(10e-9, 10, 12),
    registers: [this.registry],
  });
  readonly workqueueRetries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly restClientRequests = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code and method",
    labelNames: ["code", "method"] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: "leader_election_master_status",
    help: "1 while this process holds the leader lease, else 0",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Counts every request `client` sends in rest_client_requests_total; returns the unsubscribe. */
  countRequests(client: KubeClient): () => void {
    return client.onRequest((r) => this.restClientRequests.inc({ code: r.code, method: r.method }));
  }

  /** The workqueue_* series of the queue named `name`. */
  queueObserver(name: string): WorkQueueObserver {
    return {
      added: () => this.workqueueAdds.inc({ name }),
      depth: (n) => this.workqueueDepth.set({ name }, n),
      queued: (s) => this.workqueueQueueDuration.observe({ name }, s),
      worked: (s) => this.workqueueWorkDuration.observe({ name }, s),
      retried: () => this.workqueueRetries.inc({ name }),
    };
  }

  /** Sum of a counter's values over the series whose labels include `labels`. */
  async total(metricName: string, labels: Record<string, string> = {}): Promise<number> {
    const metric = this.registry.getSingleMetric(metricName);
    if (!metric) throw new Error(`metrics: no metric named ${metricName}`);
    const { values } = await metric.get();
    return values
      .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
      .reduce((sum, v) => sum + v.value, 0);
  }
}

/**
 * The counter named `config.name` on `registry`, created on first use: several operators (or
 * controllers) may share one registry, as tests do, and prom-client refuses a second registration.
 */
export function sharedCounter<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
): Counter<L> {
  return (
    (registry.getSingleMetric(config.name) as Counter<L> | undefined) ??
    new Counter<L>({ ...config, registers: [registry] })
  );
}

/** The gauge named `config.name` on `registry`, created on first use (see sharedCounter). */
export function sharedGauge<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
): Gauge<L> {
  return (
    (registry.getSingleMetric(config.name) as Gauge<L> | undefined) ??
    new Gauge<L>({ ...config, registers: [registry] })
  );
}

/** The histogram named `config.name` on `registry`, created on first use (see sharedCounter). */
export function sharedHistogram<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[]; buckets: number[] },
): Histogram<L> {
  return (
    (registry.getSingleMetric(config.name) as Histogram<L> | undefined) ??
    new Histogram<L>({ ...config, registers: [registry] })
  );
}
