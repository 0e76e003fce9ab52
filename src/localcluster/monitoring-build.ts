// The monitoring and autoscaling programs the local cluster and the tests run, built from their Go
// modules, and the upstream CRDs, read from the modules that publish them. Two modules:
// tools/monitoring holds metrics-server and the VPA recommender (one dependency set on the
// Kubernetes 1.37 libraries, so the apiserver and client-go packages compile once for both);
// tools/promtool holds promtool alone, because Prometheus v0.316.0 needs a client_golang whose
// query API the VPA recommender v1.8.1 does not compile against, and metrics-server v0.8.0 a
// Prometheus text parser older than v0.316.0's. Everything lands in the cache, keyed by version
// and module hash, and is built or copied only when missing.
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureGoBinary, goModuleDir, moduleHash, type GoTarget } from "./build.js";
import { cacheRoot } from "./versions.js";
import { PACKAGE_ROOT } from "./package-root.js";

/** Must match the requirements in tools/monitoring/go.mod. */
export const PROMETHEUS_VERSION = "v0.316.0";
/** The Prometheus release that module version is (v0.3NN.P is 3.NN.P); `promtool --version` says it. */
const PROMETHEUS_RELEASE = "3.16.0";
/** v0.9.0, not v0.8.0: its Kubernetes 1.36 libraries match the local cluster and the VPA's. */
export const METRICS_SERVER_VERSION = "v0.9.0";
export const VPA_VERSION = "v1.8.1";
/**
 * The Prometheus Operator release whose CRDs the local cluster serves; the chart documents it
 * (charts/onto-operator/Chart.yaml, annotation onto.paas/prometheus-operator-version).
 */
export const PROMETHEUS_OPERATOR_VERSION = "v0.88.0";

const PROMETHEUS_OPERATOR_MODULE = "github.com/prometheus-operator/prometheus-operator";
const VPA_MODULE = "k8s.io/autoscaler/vertical-pod-autoscaler";
/** The monitoring.coreos.com kinds the operator and the chart render (no Prometheus server kinds). */
const PROMETHEUS_OPERATOR_CRDS = ["servicemonitors", "podmonitors", "prometheusrules"];

const toolsDir = join(PACKAGE_ROOT, "tools");
const moduleDir = join(toolsDir, "monitoring");
const promtoolModuleDir = join(toolsDir, "promtool");

export interface MonitoringBinaries {
  promtool: string;
  metricsServer: string;
  vpaRecommender: string;
}

function target(
  dir: string,
  name: string,
  version: string,
  pkg: string,
  binary: string,
  extra = "",
): GoTarget {
  return {
    name,
    moduleDir: dir,
    version,
    pkg,
    output: join(cacheRoot(), `${name}-${version}-${moduleHash(dir)}`, binary),
    ldflags: `-s -w ${extra}`.trim(),
  };
}

export const PROMTOOL_TARGET: GoTarget = {
  ...target(
    promtoolModuleDir,
    "promtool",
    PROMETHEUS_VERSION,
    "github.com/prometheus/prometheus/cmd/promtool",
    "promtool",
    `-X github.com/prometheus/common/version.Version=${PROMETHEUS_RELEASE}`,
  ),
  // promtool registers every service discovery of Prometheus; rule checks and rule unit tests
  // need none of them, and leaving them out skips the cloud SDKs (minutes of build on 2 cores).
  tags: "remove_all_sd",
};

const METRICS_SERVER_TARGET = target(
  moduleDir,
  "metrics-server",
  METRICS_SERVER_VERSION,
  "sigs.k8s.io/metrics-server/cmd/metrics-server",
  "metrics-server",
);

const VPA_RECOMMENDER_TARGET = target(
  moduleDir,
  "vpa-recommender",
  VPA_VERSION,
  "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/recommender",
  "vpa-recommender",
);

/** Builds whatever is missing, one program at a time (2 cores: parallel builds only thrash). */
export async function ensureMonitoringBinaries(
  progress: (line: string) => void = () => undefined,
): Promise<MonitoringBinaries> {
  return {
    promtool: await ensureGoBinary(PROMTOOL_TARGET, progress),
    metricsServer: await ensureGoBinary(METRICS_SERVER_TARGET, progress),
    vpaRecommender: await ensureGoBinary(VPA_RECOMMENDER_TARGET, progress),
  };
}

export function ensurePromtool(progress: (line: string) => void = () => undefined): Promise<string> {
  return ensureGoBinary(PROMTOOL_TARGET, progress);
}

/** Where the Go module cache holds `module@version`. */
function moduleSource(module: string, version: string): string {
  return goModuleDir(module, version, moduleDir);
}

/**
 * The CRD manifests the local cluster installs, copied out of the Go modules that publish them:
 * the Prometheus Operator's ServiceMonitor, PodMonitor and PrometheusRule, and the VPA's
 * VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint. Returns the files.
 */
export function ensureMonitoringCrds(): string[] {
  const dir = join(cacheRoot(), `monitoring-crds-${PROMETHEUS_OPERATOR_VERSION}-vpa-${VPA_VERSION}`);
  if (!existsSync(dir)) {
    const partial = `${dir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const promOp = join(
      moduleSource(PROMETHEUS_OPERATOR_MODULE, PROMETHEUS_OPERATOR_VERSION),
      "example",
      "prometheus-operator-crd",
    );
    for (const plural of PROMETHEUS_OPERATOR_CRDS) {
      const file = `monitoring.coreos.com_${plural}.yaml`;
      copyFileSync(join(promOp, file), join(partial, file));
    }
    copyFileSync(
      join(moduleSource(VPA_MODULE, VPA_VERSION), "deploy", "vpa-v1-crd-gen.yaml"),
      join(partial, "autoscaling.k8s.io_vpa-v1-crd-gen.yaml"),
    );
    renameSync(partial, dir);
  }
  return readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
}
