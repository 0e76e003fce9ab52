// onto_healing_actions_total{action,reason}: what the healer did and why, on the manager's registry
// (served at /metrics beside onto_actions_total, which counts the same actions by verb and kind).
import type { Counter, Registry } from "prom-client";
import { sharedCounter } from "../../runtime/index.js";

const NAME = "onto_healing_actions_total";

export class HealingMetrics {
  private readonly counter: Counter<"action" | "reason">;

  constructor(registry: Registry) {
    this.counter = sharedCounter(registry, {
      name: NAME,
      help: "Healing actions (raise-memory, diagnose, delete-evicted, force-delete, drop-override) by reason.",
      labelNames: ["action", "reason"],
    });
  }

  inc(action: string, reason: string): void {
    this.counter.inc({ action, reason });
  }
}
