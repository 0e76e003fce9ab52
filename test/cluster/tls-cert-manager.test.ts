// The platform certificate through cert-manager (spec.global.tls.issuerRef, issue 16), with
// cert-manager's own controller, built from its Go module, running against the test cluster: a
// self-signed Issuer makes a CA, a CA Issuer signs the platform certificate for every name the
// platform needs, a renewal cert-manager makes rolls the pods that read the certificate only at
// start, an issuer that does not exist is named in a condition with nothing deleted, a
// ClusterIssuer signs it as well, and a user's Certificate of the same name is not taken over.
// cluster-alone: the file installs cert-manager's CRDs and removes them after, and every operator
// on the cluster would watch Certificates meanwhile.
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { PLATFORM_REF } from "../../src/api/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import {
  ensureCertManagerCrds,
  startCertManager,
  type CertManagerProcess,
} from "../../src/localcluster/cert-manager.js";
import { ISSUED_CERTIFICATE_LABEL, TLS_REVISION_ANNOTATION, caSecretName } from "../../src/render/index.js";
import { clusterStateDir, eventually, kubeconfigPath } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import {
  dnsNamesOf,
  loadSample,
  platformServiceNames,
  readPlatform,
  waitForPhase,
  workloadsRolledOnRenewal as rolledOnRenewalIn,
} from "../support/platform.js";

type Secret = KubeObject & { data?: Record<string, string> };
type Conditioned = KubeObject & {
  spec?: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason?: string }[]; renewalTime?: string };
};

const NAME = "onto-minimal";
const TLS = "onto-tls";
const CM = "cert-manager.io/v1";
const CRD_REF = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition" } as const;

let certManager: CertManagerProcess | undefined;
const crdNames: string[] = [];

const fx = useOperator({
  namespaces: ["certmanager"],
  before: async ({ client, ns: namespace }) => {
    const kinds: string[] = [];
    for (const file of ensureCertManagerCrds()) {
      const crd = parseAllDocuments(readFileSync(file, "utf8"))[0]?.toJS() as KubeObject & {
        spec: { group: string; names: { kind: string } };
      };
      crdNames.push(crd.metadata?.name ?? "");
      if (crd.spec.group === "cert-manager.io") kinds.push(crd.spec.names.kind);
      await client.apply(crd);
    }
    // The operator looks for cert-manager's API when it starts, and the test makes Issuers and
    // ClusterIssuers at once: every kind must be served by then (on a cluster just started, the
    // Issuer CRD was not yet when only Certificate was waited for).
    await eventually(
      `cert-manager.io/v1 ${kinds.join(", ")} in discovery`,
      async () => {
        const fresh = new KubeClient(loadKubeConfig({ path: kubeconfigPath() }));
        try {
          for (const kind of kinds) if (!(await fresh.discovery.hasResource(CM, kind))) return undefined;
          return true;
        } finally {
          await fresh.close();
        }
      },
      60_000,
    );
    certManager = await startCertManager({
      stateDir: clusterStateDir(),
      kubeconfig: kubeconfigPath(),
      name: `cert-manager-${process.pid}`,
      // A ClusterIssuer reads its CA Secret from here: the test's own namespace.
      clusterResourceNamespace: namespace,
      progress: (line) => console.log(`[cert-manager] ${line}`),
    });
  },
  after: async () => {
    await certManager?.stop();
    const client = fx.client;
    for (const name of crdNames) await client.delete({ ...CRD_REF, name });
  },
});
const { client, ns } = fx;

const secret = (name: string) =>
  client.getIfExists<Secret>({ apiVersion: "v1", kind: "Secret", namespace: ns, name });
const pem = (s: Secret | undefined, key: string) =>
  Buffer.from(s?.data?.[key] ?? "", "base64").toString("utf8");
const certificateRef = (name: string) => ({ apiVersion: CM, kind: "Certificate", namespace: ns, name });
const ready = (obj: Conditioned | undefined) =>
  obj?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** Why a wait failed, with cert-manager's own words. */
function withLog(what: string): string {
  return `${what}\ncert-manager log:\n${certManager?.logTail() ?? "(not started)"}`;
}

/** The issuers of the test: self-signed, a CA certificate from it, and a CA Issuer signing with that CA. */
async function createIssuers(): Promise<void> {
  await client.apply({
    apiVersion: CM,
    kind: "Issuer",
    metadata: { name: "selfsigned", namespace: ns },
    spec: { selfSigned: {} },
  });
  await client.apply({
    apiVersion: CM,
    kind: "Certificate",
    metadata: { name: "test-ca", namespace: ns },
    spec: {
      isCA: true,
      commonName: "test platform CA",
      secretName: "test-ca",
      privateKey: { algorithm: "ECDSA", size: 256 },
      issuerRef: { name: "selfsigned", kind: "Issuer", group: "cert-manager.io" },
    },
  });
  await client.apply({
    apiVersion: CM,
    kind: "Issuer",
    metadata: { name: "ca", namespace: ns },
    spec: { ca: { secretName: "test-ca" } },
  });
  await eventually(
    withLog("the CA Issuer Ready"),
    async () =>
      ready(
        await client.getIfExists<Conditioned>({ apiVersion: CM, kind: "Issuer", namespace: ns, name: "ca" }),
      ) || undefined,
    90_000,
  );
}

