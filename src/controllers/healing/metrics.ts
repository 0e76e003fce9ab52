// onto_healing_actions_total{action,reason}: what the healer did and why, on the manager's registry
// (served at /metrics beside onto_actions_total, which counts the same actions by verb and kind).
import { Counter, type Registry } from "prom-client";

const NAME = "onto_healing_actions_total";

export class HealingMetrics {
  private readonly counter: Counter<"action" | "reason">;

  constructor(registry: Registry) {
    const existing = registry.getSingleMetric(NAME) as Counter<"action" | "reason"> | undefined;
    this.counter =
      existing ??
      new Counter({
        name: NAME,
        help: "Healing actions (raise-memory, diagnose, delete-evicted, force-delete, drop-override) by reason.",
        labelNames: ["action", "reason"],
        registers: [registry],
      });
  }

  inc(action: string, reason: string): void {
    this.counter.inc({ action, reason });
  }
}
