// What every scenario runs against: the bench's own local cluster (its own state dir), an admin
// client, one operator in-process watching every namespace, and a count of the operator's
// requests by HTTP method that a scenario reads around what it measures.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { parseAllDocuments } from "yaml";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { runOperator, type RunningOperator } from "../../src/controllers/operator.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import type { ClusterInfo } from "../../src/localcluster/launcher.js";

export const PLATFORM_NAME = "onto-minimal";

/**
 * A request path with the namespace and the object's name left out, so requests add up per kind
 * of object and subresource: /api/v1/namespaces/a/services/b -> /api/v1/namespaces/-/services/-.
 */
export function resourcePath(path: string): string {
  const parts = path.split("/");
  // ["", "api", v, ...] or ["", "apis", group, v, ...]: the rest is [namespaces, ns,] resource[, name[, sub]].
  const at = parts[1] === "apis" ? 4 : 3;
  const rest = parts.slice(at);
  if (rest[0] === "namespaces" && rest.length > 2) rest[1] = "-";
  const resource = rest[0] === "namespaces" && rest.length > 2 ? 2 : 0;
  if (rest.length > resource + 1) rest[resource + 1] = "-";
  return [...parts.slice(0, at), ...rest].join("/");
}

/** Requests by HTTP method since the last reset. */
export class RequestCounter {
  counts: Record<string, number> = {};
  /** By "METHOD path" (query, namespace and name left off: resourcePath), to say where the requests went. */
  paths: Record<string, number> = {};

  observe(client: KubeClient): void {
    client.onRequest((r) => {
      this.counts[r.method] = (this.counts[r.method] ?? 0) + 1;
      const key = `${r.method} ${resourcePath(r.path.split("?")[0] ?? "")}`;
      this.paths[key] = (this.paths[key] ?? 0) + 1;
    });
  }

  reset(): void {
    this.counts = {};
    this.paths = {};
  }

  /** The `n` most frequent "METHOD path" entries, most first. */
  top(n: number): string[] {
    return Object.entries(this.paths)
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${v} ${k}`);
  }

  total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  /** Everything but GET (watches are GETs): the requests that change the cluster. */
  writes(): number {
    return this.total() - (this.counts["GET"] ?? 0);
  }
}

export interface BenchEnv {
  cluster: ClusterInfo;
  admin: KubeClient;
  operator: RunningOperator;
  requests: RequestCounter;
  quick: boolean;
  /** The noop scenario's idle window, seconds. */
  idleSeconds: number;
  /** Progress lines go to stderr, so --json's stdout stays one object. */
  log: (line: string) => void;
}

export async function startBenchOperator(
  kubeconfig: string,
): Promise<{ operator: RunningOperator; requests: RequestCounter; logDir: string }> {
  const logDir = mkdtempSync(join(tmpdir(), "onto-bench-"));
  const logger = pino(
    { level: "info", base: undefined },
    pino.destination({ dest: join(logDir, "operator.log"), sync: false }),
  );
  const operator = await runOperator({
    kubeconfig,
    namespaces: [],
    metricsPort: 0,
    healthPort: 0,
    auditLog: join(logDir, "audit.log"),
    logger,
  });
  const requests = new RequestCounter();
  requests.observe(operator.manager.client);
  return { operator, requests, logDir };
}

export function adminClientOf(cluster: ClusterInfo): KubeClient {
  return new KubeClient(loadKubeConfig({ path: cluster.kubeconfigPath }));
}

export async function installCrds(client: KubeClient): Promise<void> {
  for (const file of [
    "deploy/crds/onto.paas_ontoplatforms.yaml",
    "deploy/crds/onto.paas_ontoreleases.yaml",
  ]) {
    const crd = parseAllDocuments(readFileSync(file, "utf8"))[0]?.toJS() as KubeObject;
    await client.apply(crd, { force: true });
    await waitFor(`CRD ${crd.metadata?.name ?? file} established`, 60_000, async () => {
      const live = await client.get<
        KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
      >({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        name: crd.metadata?.name ?? "",
      });
      return live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;
    });
  }
  client.discovery.invalidate();
}

/** Polls `check` every `everyMs` until it is true; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function minimalPlatform(namespace: string): OntoPlatform {
  const doc = parseAllDocuments(readFileSync("samples/minimal.yaml", "utf8"))[0]?.toJS() as OntoPlatform;
  doc.metadata.namespace = namespace;
  return doc;
}

export async function platformRunning(client: KubeClient, namespace: string): Promise<boolean> {
  const p = await client.get<OntoPlatform & KubeObject>({ ...PLATFORM_REF, namespace, name: PLATFORM_NAME });
  return p.status?.phase === "Running" && p.status.observedGeneration === p.metadata.generation;
}

type Workload = KubeObject & {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; observedGeneration?: number };
};

/** Every Deployment and StatefulSet of `namespace` has all its replicas ready (and there is one). */
export async function workloadsReady(client: KubeClient, namespace: string): Promise<boolean> {
  const lists = await Promise.all(
    ["Deployment", "StatefulSet"].map((kind) => client.list<Workload>("apps/v1", kind, { namespace })),
  );
  const all = lists.flatMap((l) => l.items);
  return all.length > 0 && all.every((w) => (w.status?.readyReplicas ?? 0) >= (w.spec?.replicas ?? 1));
}

export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.apply({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "onto.paas/bench": "true" } },
  });
}

export async function deleteNamespace(client: KubeClient, name: string): Promise<void> {
  await client.delete({ apiVersion: "v1", kind: "Namespace", name }).catch(() => false);
}

let seq = 0;
export function benchNamespace(prefix: string): string {
  return `bench-${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}`.slice(0, 63);
}
