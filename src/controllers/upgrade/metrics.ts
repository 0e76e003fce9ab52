// Upgrade metrics on the manager's registry: how long upgrades take and how they end.
import type { Counter, Histogram, Registry } from "prom-client";
import { sharedCounter, sharedHistogram } from "../../runtime/index.js";

export type UpgradeResult = "succeeded" | "failed" | "superseded";

export class UpgradeMetrics {
  private readonly duration: Histogram<"result">;
  private readonly total: Counter<"result">;

  constructor(registry: Registry) {
    // Several operators may share one registry (tests start them in one process): shared*.
    this.duration = sharedHistogram(registry, {
      name: "onto_upgrade_duration_seconds",
      help: "Duration of platform upgrades from start to success, failure (after rollback) or supersession.",
      labelNames: ["result"],
      buckets: [30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400],
    });
    this.total = sharedCounter(registry, {
      name: "onto_upgrades_total",
      help: "Platform upgrades that ended, by result (succeeded, failed, superseded).",
      labelNames: ["result"],
    });
  }

  finished(result: UpgradeResult, seconds: number): void {
    this.total.inc({ result });
    this.duration.observe({ result }, Math.max(0, seconds));
  }
}
