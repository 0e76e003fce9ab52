// The local cluster's monitoring and autoscaling APIs, run the way a real cluster runs them:
// - the Prometheus Operator's and the VPA's CRDs, from the Go modules that publish them;
// - a metrics pipeline: KWOK serves each simulated node's kubelet resource metrics (usage from pod
//   annotations, tools/monitoring/kwok-metrics.yaml), metrics-server scrapes every node (KWOK's
//   and any real kubelet) and serves metrics.k8s.io through the API server's aggregation layer,
//   so the HorizontalPodAutoscaler controller and the VPA recommender read real resource metrics;
// - the VPA recommender, writing recommendations into VerticalPodAutoscaler status.
// The launcher calls three functions: `aggregationApiserverArgs` and `kwokMetricsArgs` for the
// flags of those two processes, and `ensureMonitoring` once the nodes are Ready.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensureMonitoringBinaries, ensureMonitoringCrds } from "./monitoring-build.js";
import { FRONT_PROXY_CLIENT, METRICS_SERVER_SERVICE, ensureMonitoringPki } from "./monitoring-pki.js";
import { ensurePki } from "./pki.js";
import { isAlive, logTail, readRecord, startProcess, type ProcessRecord } from "./processes.js";
import { PACKAGE_ROOT } from "./package-root.js";

const kwokMetricsFile = join(PACKAGE_ROOT, "tools", "monitoring", "kwok-metrics.yaml");

/** The kubelet annotation metrics-server follows to a node's resource metrics path. */
const RESOURCE_METRICS_PATH_ANNOTATION = "metrics.k8s.io/resource-metrics-path";
/** Pod annotations KWOK reads a simulated container's usage from (see kwok-metrics.yaml). */
export const USAGE_ANNOTATIONS = { cpu: "usage.onto.paas/cpu", memory: "usage.onto.paas/memory" } as const;
/** How often metrics-server scrapes the nodes (its default; it must exceed the 10 s kubelet request timeout). */
export const METRIC_RESOLUTION_SECONDS = 15;

export type MonitoringProcess = "metrics-server" | "vpa-recommender";
export const MONITORING_PROCESSES: readonly MonitoringProcess[] = ["metrics-server", "vpa-recommender"];

interface MonitoringState {
  metricsServerPort: number;
  recommenderMetricsPort: number;
}

const stateFile = (stateDir: string): string => join(stateDir, "monitoring.json");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * kube-apiserver flags of the aggregation layer: the front proxy's client certificate it presents
 * to aggregated API servers (metrics-server) and the CA and headers those servers trust for the
 * user it forwards.
 */
export function aggregationApiserverArgs(stateDir: string): string[] {
  const m = ensureMonitoringPki(ensurePki(join(stateDir, "pki")));
  return [
    `--requestheader-client-ca-file=${m.frontProxyCaCert}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
    "--requestheader-username-headers=X-Remote-User",
    "--requestheader-group-headers=X-Remote-Group",
    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
    `--proxy-client-cert-file=${m.frontProxyClientCert}`,
    `--proxy-client-key-file=${m.frontProxyClientKey}`,
  ];
}

/**
 * KWOK flags of the emulated kubelet endpoint: the resource-metrics configuration as a second
 * --config, TLS with a certificate the cluster CA signed (metrics-server verifies it), and the
 * nodes' address on loopback, where metrics-server reaches KWOK's server.
 */
export function kwokMetricsArgs(stateDir: string): string[] {
  const m = ensureMonitoringPki(ensurePki(join(stateDir, "pki")));
  const config = join(stateDir, "kwok-metrics.yaml");
  copyFileSync(kwokMetricsFile, config);
  return [
    `--config=${config}`,
    "--node-ip=127.0.0.1",
    `--tls-cert-file=${m.servingCert}`,
    `--tls-private-key-file=${m.servingKey}`,
  ];
}

export interface MonitoringOptions {
  stateDir: string;
  /** The multi-call Kubernetes binary (`<k8sBinary> kubectl ...`). */
  k8sBinary: string;
  /** Admin kubeconfig. */
  kubeconfigPath: string;
  /** Port of KWOK's server (the emulated kubelets' endpoint). */
  kwokPort: number;
  freePort: () => Promise<number>;
  progress?: (line: string) => void;
}

function kubectl(opts: MonitoringOptions, args: string[], input?: string): string {
  return execFileSync(opts.k8sBinary, ["kubectl", `--kubeconfig=${opts.kubeconfigPath}`, ...args], {
    input,
    stdio: ["pipe", "pipe", "pipe"],
  }).toString();
}

function apply(opts: MonitoringOptions, manifests: Record<string, unknown>[]): void {
  kubectl(
    opts,
    ["apply", "--server-side", "--force-conflicts", "--field-manager=onto-cluster", "-f", "-"],
    manifests.map((m) => stringify(m)).join("---\n"),
  );
}

async function waitUntil(
  what: string,
  timeoutMs: number,
  record: ProcessRecord | undefined,
  check: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (record && !isAlive(record))
      throw new Error(`${record.name} exited while waiting for ${what}; last log lines:\n${logTail(record)}`);
    let ok = false;
    try {
      ok = check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) {
      const tail = record ? `; last log lines of ${record.name}:\n${logTail(record)}` : "";
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${tail}`);
    }
    await sleep(500);
  }
}

