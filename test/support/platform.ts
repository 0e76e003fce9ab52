// Helpers for tests that run the operator against the shared control plane: install the CRD,
// load a sample into a namespace, start the operator in-process, and read the platform back.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { PLATFORM_REF, resolveSpec, type OntoPlatform } from "../../src/api/index.js";
import { TLS_RELOADING_COMPONENTS, linkNames } from "../../src/controllers/platform/certificates.js";
import { PRODUCT_CATALOG } from "../../src/release/index.js";
import { renderPlatform } from "../../src/render/index.js";
import { runOperator, type OperatorOptions, type RunningOperator } from "../../src/controllers/operator.js";
import { issueCa, issueLeaf } from "../../src/controllers/platform/certificate-pki.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import { grantOperatorAccess } from "../../src/permissions/service-account-access.js";
import { pino } from "pino";
import { eventually, kubeconfigPath } from "./cluster.js";
import { assertNoSecretLeaks } from "./secret-hygiene.js";

export function adminClient(): KubeClient {
  return new KubeClient(loadKubeConfig({ path: kubeconfigPath() }));
}

/** On a CRD the tests applied: the digest of the file it came from. */
const CRD_DIGEST_ANNOTATION = "test.onto.paas/crd-digest";

type LiveCrd = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

const established = (crd: LiveCrd | undefined): boolean =>
  crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;

/**
 * Applies the generated CRDs (OntoPlatform, OntoRelease) and waits until the API server serves
 * them. A CRD already applied from the same file is left as it is: every test file calls this, and
 * a server-side apply of the 300 KiB OntoPlatform schema costs the API server seconds of CPU on a
 * loaded machine (one such PATCH took past the 30 s client timeout while the suites ran together).
 */
export async function installCrd(client: KubeClient): Promise<void> {
  for (const [file, name] of [
    ["deploy/crds/onto.paas_ontoplatforms.yaml", "ontoplatforms.onto.paas"],
    ["deploy/crds/onto.paas_ontoreleases.yaml", "ontoreleases.onto.paas"],
  ] as const) {
    const text = readFileSync(file, "utf8");
    const digest = createHash("sha256").update(text).digest("hex").slice(0, 32);
    const ref = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", name } as const;
    const live = await client.getIfExists<LiveCrd>(ref);
    if (live?.metadata?.annotations?.[CRD_DIGEST_ANNOTATION] === digest && established(live)) continue;
    const crd = parseAllDocuments(text)[0]?.toJS() as KubeObject;
    crd.metadata = {
      ...crd.metadata,
      annotations: { ...crd.metadata?.annotations, [CRD_DIGEST_ANNOTATION]: digest },
    };
    await client.apply(crd, { force: true });
    await eventually(`the ${name} CRD to be established`, async () =>
      established(await client.get<LiveCrd>(ref)) ? true : undefined,
    );
  }
  client.discovery.invalidate();
}

/** A sample from samples/, moved into `namespace`. */
export function loadSample(file: string, namespace: string): OntoPlatform {
  const doc = parseAllDocuments(readFileSync(join("samples", file), "utf8"))[0]?.toJS() as OntoPlatform;
  doc.metadata.namespace = namespace;
  return doc;
}

/**
 * The names a user's certificate needs in `namespace` for the platform's TLS links (what the
 * operator checks with tlsEnabled), from a render of the minimal sample, and the ingress host.
 */
export function userCertificateHosts(namespace: string): string[] {
  const sample = loadSample("minimal.yaml", namespace);
  const spec = resolveSpec(sample.spec);
  const desired = renderPlatform({
    platform: { name: sample.metadata.name, namespace, uid: "" },
    spec,
    release: PRODUCT_CATALOG.releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: () => "x".repeat(32),
  });
  return ["platform.example.com", ...linkNames(desired, namespace)];
}

/** A user's TLS Secret: a real certificate for `hosts` from a CA of its own, valid for 30 days. */
export async function tlsSecret(
  namespace: string,
  name: string,
  hosts: readonly string[] = userCertificateHosts(namespace),
): Promise<KubeObject> {
  const now = new Date();
  const ca = await issueCa("test user CA", now, 60 * 86400_000);
  const pair = await issueLeaf(ca, hosts, now, 30 * 86400_000);
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(pair.certPem), "tls.key": b64(pair.keyPem), "ca.crt": b64(ca.certPem) },
  } as KubeObject;
}

