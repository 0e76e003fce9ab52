// Helpers for tests that run the operator against the shared control plane: install the CRD,
// load a sample into a namespace, start the operator in-process, and read the platform back.
import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { OntoPlatform } from "../../src/api/index.js";
import { runOperator, type OperatorOptions, type RunningOperator } from "../../src/controllers/operator.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import { silentLogger } from "../../src/runtime/index.js";
import { eventually, kubeconfigPath } from "./cluster.js";

export const PLATFORMS = { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform" } as const;

export function adminClient(): KubeClient {
  return new KubeClient(loadKubeConfig({ path: kubeconfigPath() }));
}

/** Applies the generated CRD and waits until the API server serves it. */
export async function installCrd(client: KubeClient): Promise<void> {
  const crd = parseAllDocuments(
    readFileSync("deploy/crds/onto.paas_ontoplatforms.yaml", "utf8"),
  )[0]?.toJS() as KubeObject;
  await client.apply(crd, { force: true });
  await eventually("the OntoPlatform CRD to be established", async () => {
    const live = await client.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      name: "ontoplatforms.onto.paas",
    });
    return live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
      ? true
      : undefined;
  });
  client.discovery.invalidate();
}

/** A sample from samples/, moved into `namespace`. */
export function loadSample(file: string, namespace: string): OntoPlatform {
  const doc = parseAllDocuments(readFileSync(join("samples", file), "utf8"))[0]?.toJS() as OntoPlatform;
  doc.metadata.namespace = namespace;
  return doc;
}

/** A self-signed-looking TLS Secret (the content is never parsed by the simulated pods). */
export function tlsSecret(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from("test-cert").toString("base64"),
      "tls.key": Buffer.from("test-key").toString("base64"),
    },
  } as KubeObject;
}

export async function startOperator(
  namespaces: string[],
  extra: Partial<OperatorOptions> = {},
): Promise<RunningOperator & { auditLog: string }> {
  const auditLog = join(mkdtempSync(join(tmpdir(), "onto-audit-")), "audit.log");
  const operator = await runOperator({
    kubeconfig: kubeconfigPath(),
    namespaces,
    metricsPort: 0,
    healthPort: 0,
    auditLog,
    logger: silentLogger,
    discoveryIntervalMs: 5_000,
    ...extra,
  });
  return { ...operator, auditLog };
}

export async function readPlatform(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<OntoPlatform> {
  return client.get<OntoPlatform & KubeObject>({ ...PLATFORMS, namespace, name });
}

export async function waitForPhase(
  client: KubeClient,
  namespace: string,
  name: string,
  phase: string,
  timeoutMs = 180_000,
): Promise<OntoPlatform> {
  return eventually(
    `${namespace}/${name} phase ${phase}`,
    async () => {
      const p = await readPlatform(client, namespace, name);
      return p.status?.phase === phase && p.status.observedGeneration === p.metadata.generation
        ? p
        : undefined;
    },
    timeoutMs,
    500,
  );
}
