// Postgres HA metrics on the manager's registry: promotions by reason and how long pg_promote()
// took, and each standby's replay lag behind the primary.
import type { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { OntoPlatform } from "../../api/index.js";
import { sharedCounter, sharedGauge, sharedHistogram } from "../../runtime/index.js";

export class PostgresHaMetrics {
  private readonly promotions: Counter<"reason">;
  private readonly promoteSeconds: Histogram<"reason">;
  private readonly lagBytes: Gauge<"namespace" | "platform" | "member">;

  constructor(registry: Registry) {
    this.promotions = sharedCounter(registry, {
      name: "onto_postgres_promotions_total",
      help: "Postgres standbys promoted, by reason (PrimaryPodGone, PrimaryNodeLost, PrimaryNotAnswering, PrimaryInRecovery, Switchover, RollingUpdate).",
      labelNames: ["reason"],
    });
    this.promoteSeconds = sharedHistogram(registry, {
      name: "onto_postgres_promote_duration_seconds",
      help: "Time pg_promote() took on the promoted standby.",
      labelNames: ["reason"],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    });
    this.lagBytes = sharedGauge(registry, {
      name: "onto_postgres_standby_lag_bytes",
      help: "WAL bytes between the Postgres primary's position and each standby's replay.",
      labelNames: ["namespace", "platform", "member"],
    });
  }

  promoted(reason: string, seconds: number): void {
    this.promotions.inc({ reason });
    this.promoteSeconds.observe({ reason }, seconds);
  }

  /** A promotion found done on a later pass: counted; its duration is not known. */
  confirmed(reason: string): void {
    this.promotions.inc({ reason });
  }

  lag(platform: OntoPlatform, member: string, bytes: number): void {
    this.lagBytes.set(
      { namespace: platform.metadata.namespace, platform: platform.metadata.name, member },
      bytes,
    );
  }
}