/** Points every KWOK node's kubelet endpoint at KWOK's server and its metrics path. */
function wireKwokNodes(opts: MonitoringOptions): number {
  const list = JSON.parse(kubectl(opts, ["get", "nodes", "-o", "json"])) as {
    items: { metadata: { name: string; annotations?: Record<string, string> } }[];
  };
  const kwokNodes = list.items.filter((n) => n.metadata.annotations?.["kwok.x-k8s.io/node"] === "fake");
  for (const node of kwokNodes) {
    const name = node.metadata.name;
    kubectl(opts, [
      "annotate",
      "--overwrite",
      `node/${name}`,
      `${RESOURCE_METRICS_PATH_ANNOTATION}=/metrics/nodes/${name}/metrics/resource`,
    ]);
    kubectl(opts, [
      "patch",
      `node/${name}`,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { daemonEndpoints: { kubeletEndpoint: { Port: opts.kwokPort } } } }),
    ]);
  }
  return kwokNodes.length;
}

/** The Service and APIService that route metrics.k8s.io to metrics-server on loopback. */
function metricsApiObjects(port: number, caBundle: string): Record<string, unknown>[] {
  const { name, namespace } = METRICS_SERVER_SERVICE;
  return [
    {
      // No pods behind it: the aggregator resolves an ExternalName Service to that host and the
      // APIService's port, here metrics-server's process on 127.0.0.1.
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { type: "ExternalName", externalName: "localhost", ports: [{ name: "https", port }] },
    },
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: {
        group: "metrics.k8s.io",
        version: "v1beta1",
        groupPriorityMinimum: 100,
        versionPriority: 100,
        service: { name, namespace, port },
        caBundle,
      },
    },
  ];
}

function startIfStopped(
  stateDir: string,
  name: MonitoringProcess,
  binary: string,
  args: string[],
): ProcessRecord {
  const existing = readRecord(stateDir, name);
  if (existing && isAlive(existing)) return existing;
  return startProcess(stateDir, name, binary, args);
}

/**
 * Installs the monitoring CRDs and starts the metrics pipeline and the VPA recommender, or finds
 * them running. Idempotent: a process that died is started again with the same ports.
 */
export async function ensureMonitoring(opts: MonitoringOptions): Promise<void> {
  const progress = opts.progress ?? (() => undefined);
  const { stateDir } = opts;
  const pki = ensurePki(join(stateDir, "pki"));
  const m = ensureMonitoringPki(pki);
  const binaries = await ensureMonitoringBinaries(progress);

  const crds = ensureMonitoringCrds();
  progress(`installing ${crds.length} CRD files (Prometheus Operator, VerticalPodAutoscaler)`);
  for (const file of crds)
    kubectl(opts, [
      "apply",
      "--server-side",
      "--force-conflicts",
      "--field-manager=onto-cluster",
      "-f",
      file,
    ]);
  kubectl(opts, ["wait", "--for=condition=Established", "--timeout=60s", ...crds.flatMap((f) => ["-f", f])]);

  const wired = wireKwokNodes(opts);
  // Ports are kept while the processes that listen on them run (a reused cluster), else new.
  const running = MONITORING_PROCESSES.every((name) => {
    const record = readRecord(stateDir, name);
    return record !== undefined && isAlive(record);
  });
  const state: MonitoringState =
    running && existsSync(stateFile(stateDir))
      ? (JSON.parse(readFileSync(stateFile(stateDir), "utf8")) as MonitoringState)
      : { metricsServerPort: await opts.freePort(), recommenderMetricsPort: await opts.freePort() };
  writeFileSync(stateFile(stateDir), JSON.stringify(state, null, 2));

  progress(`starting metrics-server (${wired} KWOK nodes' resource metrics)`);
  const metricsServer = startIfStopped(stateDir, "metrics-server", binaries.metricsServer, [
    "--bind-address=127.0.0.1",
    `--secure-port=${state.metricsServerPort}`,
    `--cert-dir=${join(stateDir, "pki", "monitoring")}`,
    `--tls-cert-file=${m.servingCert}`,
    `--tls-private-key-file=${m.servingKey}`,
    // The admin identity reads nodes and pods, and reviews the tokens and permissions of the
    // requests the aggregator forwards (delegated authentication and authorization).
    `--kubeconfig=${opts.kubeconfigPath}`,
    `--authentication-kubeconfig=${opts.kubeconfigPath}`,
    `--authorization-kubeconfig=${opts.kubeconfigPath}`,
    "--kubelet-preferred-address-types=InternalIP",
    "--kubelet-use-node-status-port",
    `--kubelet-certificate-authority=${pki.caCert}`,
    `--metric-resolution=${METRIC_RESOLUTION_SECONDS}s`,
    "--v=1",
  ]);
  apply(opts, metricsApiObjects(state.metricsServerPort, readFileSync(pki.caCert).toString("base64")));
  // Through the aggregator to metrics-server and back: the API answers (a node without pods has
  // no usage yet, so the list may still be empty).
  await waitUntil("metrics.k8s.io to answer through the aggregation layer", 90_000, metricsServer, () => {
    const nodes = JSON.parse(kubectl(opts, ["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"])) as {
      kind?: string;
    };
    return nodes.kind === "NodeMetricsList";
  });

  progress("starting the VPA recommender");
  const recommender = startIfStopped(stateDir, "vpa-recommender", binaries.vpaRecommender, [
    `--kubeconfig=${opts.kubeconfigPath}`,
    `--address=127.0.0.1:${state.recommenderMetricsPort}`,
    // Short loops so a test sees a recommendation within a minute; checkpoints keep history
    // across restarts as in a real cluster.
    "--recommender-interval=15s",
    "--checkpoints-gc-interval=10m",
    "--storage=checkpoint",
    "--memory-saver=true",
    "--leader-elect=false",
    "--v=1",
  ]);
  // It has no readiness endpoint; alive after a moment is enough (the tests read its output).
  await sleep(2_000);
  if (!isAlive(recommender))
    throw new Error(`vpa-recommender exited at start; last log lines:\n${logTail(recommender)}`);
}
