// The platform certificate against the real control plane (issue 16): the production sample as
// written, in a namespace without `onto-tls`, reaches Running with a certificate the operator
// issued from its per-platform CA for every Service name and the ingress host; a short lifetime is
// renewed before it expires, rolling only the pods that mount it, also when the operator was
// stopped through the renewal point; a user's Secret that cannot be used is named in a condition
// and left as it is.
import { X509Certificate as NodeX509, createPrivateKey } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_REF } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { TLS_RELOADING_COMPONENTS } from "../../src/controllers/platform/certificates.js";
import { ISSUED_CERTIFICATE_LABEL, TLS_REVISION_ANNOTATION } from "../../src/render/index.js";
import { eventually } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import {
  dnsNamesOf,
  loadSample,
  platformServiceNames,
  readPlatform,
  tlsSecret,
  waitForPhase,
  workloadsMounting as workloadsMountingIn,
  workloadsRolledOnRenewal as rolledOnRenewalIn,
  type Workload,
} from "../support/platform.js";

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

const NAME = "onto-production";
// The second namespace holds a platform with a user's Secret (applied by its test).
const fx = useOperator({
  namespaces: ["certs", "certsuser"],
  labels: { "pod-security.kubernetes.io/enforce": "restricted" },
});
const { client, ns } = fx;

