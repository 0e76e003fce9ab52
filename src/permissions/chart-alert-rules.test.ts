// The chart's alert rules, evaluated by Prometheus' own promtool (built from the Prometheus Go
// module): `promtool check rules` on every rule `helm template` renders, and `promtool test rules`
// per alert, firing when it should and staying quiet when it should not. The input series are
// made from the operator's real metrics registry: the metric objects the runtime, the manager and
// the upgrade orchestrator register, moved the way their code moves them, exported as text and
// labelled as Prometheus labels a target found through the chart's ServiceMonitor.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { CertificateMetrics } from "../controllers/platform/certificate-metrics.js";
import { UpgradeMetrics } from "../controllers/upgrade/metrics.js";
import { ensureHelm } from "../localcluster/helm.js";
import { ensurePromtool } from "../localcluster/monitoring-build.js";
import { RuntimeMetrics } from "../runtime/metrics.js";

const chart = join(import.meta.dirname, "../../charts/onto-operator");
const RELEASE = "onto-operator";
const NAMESPACE = "onto-system";
/** What Prometheus adds to every sample of a target the chart's ServiceMonitor selects. */
const TARGET = { job: `${RELEASE}-metrics`, namespace: NAMESPACE, service: `${RELEASE}-metrics` };
/** Controller and Lease names the operator registers its metrics under (src/controllers/operator.ts). */
const CONTROLLER = "ontoplatform";
const LEASE = "onto-operator";

let promtool = "";
let work = "";
let rulesFile = "";
let ruleNames: string[] = [];

interface RuleGroup {
  name: string;
  rules: { alert?: string; record?: string; expr: string }[];
}

function chartRules(helm: string): RuleGroup[] {
  const out = execFileSync(
    helm,
    ["template", RELEASE, chart, "-n", NAMESPACE, "--set", "prometheusRule.enabled=true"],
    { encoding: "utf8" },
  );
  const rules = parseAllDocuments(out)
    .map((d) => d.toJS() as { kind?: string; spec?: { groups: RuleGroup[] } } | null)
    .filter((d) => d?.kind === "PrometheusRule");
  return rules.flatMap((r) => r?.spec?.groups ?? []);
}

/** Series of one pod's /metrics, one per exported sample: `name{labels}` with the target's labels. */
async function scrape(registry: RuntimeMetrics["registry"], pod: string): Promise<Map<string, string>> {
  const series = new Map<string, string>();
  const text = await registry.metrics();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!match?.[1]) continue;
    // A scraped label that the target's labels also set is renamed exported_<name>, as Prometheus
    // does without honorLabels (the chart's ServiceMonitor sets none).
    const own = match[3]
      ? `${match[3].replace(/(^|,)([a-zA-Z_][a-zA-Z0-9_]*)=/g, (all, sep: string, key: string) =>
          key in TARGET || key === "pod" || key === "instance" ? `${sep}exported_${key}=` : all,
        )},`
      : "";
    const labels = `${own}${Object.entries({ ...TARGET, pod, instance: `${pod}:8080` })
      .map(([k, v]) => `${k}="${v}"`)
      .join(",")}`;
    series.set(`${match[1]}{${match[3] ?? ""}}`, `${match[1]}{${labels}}`);
  }
  return series;
}

/** The exported series with these own labels, e.g. `controller_runtime_reconcile_total{controller="ontoplatform",result="error"}`. */
function pick(series: Map<string, string>, key: string): string {
  const found = series.get(key);
  if (!found)
    throw new Error(`the operator's /metrics has no series ${key}; it has: ${[...series.keys()].join(" ")}`);
  return found;
}

