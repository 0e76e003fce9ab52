// Converge: the same minimal platform brought up three ways in fresh namespaces, in alternating
// order each round (load on the shared machine drifts, so no tool always goes first): the operator
// from the OntoPlatform, `kubectl apply --server-side` of the objects `onto render` prints, and
// `helm upgrade --install --wait` of a chart holding those same objects. Each is timed until every
// Deployment and StatefulSet of the namespace is ready (the operator also until phase Running).
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import { renderFile } from "../../src/cli/commands/render.js";
import { OPTIONAL_APIS } from "../../src/render/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { ensureHelm } from "../../src/localcluster/helm.js";
import type { FigureSet } from "../lib/figures.js";
import { median, percentile } from "../lib/stats.js";
import {
  benchNamespace,
  createNamespace,
  deleteNamespace,
  minimalPlatform,
  platformRunning,
  waitFor,
  workloadsReady,
  type BenchEnv,
} from "../lib/env.js";

const run = promisify(execFile);
const TIMEOUT_MS = 300_000;

/** The optional APIs this cluster serves, as `onto render --api-versions` takes them. */
async function servedApiVersions(client: KubeClient): Promise<string[]> {
  const served = await Promise.all(
    OPTIONAL_APIS.map(async (api) =>
      (await (
        api.kind
          ? client.discovery.hasResource(api.apiVersion, api.kind)
          : client.discovery.hasGroupVersion(api.apiVersion)
      ).catch(() => false))
        ? api.apiVersion
        : undefined,
    ),
  );
  return served.filter((v): v is string => v !== undefined);
}

/**
 * The rendered objects of the minimal sample in `namespace`, without owner references (no owner
 * exists), as a stream of JSON documents: JSON is YAML that kubectl's and Helm's YAML 1.1 parsers
 * read the same way (in `onto render`'s YAML 1.2 output an unquoted `Off` reads as false to them).
 */
function renderedYaml(namespace: string, apiVersions: string[]): { yaml: string; count: number } {
  const objects = renderFile(readFileSync("samples/minimal.yaml", "utf8"), { namespace, apiVersions });
  for (const o of objects) delete (o.metadata as { ownerReferences?: unknown }).ownerReferences;
  return { yaml: objects.map((o) => `---\n${JSON.stringify(o)}\n`).join(""), count: objects.length };
}

type Tool = "operator" | "kubectl" | "helm";

export interface ConvergeOutcome {
  /** A converged operator namespace kept for the scenarios that need one (noop, idle, repair). */
  keptNamespace: string;
  /** Operator writes per second while converging (for the ceiling fraction). */
  operatorWritesPerSecond: number;
}

export async function converge(env: BenchEnv, figs: FigureSet): Promise<ConvergeOutcome> {
  const rounds = env.quick ? 2 : 5;
  const helm = await ensureHelm(env.log);
  const kubectl = env.cluster.k8sBinary;
  const apiVersions = await servedApiVersions(env.admin);
  const times: Record<Tool, number[]> = { operator: [], kubectl: [], helm: [] };
  const running: number[] = [];
  const requests: number[] = [];
  const writes: number[] = [];
  let objects = 0;
  let keptNamespace = "";
  const kubeconfig = env.cluster.kubeconfigPath;

  const once = async (tool: Tool, keep: boolean): Promise<void> => {
    const ns = benchNamespace(`cv-${tool}`);
    await createNamespace(env.admin, ns);
    const start = performance.now();
    if (tool === "operator") {
      env.requests.reset();
      await env.admin.apply(minimalPlatform(ns));
      await waitFor(`${ns} Running`, TIMEOUT_MS, () => platformRunning(env.admin, ns));
      running.push(performance.now() - start);
      requests.push(env.requests.total());
      writes.push(env.requests.writes());
      env.log(`converge operator requests by kind: ${env.requests.top(8).join("; ")}`);
    } else {
      const rendered = renderedYaml(ns, apiVersions);
      objects = rendered.count;
      const dir = mkdtempSync(join(tmpdir(), "onto-bench-chart-"));
      if (tool === "kubectl") {
        writeFileSync(join(dir, "objects.yaml"), rendered.yaml);
        await run(
          kubectl,
          ["kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", join(dir, "objects.yaml")],
          { maxBuffer: 1 << 24 },
        );
      } else {
        // The objects go in as a file the template includes verbatim, so nothing in them is
        // read as template syntax.
        mkdirSync(join(dir, "templates"));
        writeFileSync(join(dir, "Chart.yaml"), "apiVersion: v2\nname: onto-bench\nversion: 0.1.0\n");
        writeFileSync(join(dir, "objects.yaml"), rendered.yaml);
        writeFileSync(join(dir, "templates", "objects.yaml"), '{{ .Files.Get "objects.yaml" }}\n');
        await run(
          helm,
          [
            "upgrade",
            "--install",
            "onto",
            dir,
            "-n",
            ns,
            "--kubeconfig",
            kubeconfig,
            "--wait",
            "--timeout",
            "5m",
          ],
          { maxBuffer: 1 << 24 },
        );
      }
    }
    await waitFor(`${ns} workloads ready`, TIMEOUT_MS, () => workloadsReady(env.admin, ns), 200);
    const ms = performance.now() - start;
    times[tool].push(ms);
    env.log(`converge ${tool} ${ns}: ${Math.round(ms)} ms`);
    if (keep) keptNamespace = ns;
    else await deleteNamespace(env.admin, ns);
  };

  for (let round = 0; round < rounds; round++) {
    const order: Tool[] = round % 2 === 0 ? ["operator", "kubectl", "helm"] : ["helm", "kubectl", "operator"];
    for (const tool of order) await once(tool, tool === "operator" && keptNamespace === "");
  }
  for (const tool of ["operator", "kubectl", "helm"] as const) {
    figs.add("converge", `${tool}.p50`, Math.round(median(times[tool])), "ms");
    figs.add("converge", `${tool}.max`, Math.round(percentile(times[tool], 100)), "ms");
  }
  figs.add("converge", "operator.toRunning.p50", Math.round(median(running)), "ms");
  figs.add(
    "converge",
    "operator.vsHelm",
    Number((median(times.operator) / median(times.helm)).toFixed(2)),
    "ratio",
  );
  figs.add(
    "converge",
    "operator.vsKubectl",
    Number((median(times.operator) / median(times.kubectl)).toFixed(2)),
    "ratio",
  );
  figs.add("converge", "operator.requests.p50", median(requests), "requests");
  figs.add("converge", "operator.writes.p50", median(writes), "requests");
  figs.add("converge", "objects", objects, "objects", "lower");
  figs.add("converge", "rounds", rounds, "rounds", "higher");
  return { keptNamespace, operatorWritesPerSecond: median(writes) / (median(running) / 1000) };
}
