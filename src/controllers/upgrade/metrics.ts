// Upgrade metrics on the manager's registry: how long upgrades take, how they end, and which
// platforms wait for a forward fix (an upgrade that failed past a point of no return).
import { Gauge, type Counter, type Histogram, type Registry } from "prom-client";
import type { OntoPlatform } from "../../api/index.js";
import { sharedCounter, sharedHistogram } from "../../runtime/index.js";

export type UpgradeResult = "succeeded" | "failed" | "superseded" | "forward-fix";

export class UpgradeMetrics {
  private readonly duration: Histogram<"result">;
  private readonly total: Counter<"result">;
  private readonly waiting: Gauge<"namespace" | "platform">;

  constructor(registry: Registry) {
    // Several operators may share one registry (tests start them in one process): shared*.
    this.duration = sharedHistogram(registry, {
      name: "onto_upgrade_duration_seconds",
      help: "Duration of platform upgrades from start to success, failure (after rollback), forward-fix stop or supersession.",
      labelNames: ["result"],
      buckets: [30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400],
    });
    this.total = sharedCounter(registry, {
      name: "onto_upgrades_total",
      help: "Platform upgrades that ended, by result (succeeded, failed, superseded, forward-fix).",
      labelNames: ["result"],
    });
    const name = "onto_upgrade_forward_fix";
    // Shared like the others: the gauge registered first on this registry is the one used.
    this.waiting =
      (registry.getSingleMetric(name) as Gauge<"platform_namespace" | "platform"> | undefined) ??
      new Gauge({
        name,
        help: "1 while a platform's upgrade failed past a point of no return and waits for a forward fix (not rolled back).",
        // Not `namespace`: Prometheus sets that label to the scraped target's (the operator's)
        // namespace and renames a scraped one to exported_namespace.
        labelNames: ["platform_namespace", "platform"],
        registers: [registry],
      });
  }

  finished(result: UpgradeResult, seconds: number): void {
    this.total.inc({ result });
    this.duration.observe({ result }, Math.max(0, seconds));
  }

  /** Whether `platform` waits for a forward fix (set on every decision, so a restart reports it again). */
  forwardFix(platform: OntoPlatform, waiting: boolean): void {
    const labels = { platform_namespace: platform.metadata.namespace, platform: platform.metadata.name };
    if (waiting) this.waiting.set(labels, 1);
    else this.waiting.remove(labels);
  }
}