/**
 * Runs the operator in-process as it runs when installed: under a ServiceAccount token bound to
 * the generated roles only (src/permissions), never as admin, so a permission the operator lacks
 * fails the test with a 403. The roles are scoped to `namespaces` (a Role in each), or a
 * ClusterRole when `namespaces` is empty. stop() stops the operator and revokes the roles.
 */
export async function startOperator(
  namespaces: string[],
  extra: Partial<OperatorOptions> = {},
): Promise<RunningOperator & { auditLog: string; logFile: string; kubeconfig: string }> {
  const dir = mkdtempSync(join(tmpdir(), "onto-operator-"));
  const auditLog = join(dir, "audit.log");
  // Every log line at debug level goes to a file, so tests can search what the operator said
  // (the secret-hygiene checks grep it for generated credentials).
  const logFile = join(dir, "operator.log");
  const logger = pino({ level: "debug", base: undefined }, pino.destination({ dest: logFile, sync: true }));
  const home = namespaces[0] ?? "default";
  const access = await grantOperatorAccess(adminClient(), {
    namespace: home,
    serviceAccount: "onto-operator",
    name: `onto-operator-${home}`.slice(0, 63),
    ...(namespaces.length > 0 ? { watchNamespaces: namespaces } : {}),
  });
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, access.kubeconfig, { mode: 0o600 });
  const operator = await runOperator({
    kubeconfig,
    namespaces,
    metricsPort: 0,
    healthPort: 0,
    auditLog,
    logger,
    discoveryIntervalMs: 5_000,
    ...extra,
  });
  return {
    ...operator,
    auditLog,
    logFile,
    kubeconfig,
    // Stopping also checks secret hygiene over everything this operator emitted, so every suite
    // that runs the operator fails if a generated credential leaked.
    stop: async () => {
      await operator.stop();
      try {
        const report = await assertNoSecretLeaks(adminClient(), namespaces, [auditLog, logFile]);
        console.log(`[secret-hygiene] ${report.values} generated values, ${report.sources} sources, 0 leaks`);
      } finally {
        await access.revoke().catch(() => undefined);
      }
    },
  };
}

export async function readPlatform(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<OntoPlatform> {
  return client.get<OntoPlatform & KubeObject>({ ...PLATFORM_REF, namespace, name });
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

/** A Deployment or StatefulSet as the certificate tests read it: pod-template annotations and volumes. */
export type Workload = KubeObject & {
  spec?: {
    template?: {
      metadata?: { annotations?: Record<string, string> };
      spec?: { volumes?: { secret?: { secretName?: string } }[] };
    };
  };
};

/** The Deployments and StatefulSets of `namespace` whose pods mount the Secret `secretName`. */
export async function workloadsMounting(
  client: KubeClient,
  namespace: string,
  secretName: string,
): Promise<Workload[]> {
  const out: Workload[] = [];
  for (const kind of ["Deployment", "StatefulSet"]) {
    const list = await client.list<Workload>("apps/v1", kind, { namespace });
    for (const w of list.items)
      if (w.spec?.template?.spec?.volumes?.some((v) => v.secret?.secretName === secretName)) out.push(w);
  }
  return out;
}

/** Of those, the ones whose pods roll on a new certificate (MinIO and Postgres reload it in place). */
export async function workloadsRolledOnRenewal(
  client: KubeClient,
  namespace: string,
  secretName: string,
): Promise<Workload[]> {
  return (await workloadsMounting(client, namespace, secretName)).filter(
    (w) => !TLS_RELOADING_COMPONENTS.has(w.metadata?.name ?? ""),
  );
}

/** The DNS names a certificate's subjectAltName lists. */
export function dnsNamesOf(cert: { subjectAltName?: string | undefined }): string[] {
  return (cert.subjectAltName ?? "").split(", ").map((s) => s.replace(/^DNS:/, ""));
}

/** The names of the Services platform `name` rendered in `namespace`. */
export async function platformServiceNames(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<string[]> {
  const services = await client.list("v1", "Service", {
    namespace,
    labelSelector: `app.kubernetes.io/instance=${name}`,
  });
  return services.items.map((svc) => svc.metadata?.name ?? "");
}