function promtoolRun(args: string[]): { code: number; output: string } {
  try {
    return { code: 0, output: execFileSync(promtool, args, { cwd: work, encoding: "utf8", stdio: "pipe" }) };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    return { code: e.status ?? 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

interface AlertCase {
  alertname: string;
  evalTime: string;
  expAlerts: { exp_labels: Record<string, string>; exp_annotations: Record<string, string> }[];
}

function testRules(name: string, inputSeries: { series: string; values: string }[], cases: AlertCase[]) {
  const file = join(work, `${name}.test.yaml`);
  writeFileSync(
    file,
    stringify({
      rule_files: [rulesFile],
      evaluation_interval: "1m",
      tests: [
        {
          name,
          interval: "1m",
          input_series: inputSeries,
          alert_rule_test: cases.map((c) => ({
            eval_time: c.evalTime,
            alertname: c.alertname,
            exp_alerts: c.expAlerts,
          })),
        },
      ],
    }),
  );
  return promtoolRun(["test", "rules", file]);
}

beforeAll(async () => {
  // Built by `onto cluster build` (CI does it first); here only if the cache lacks them.
  promtool = await ensurePromtool((line) => console.log(`[promtool] ${line}`));
  const helm = await ensureHelm((line) => console.log(`[helm] ${line}`));
  work = mkdtempSync(join(tmpdir(), "onto-rules-"));
  const groups = chartRules(helm);
  ruleNames = groups.flatMap((g) => g.rules.map((r) => r.alert ?? r.record ?? ""));
  rulesFile = join(work, "onto-operator.rules.yaml");
  writeFileSync(rulesFile, stringify({ groups }));
}, 60 * 60_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("chart alert rules under promtool", () => {
  it("promtool check rules accepts every rule the chart renders", () => {
    expect(ruleNames).toEqual([
      "OntoOperatorReconcileErrors",
      "OntoPlatformUpgradeFailed",
      "OntoPlatformUpgradeForwardFix",
      "OntoCertificateExpiresSoon",
      "OntoOperatorNoLeader",
      "OntoOperatorDown",
    ]);
    const result = promtoolRun(["check", "rules", rulesFile]);
    expect(result.output).toContain(`SUCCESS: ${ruleNames.length} rules found`);
    expect(result.code).toBe(0);
  });

  it("promtool fails a test whose expectation is wrong (the harness can fail)", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    metrics.leader.set({ name: LEASE }, 1);
    const leader = pick(
      await scrape(metrics.registry, "onto-operator-a"),
      `leader_election_master_status{name="${LEASE}"}`,
    );
    const result = testRules(
      "wrong-expectation",
      [{ series: leader, values: "1x20" }],
      [
        {
          alertname: "OntoOperatorNoLeader",
          evalTime: "10m",
          expAlerts: [{ exp_labels: { severity: "critical" }, exp_annotations: {} }],
        },
      ],
    );
    expect(result.code).not.toBe(0);
    expect(result.output).toContain("FAILED");
  });

  it("OntoOperatorReconcileErrors fires after 15 minutes of more than 10% failed reconciles, not at 5%", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    // As runtime/controller.ts counts: every reconcile by result, errors also apart.
    metrics.reconcileTotal.inc({ controller: CONTROLLER, result: "success" });
    metrics.reconcileTotal.inc({ controller: CONTROLLER, result: "error" });
    metrics.reconcileErrors.inc({ controller: CONTROLLER });
    const s = await scrape(metrics.registry, "onto-operator-a");
    const ok = pick(s, `controller_runtime_reconcile_total{controller="${CONTROLLER}",result="success"}`);
    const failed = pick(s, `controller_runtime_reconcile_total{controller="${CONTROLLER}",result="error"}`);
    const errors = pick(s, `controller_runtime_reconcile_errors_total{controller="${CONTROLLER}"}`);
    const firing = {
      exp_labels: { severity: "warning", controller: CONTROLLER },
      exp_annotations: {
        summary: `onto-operator: reconcile errors rising in controller ${CONTROLLER}`,
        description:
          "20% of reconciles failed over the last 5 minutes. See `kubectl describe ontoplatform` and the operator's logs.",
      },
    };
    // 60 reconciles a minute, 12 of them failing (20%).
    const bad = testRules(
      "errors-20pct",
      [
        { series: ok, values: "0+48x40" },
        { series: failed, values: "0+12x40" },
        { series: errors, values: "0+12x40" },
      ],
      [
        // 5 minutes of rate window, then 15 pending: quiet at 12m, firing at 25m.
        { alertname: "OntoOperatorReconcileErrors", evalTime: "12m", expAlerts: [] },
        { alertname: "OntoOperatorReconcileErrors", evalTime: "25m", expAlerts: [firing] },
      ],
    );
    expect(bad.output).toContain("SUCCESS");
    expect(bad.code).toBe(0);
    // 3 of 60 failing (5%): never fires.
    const fine = testRules(
      "errors-5pct",
      [
        { series: ok, values: "0+57x40" },
        { series: failed, values: "0+3x40" },
        { series: errors, values: "0+3x40" },
      ],
      [{ alertname: "OntoOperatorReconcileErrors", evalTime: "30m", expAlerts: [] }],
    );
    expect(fine.output).toContain("SUCCESS");
    expect(fine.code).toBe(0);
  });

  it("OntoPlatformUpgradeFailed fires when an upgrade failed in the last 15 minutes, not for successes", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const upgrades = new UpgradeMetrics(metrics.registry);
    upgrades.finished("failed", 120);
    upgrades.finished("succeeded", 300);
    const s = await scrape(metrics.registry, "onto-operator-a");
    const failed = pick(s, 'onto_upgrades_total{result="failed"}');
    const succeeded = pick(s, 'onto_upgrades_total{result="succeeded"}');
    const firing = {
      exp_labels: { severity: "critical", namespace: NAMESPACE },
      exp_annotations: {
        summary: "onto-operator: an OntoPlatform upgrade failed and was rolled back",
        description:
          "An upgrade ended with UpgradeFailed in the last 15 minutes. `kubectl onto status` shows the component and the reason.",
      },
    };
    const result = testRules(
      "upgrade-failed",
      [
        // One failure at minute 10, then nothing: firing until it leaves the 15-minute window.
        { series: failed, values: "0x9 1x40" },
        { series: succeeded, values: "0x4 1x5 2x40" },
      ],
      [
        { alertname: "OntoPlatformUpgradeFailed", evalTime: "8m", expAlerts: [] },
        { alertname: "OntoPlatformUpgradeFailed", evalTime: "12m", expAlerts: [firing] },
        { alertname: "OntoPlatformUpgradeFailed", evalTime: "30m", expAlerts: [] },
      ],
    );
    expect(result.output).toContain("SUCCESS");
    expect(result.code).toBe(0);
  });

  it("OntoPlatformUpgradeForwardFix fires while a platform waits for a forward fix, and names it", async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const upgrades = new UpgradeMetrics(metrics.registry);
    const platform = { metadata: { namespace: "tenant-a", name: "onto-production" } } as Parameters<
      UpgradeMetrics["forwardFix"]
    >[0];
    upgrades.forwardFix(platform, true);
    const s = await scrape(metrics.registry, "onto-operator-a");
    const waiting = pick(
      s,
      'onto_upgrade_forward_fix{platform_namespace="tenant-a",platform="onto-production"}',
    );
    const firing = {
      exp_labels: { severity: "critical", platform_namespace: "tenant-a", platform: "onto-production" },
      exp_annotations: {
        summary: "onto-operator: upgrade of tenant-a/onto-production stopped past a point of no return",
        description:
          "The upgrade failed after a step that cannot be undone, so it was not rolled back. `kubectl onto status` names the step and the failure; fix forward (a newer spec.version, or the retry annotation once the cause is fixed).",
      },
    };
    // Waiting from minute 5 to minute 20, then fixed (the gauge is removed: no sample).
    const result = testRules(
      "upgrade-forward-fix",
      [{ series: waiting, values: "_x4 1x15" }],
      [
        { alertname: "OntoPlatformUpgradeForwardFix", evalTime: "3m", expAlerts: [] },
        { alertname: "OntoPlatformUpgradeForwardFix", evalTime: "10m", expAlerts: [firing] },
        { alertname: "OntoPlatformUpgradeForwardFix", evalTime: "30m", expAlerts: [] },
      ],
    );
    expect(result.output).toContain("SUCCESS");
    expect(result.code).toBe(0);
  });

  it("OntoCertificateExpiresSoon fires 14 days before a certificate expires, not before, and not once it is renewed", async () => {
    const DAY = 86400;
    // promtool's clock starts at Unix time 0: a certificate that expires 14 days and 10 minutes in.
    const expiresAt = 14 * DAY + 10 * 60;
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const certificates = new CertificateMetrics(metrics.registry);
    certificates.set("tenant-a", "onto-production", {
      "onto-tls": { issuer: "operator", notAfter: new Date(expiresAt * 1000).toISOString(), serial: "01" },
    });
    const s = await scrape(metrics.registry, "onto-operator-a");
    const expiry = pick(
      s,
      'onto_certificate_expiry_timestamp_seconds{platform_namespace="tenant-a",platform="onto-production",secret="onto-tls",issuer="operator"}',
    );
    expect(
      await metrics.registry.getSingleMetricAsString("onto_certificate_expiry_timestamp_seconds"),
    ).toContain(` ${expiresAt}`);
    const firing = {
      exp_labels: {
        severity: "warning",
        platform_namespace: "tenant-a",
        platform: "onto-production",
        secret: "onto-tls",
        issuer: "operator",
      },
      exp_annotations: {
        summary: "onto-operator: certificate tenant-a/onto-tls expires in less than 14 days",
        description:
          "The certificate in Secret tenant-a/onto-tls (issuer: operator) expires in 13d 23h 55m 0s. A user's Secret must be renewed by its owner; for an issued one see `kubectl describe ontoplatform` and the operator's logs.",
      },
    };
    // The same expiry for 20 minutes, then renewed: 90 days later.
    const result = testRules(
      "certificate-expiry",
      [{ series: expiry, values: `${expiresAt}x19 ${expiresAt + 90 * DAY}x20` }],
      [
        { alertname: "OntoCertificateExpiresSoon", evalTime: "5m", expAlerts: [] },
        { alertname: "OntoCertificateExpiresSoon", evalTime: "25m", expAlerts: [] },
      ],
    );
    expect(result.output).toContain("SUCCESS");
    expect(result.code).toBe(0);
    const late = testRules(
      "certificate-expiry-late",
      [{ series: expiry, values: `${expiresAt}x19 ${expiresAt + 90 * DAY}x20` }],
      [{ alertname: "OntoCertificateExpiresSoon", evalTime: "15m", expAlerts: [firing] }],
    );
    expect(late.output).toContain("SUCCESS");
    expect(late.code).toBe(0);
  });

  it("OntoOperatorNoLeader fires when no replica leads for 5 minutes, not while one does", async () => {
    // Two replicas, as the chart deploys: each exports the gauge for the same Lease.
    const a = new RuntimeMetrics({ processMetrics: false });
    const b = new RuntimeMetrics({ processMetrics: false });
    a.leader.set({ name: LEASE }, 1);
    b.leader.set({ name: LEASE }, 0);
    const key = `leader_election_master_status{name="${LEASE}"}`;
    const seriesA = pick(await scrape(a.registry, "onto-operator-a"), key);
    const seriesB = pick(await scrape(b.registry, "onto-operator-b"), key);
    const firing = {
      exp_labels: { severity: "critical" },
      exp_annotations: {
        summary: "onto-operator: no replica holds the leader Lease",
        description: `No replica has led for 5 minutes: OntoPlatforms are not reconciled. Check the Lease in ${NAMESPACE} and the operator's logs.`,
      },
    };
    const result = testRules(
      "no-leader",
      [
        // a leads for 10 minutes and loses the Lease; b never takes it. A hand-over (b leads from
        // minute 20 after a 2-minute gap) ends the alert.
        { series: seriesA, values: "1x9 0x30" },
        { series: seriesB, values: "0x21 1x20" },
      ],
      [
        { alertname: "OntoOperatorNoLeader", evalTime: "9m", expAlerts: [] },
        { alertname: "OntoOperatorNoLeader", evalTime: "13m", expAlerts: [] },
        { alertname: "OntoOperatorNoLeader", evalTime: "16m", expAlerts: [firing] },
        { alertname: "OntoOperatorNoLeader", evalTime: "25m", expAlerts: [] },
      ],
    );
    expect(result.output).toContain("SUCCESS");
    expect(result.code).toBe(0);
  });

  it("OntoOperatorDown fires when no replica is scraped for 5 minutes, not while one is", () => {
    const up = (pod: string) =>
      `up{${Object.entries({ ...TARGET, pod, instance: `${pod}:8080` })
        .map(([k, v]) => `${k}="${v}"`)
        .join(",")}}`;
    const firing = {
      exp_labels: { severity: "critical", namespace: NAMESPACE },
      exp_annotations: {
        summary: "onto-operator: no replica is being scraped",
        description: `Prometheus has not scraped any onto-operator replica in ${NAMESPACE} for 5 minutes.`,
      },
    };
    const result = testRules(
      "down",
      [
        // Replica a is scraped until minute 10; b fails its scrapes from minute 5 on.
        { series: up("onto-operator-a"), values: "1x10" },
        { series: up("onto-operator-b"), values: "1x4 0x30" },
      ],
      [
        { alertname: "OntoOperatorDown", evalTime: "8m", expAlerts: [] },
        { alertname: "OntoOperatorDown", evalTime: "14m", expAlerts: [] },
        { alertname: "OntoOperatorDown", evalTime: "22m", expAlerts: [firing] },
      ],
    );
    expect(result.output).toContain("SUCCESS");
    expect(result.code).toBe(0);
  });
});
