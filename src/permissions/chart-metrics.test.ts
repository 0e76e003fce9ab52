// The Helm chart's dashboard and alerts query metrics the operator really exports: every metric
// name in dashboards/onto-operator.json and templates/prometheusrule.yaml is registered by the
// runtime (controller-runtime and client-go names, Node.js process metrics) or by the action
// recorder, the upgrade orchestrator, the healer or the platform reconciler's certificate step.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CertificateMetrics } from "../controllers/platform/certificate-metrics.js";
import { ActionRecorder } from "../controllers/shared/actions.js";
import { HealingMetrics } from "../controllers/healing/metrics.js";
import { UpgradeMetrics } from "../controllers/upgrade/metrics.js";
import { RuntimeMetrics } from "../runtime/metrics.js";

const chart = join(import.meta.dirname, "../../charts/onto-operator");
/** Prometheus' own series. */
const SCRAPE = new Set(["up"]);

async function exported(): Promise<Set<string>> {
  const metrics = new RuntimeMetrics();
  new ActionRecorder(undefined, { write: () => undefined }, metrics.registry);
  new UpgradeMetrics(metrics.registry);
  new HealingMetrics(metrics.registry);
  new CertificateMetrics(metrics.registry);
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === "histogram")
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(m.name + suffix);
  }
  return names;
}

/** Metric names in PromQL text: an identifier directly followed by a label matcher. */
function queried(promql: string): string[] {
  return [...promql.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1] ?? "");
}

describe("chart dashboard and alerts", () => {
  it("query only metrics the operator exports", async () => {
    const names = await exported();
    const dashboard = JSON.parse(readFileSync(join(chart, "dashboards/onto-operator.json"), "utf8")) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    const alerts = readFileSync(join(chart, "templates/prometheusrule.yaml"), "utf8");
    const used = new Set([...exprs.flatMap(queried), ...queried(alerts)]);
    expect(exprs.length).toBeGreaterThanOrEqual(15);
    const unknown = [...used].filter((n) => !names.has(n) && !SCRAPE.has(n));
    expect(unknown).toEqual([]);
    // The queries this chart promises: reconcile rate, errors, latency, queue depth, leader, healing, upgrades.
    for (const name of [
      "controller_runtime_reconcile_total",
      "controller_runtime_reconcile_errors_total",
      "controller_runtime_reconcile_time_seconds_bucket",
      "workqueue_depth",
      "leader_election_master_status",
      "onto_healing_actions_total",
      "onto_upgrades_total",
      "onto_certificate_expiry_timestamp_seconds",
    ]) {
      expect(used.has(name), name).toBe(true);
    }
  });
});