const workloadsRolledOnRenewal = () => rolledOnRenewalIn(client, ns, TLS);

function serialOf(s: Secret | undefined): string {
  return new X509Certificate(pem(s, "tls.crt")).serialNumber.toLowerCase();
}

describe("the platform certificate through cert-manager (global.tls.issuerRef)", () => {
  it("is issued by the named CA Issuer for every Service name, and the platform runs on it", async () => {
    await createIssuers();
    const platform = loadSample("minimal.yaml", ns);
    platform.spec.global = {
      tlsEnabled: true,
      tlsSecretName: TLS,
      tls: { issuerRef: { name: "ca" } },
    };
    const started = Date.now();
    await client.apply(platform);
    const running = await eventually(
      withLog("Running with the cert-manager certificate in status"),
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.phase === "Running" && p.status.certificates?.[TLS]?.issuer === "cert-manager"
          ? p
          : undefined;
      },
      150_000,
    );
    console.log(
      `[cert-manager] apply to Running on a cert-manager certificate: ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );

    const certificate = await client.get<Conditioned>(certificateRef(TLS));
    expect(certificate.metadata?.ownerReferences?.[0]?.uid).toBe(running.metadata.uid);
    expect(certificate.spec?.issuerRef).toEqual({ name: "ca", kind: "Issuer", group: "cert-manager.io" });
    expect(certificate.spec?.secretName).toBe(TLS);
    const tls = await secret(TLS);
    expect(tls?.metadata?.annotations?.["cert-manager.io/certificate-name"]).toBe(TLS);
    expect(tls?.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL]).toBeUndefined();
    const cert = new X509Certificate(pem(tls, "tls.crt"));
    const ca = new X509Certificate(pem(await secret("test-ca"), "tls.crt"));
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(pem(tls, "ca.crt")).toBe(ca.toString());
    const sans = dnsNamesOf(cert);
    const services = await platformServiceNames(client, ns, NAME);
    expect(services.length).toBeGreaterThan(10);
    for (const name of services)
      expect(sans).toEqual(expect.arrayContaining([name, `${name}.${ns}`, `${name}.${ns}.svc`]));
    // The lifetime and renewal point are the spec's (the default 2160 h, renewed at 2/3).
    const lifetimeMs = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    expect(Math.abs(lifetimeMs - 2160 * 3600_000)).toBeLessThan(120_000);
    expect(running.status?.certificates?.[TLS]).toMatchObject({
      issuer: "cert-manager",
      serial: cert.serialNumber.toLowerCase(),
      renewAt: new Date(certificate.status?.renewalTime ?? "").toISOString(),
    });
    // The operator issues nothing itself: no per-platform CA.
    expect(await secret(caSecretName(NAME))).toBeUndefined();
    for (const w of await workloadsRolledOnRenewal())
      expect(w.spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION]).toBe(
        cert.serialNumber.toLowerCase(),
      );
  });

  it("rolls the pods that read the certificate only at start when cert-manager renews it", async () => {
    const before = serialOf(await secret(TLS));
    const live = await client.get<Conditioned>(certificateRef(TLS));
    // What `cmctl renew` does: the Issuing condition asks cert-manager to issue again now.
    await client.patchStatus(certificateRef(TLS), {
      conditions: [
        ...(live.status?.conditions ?? []).filter((c) => c.type !== "Issuing"),
        {
          type: "Issuing",
          status: "True",
          reason: "ManuallyTriggered",
          message: "renewal asked by the test",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    const renewed = await eventually(
      withLog("a new certificate in the Secret"),
      async () => {
        const serial = serialOf(await secret(TLS));
        return serial !== before ? serial : undefined;
      },
      90_000,
    );
    await eventually(
      "every workload that reads it at start rolled onto the new serial, and the status names it",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        if (p.status?.certificates?.[TLS]?.serial !== renewed) return undefined;
        const workloads = await workloadsRolledOnRenewal();
        return workloads.length > 0 &&
          workloads.every(
            (w) => w.spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION] === renewed,
          )
          ? true
          : undefined;
      },
      120_000,
    );
  });

  it("names an issuer that does not exist in a condition, deletes nothing, and recovers when it is fixed", async () => {
    const serial = serialOf(await secret(TLS));
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { global: { tls: { issuerRef: { name: "missing" } } } } },
    );
    const degraded = await eventually(
      withLog("Degraded with IssuerNotFound"),
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const c = p.status?.conditions?.find((x) => x.type === "Degraded");
        return c?.reason === "IssuerNotFound" ? c : undefined;
      },
      60_000,
    );
    expect(degraded.message).toContain("spec.global.tls.issuerRef.name");
    expect(degraded.message).toContain(`Issuer ${ns}/missing does not exist`);
    // The certificate in use stays: the Secret is neither deleted nor emptied.
    expect(serialOf(await secret(TLS))).toBe(serial);
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { global: { tls: { issuerRef: { name: "ca" } } } } },
    );
    await waitForPhase(client, ns, NAME, "Running");
    await eventually(
      withLog("the Certificate Ready again"),
      async () => ready(await client.get<Conditioned>(certificateRef(TLS))) || undefined,
      90_000,
    );
  });

  it("is issued by a ClusterIssuer when issuerRef names one", async () => {
    const clusterIssuer = `onto-test-ca-${ns}`;
    await client.apply({
      apiVersion: CM,
      kind: "ClusterIssuer",
      metadata: { name: clusterIssuer },
      spec: { ca: { secretName: "test-ca" } },
    });
    try {
      await client.mergePatch(
        { ...PLATFORM_REF, namespace: ns, name: NAME },
        { spec: { global: { tls: { issuerRef: { name: clusterIssuer, kind: "ClusterIssuer" } } } } },
      );
      await eventually(
        withLog("the Certificate names the ClusterIssuer and is Ready"),
        async () => {
          const c = await client.get<Conditioned>(certificateRef(TLS));
          const ref = c.spec?.issuerRef as { name?: string; kind?: string } | undefined;
          return ref?.kind === "ClusterIssuer" && ref.name === clusterIssuer && ready(c) ? c : undefined;
        },
        90_000,
      );
      await waitForPhase(client, ns, NAME, "Running");
      const ca = new X509Certificate(pem(await secret("test-ca"), "tls.crt"));
      expect(new X509Certificate(pem(await secret(TLS), "tls.crt")).verify(ca.publicKey)).toBe(true);
    } finally {
      await client.mergePatch(
        { ...PLATFORM_REF, namespace: ns, name: NAME },
        { spec: { global: { tls: { issuerRef: { name: "ca", kind: "Issuer" } } } } },
      );
      await client.delete({ apiVersion: CM, kind: "ClusterIssuer", name: clusterIssuer });
    }
  });

  it("leaves a Certificate of the same name that is not the platform's as it is, names it, and takes the name once it is gone", async () => {
    // The platform's Certificate deleted by hand would simply be applied again; one a user made
    // under that name (no owner reference, no labels of the platform) is not taken over. Paused
    // meanwhile, so the operator does not apply its own again between the two steps.
    const platformRef = { ...PLATFORM_REF, namespace: ns, name: NAME };
    await client.mergePatch(platformRef, { spec: { paused: true } });
    await eventually(
      "the pause observed",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        return p.status?.observedGeneration === p.metadata.generation || undefined;
      },
      60_000,
    );
    await client.delete(certificateRef(TLS));
    await eventually(
      "the platform's Certificate gone",
      async () => ((await client.getIfExists(certificateRef(TLS))) ? undefined : true),
      30_000,
    );
    await client.create({
      apiVersion: CM,
      kind: "Certificate",
      metadata: { name: TLS, namespace: ns, labels: { team: "data" } },
      spec: {
        secretName: "users-own-tls",
        commonName: "users-own.example",
        issuerRef: { name: "ca", kind: "Issuer", group: "cert-manager.io" },
      },
    });
    await client.mergePatch(platformRef, { spec: { paused: false } });
    const degraded = await eventually(
      "Degraded with NameTaken",
      async () => {
        const p = await readPlatform(client, ns, NAME);
        const c = p.status?.conditions?.find((x) => x.type === "Degraded");
        return c?.reason === "NameTaken" ? c : undefined;
      },
      60_000,
    );
    expect(degraded.message).toContain(`Certificate/${TLS}`);
    const users = await client.get<Conditioned>(certificateRef(TLS));
    expect(users.metadata?.ownerReferences ?? []).toEqual([]);
    expect(users.spec?.secretName).toBe("users-own-tls");
    expect(users.metadata?.labels).toEqual({ team: "data" });
    // The user's Certificate removed: the platform's is applied again and the platform runs.
    await client.delete(certificateRef(TLS));
    await waitForPhase(client, ns, NAME, "Running");
    const again = await eventually(
      withLog("the platform's Certificate again"),
      async () => {
        const c = await client.getIfExists<Conditioned>(certificateRef(TLS));
        return c?.spec?.secretName === TLS && ready(c) ? c : undefined;
      },
      90_000,
    );
    expect(again.metadata?.ownerReferences?.[0]?.kind).toBe("OntoPlatform");
  });
});