beforeAll(async () => {
  const started = Date.now();
  await client.apply(loadSample("production.yaml", ns));
  await waitForPhase(client, ns, NAME, "Running");
  console.log(
    `production sample without onto-tls: apply to Running in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}, 10 * 60_000);

const secret = (name: string, namespace = ns) =>
  client.get<Secret>({ apiVersion: "v1", kind: "Secret", namespace, name });
const pem = (s: Secret, key: string) => Buffer.from(s.data?.[key] ?? "", "base64").toString("utf8");

const workloadsMounting = (secretName: string) => workloadsMountingIn(client, ns, secretName);
const workloadsRolledOnRenewal = (secretName: string) => rolledOnRenewalIn(client, ns, secretName);

describe("the platform certificate", () => {
  it("is issued for the production sample as written: every Service name and the ingress host, from the platform's CA", async () => {
    const tls = await secret("onto-tls");
    const ca = await secret(`${NAME}-ca`);
    expect(tls.type).toBe("kubernetes.io/tls");
    expect(tls.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL]).toBe("certificate");
    expect(ca.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL]).toBe("ca");
    const cert = new NodeX509(pem(tls, "tls.crt"));
    const caCert = new NodeX509(pem(ca, "tls.crt"));
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(pem(tls, "ca.crt")).toBe(pem(ca, "tls.crt"));
    expect(cert.checkPrivateKey(createPrivateKey(pem(tls, "tls.key")))).toBe(true);
    const sans = dnsNamesOf(cert);
    expect(sans).toContain("platform.example.com");
    const services = await platformServiceNames(client, ns, NAME);
    expect(services.length).toBeGreaterThan(10);
    for (const name of services)
      expect(sans).toEqual(expect.arrayContaining([name, `${name}.${ns}`, `${name}.${ns}.svc`]));
    // Running again if something in the shared cluster set it back meanwhile (its condition printed).
    const seen = await readPlatform(client, ns, NAME);
    if (seen.status?.phase !== "Running")
      console.log(
        `phase ${seen.status?.phase}: ${JSON.stringify(seen.status?.conditions?.find((c) => c.type === "Degraded"))}`,
      );
    const platform = await waitForPhase(client, ns, NAME, "Running");
    expect(platform.status?.certificates?.["onto-tls"]).toMatchObject({
      issuer: "operator",
      notAfter: new Date(cert.validTo).toISOString(),
      serial: cert.serialNumber.toLowerCase(),
    });
    const metrics = await fx.operator.manager.metrics.registry.getSingleMetricAsString(
      "onto_certificate_expiry_timestamp_seconds",
    );
    expect(metrics).toContain(
      `onto_certificate_expiry_timestamp_seconds{platform_namespace="${ns}",platform="${NAME}",secret="onto-tls",issuer="operator"} ${new Date(cert.validTo).getTime() / 1000}`,
    );
    // Every workload that reads it only at start started with this certificate; MinIO and
    // Postgres, which reload it, carry no serial (a new certificate does not roll them).
    const mounting = await workloadsRolledOnRenewal("onto-tls");
    expect(mounting.length).toBeGreaterThan(0);
    for (const w of mounting)
      expect(w.spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION]).toBe(
        cert.serialNumber.toLowerCase(),
      );
    const rolling = new Set(mounting.map((w) => w.metadata?.name));
    const reloading = (await workloadsMounting("onto-tls")).filter((w) => !rolling.has(w.metadata?.name));
    expect(reloading.map((w) => w.metadata?.name).sort()).toEqual([...TLS_RELOADING_COMPONENTS].sort());
    for (const w of reloading)
      expect(w.spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION]).toBeUndefined();
  });

  it(
    "renews a short-lived certificate before it expires, rolling only the workloads that mount it, also across an operator stop",
    async () => {
      await client.mergePatch(
        { ...PLATFORM_REF, namespace: ns, name: NAME },
        { spec: { global: { tls: { certificateLifetime: "3m" } } } },
      );
      const first = await eventually("a certificate with the 3-minute lifetime", async () => {
        const c = new NodeX509(pem(await secret("onto-tls"), "tls.crt"));
        return new Date(c.validTo).getTime() - new Date(c.validFrom).getTime() <= 5 * 60_000 ? c : undefined;
      });
      const stateOf = async (serial: string) =>
        eventually(`status.certificates with serial ${serial}`, async () => {
          const state = (await readPlatform(client, ns, NAME)).status?.certificates?.["onto-tls"];
          return state?.serial === serial.toLowerCase() ? state : undefined;
        });
      const renewAt = new Date((await stateOf(first.serialNumber)).renewAt ?? 0);
      expect(renewAt.getTime()).toBeLessThan(new Date(first.validTo).getTime());
      const generations = async () => {
        const out = new Map<string, number>();
        for (const kind of ["Deployment", "StatefulSet"])
          for (const w of (await client.list<Workload>("apps/v1", kind, { namespace: ns })).items)
            out.set(`${kind}/${w.metadata?.name}`, w.metadata?.generation ?? 0);
        return out;
      };
      const podNames = async () =>
        new Set((await client.list("v1", "Pod", { namespace: ns })).items.map((p) => p.metadata?.name ?? ""));
      const before = await generations();
      const podsBefore = await podNames();

      // Renewal by a running operator: its requeue at renewAt.
      const second = await eventually(
        "the certificate renewed",
        async () => {
          const c = new NodeX509(pem(await secret("onto-tls"), "tls.crt"));
          return c.serialNumber !== first.serialNumber ? c : undefined;
        },
        5 * 60_000,
        1000,
      );
      const renewedAt = Date.now();
      console.log(
        `renewal 1: due ${renewAt.toISOString()}, in place ${new Date(renewedAt).toISOString()} (${((renewedAt - renewAt.getTime()) / 1000).toFixed(1)} s after due, ${((new Date(first.validTo).getTime() - renewedAt) / 1000).toFixed(1)} s before expiry)`,
      );
      expect(renewedAt).toBeLessThan(new Date(first.validTo).getTime());
      expect(second.checkIssued(first) || second.issuer === first.issuer).toBe(true);

      const mounting = await workloadsRolledOnRenewal("onto-tls");
      const rolled = mounting.map((w) => `${w.kind}/${w.metadata?.name}`);
      await eventually("every mounting workload on the new serial", async () => {
        const now = await workloadsRolledOnRenewal("onto-tls");
        return now.every(
          (w) =>
            w.spec?.template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION] ===
            second.serialNumber.toLowerCase(),
        )
          ? true
          : undefined;
      });
      // Only the workloads that mount the certificate changed; each rolls through its own update.
      const after = await generations();
      for (const [id, generation] of before) {
        if (rolled.includes(id)) expect(after.get(id), id).toBeGreaterThan(generation);
        else expect(after.get(id), id).toBe(generation);
      }
      await waitForPhase(client, ns, NAME, "Running");
      const podsAfter = await podNames();
      const replaced = [...podsBefore].filter((p) => !podsAfter.has(p));
      console.log(`renewal 1: pods replaced: ${replaced.length} (${replaced.join(", ")})`);
      console.log(`renewal 1: workloads rolled: ${rolled.length} (${rolled.join(", ")})`);

      // Renewal by an operator that was stopped through the renewal point: on its first reconcile.
      const due = new Date((await stateOf(second.serialNumber)).renewAt ?? 0);
      await fx.restartOperator(async () => {
        const wait = due.getTime() - Date.now() + 2000;
        console.log(`operator stopped; waiting ${(wait / 1000).toFixed(0)} s past the renewal point`);
        await new Promise((r) => setTimeout(r, Math.max(0, wait)));
        const still = new NodeX509(pem(await secret("onto-tls"), "tls.crt"));
        expect(still.serialNumber).toBe(second.serialNumber);
      });
      const restartedAt = Date.now();
      const third = await eventually(
        "the certificate renewed after the restart",
        async () => {
          const c = new NodeX509(pem(await secret("onto-tls"), "tls.crt"));
          return c.serialNumber !== second.serialNumber ? c : undefined;
        },
        2 * 60_000,
        500,
      );
      console.log(
        `renewal 2 (after an operator stop): in place ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart, ${((new Date(second.validTo).getTime() - Date.now()) / 1000).toFixed(1)} s before the old one expired`,
      );
      expect(Date.now()).toBeLessThan(new Date(second.validTo).getTime());
      expect(third.serialNumber).not.toBe(second.serialNumber);
      await client.mergePatch(
        { ...PLATFORM_REF, namespace: ns, name: NAME },
        { spec: { global: { tls: { certificateLifetime: null } } } },
      );
    },
    15 * 60_000,
  );

  it(
    "names what is wrong with a user's Secret in a condition and leaves the Secret as it is",
    async () => {
      const userNs = fx.namespaces[1] ?? "";
      const valid = await tlsSecret(userNs, "onto-tls");
      // The API server refuses a kubernetes.io/tls Secret without tls.key; an Opaque one it takes.
      const withoutKey = {
        ...valid,
        type: "Opaque",
        data: { "tls.crt": (valid as Secret).data?.["tls.crt"] ?? "" },
      } as Secret;
      await client.apply(withoutKey);
      const applied = await secret("onto-tls", userNs);
      const platform = loadSample("minimal.yaml", userNs);
      platform.spec.global = { tlsEnabled: true, tlsSecretName: "onto-tls" };
      await client.apply(platform);
      const degraded = await eventually("the InvalidTLSSecret condition", async () => {
        const p = await readPlatform(client, userNs, platform.metadata.name);
        const c = p.status?.conditions?.find((x) => x.type === "Degraded");
        return c?.reason === "InvalidTLSSecret" ? c : undefined;
      });
      expect(degraded.message).toBe(`spec.global.tlsSecretName: Secret ${userNs}/onto-tls: has no tls.key`);
      const after = await secret("onto-tls", userNs);
      expect(after.metadata?.resourceVersion).toBe(applied.metadata?.resourceVersion);
      expect(after.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL]).toBeUndefined();

      // A certificate for the ingress host alone: the platform's TLS clients could verify nothing.
      await client.apply({
        ...(await tlsSecret(userNs, "onto-tls", ["platform.example.com"])),
        type: "Opaque",
      });
      const unnamed = await eventually("the InvalidTLSSecret condition naming what is missing", async () => {
        const p = await readPlatform(client, userNs, platform.metadata.name);
        const c = p.status?.conditions?.find((x) => x.type === "Degraded");
        return c?.reason === "InvalidTLSSecret" && c.message?.includes("does not name") ? c : undefined;
      });
      expect(unnamed.message).toMatch(
        new RegExp(
          `^spec.global.tlsSecretName: Secret ${userNs}/onto-tls: the certificate in tls.crt does not name .*postgres`,
        ),
      );

      // The user puts in a certificate with the names (deleting the Secret instead would let the
      // operator issue its own).
      await client.apply({ ...valid, type: "Opaque" });
      const running = await waitForPhase(client, userNs, platform.metadata.name, "Running");
      expect(running.status?.certificates?.["onto-tls"]?.issuer).toBe("user");
      const kept = await secret("onto-tls", userNs);
      expect(pem(kept, "tls.crt")).toBe(pem(valid as Secret, "tls.crt"));
      expect(kept.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL]).toBeUndefined();
    },
    5 * 60_000,
  );
});
