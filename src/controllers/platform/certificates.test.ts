// The certificate step's decisions, from in-memory Secret caches and real key material: issuance
// from a per-platform CA with every Service name and the ingress host, reuse until the renewal
// fraction of the lifetime has passed, a user's Secret used as it is with its problems named.
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatformSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { PRODUCT_CATALOG } from "../../release/index.js";
import { ISSUED_CERTIFICATE_LABEL, renderPlatform, type RenderedObject } from "../../render/index.js";
import { Store } from "../../runtime/index.js";
import { issueCa, issueLeaf, keyMatches, readCertificate, signedBy } from "./certificate-pki.js";
import {
  durationMs,
  liveTlsSerial,
  linkNames,
  planCertificates,
  renewAt,
  uncoveredNames,
  withPlatformCertificate,
} from "./certificates.js";

const NS = "tenant";
const PLATFORM = { name: "onto", namespace: NS, uid: "uid-1" };
const NOW = new Date("2026-03-01T00:00:00Z");
const HOUR = 3600_000;

const SPEC: OntoPlatformSpec = {
  version: "1.5.0",
  global: { tlsEnabled: true, tlsSecretName: "onto-tls", tls: { certificateLifetime: "90h" } },
  gateway: { ingress: { enabled: true, host: "platform.example.com", tls: true } },
};

function rendered(raw: OntoPlatformSpec = SPEC): {
  spec: ReturnType<typeof resolveSpec>;
  desired: RenderedObject[];
} {
  const spec = resolveSpec(raw);
  const desired = renderPlatform({
    platform: PLATFORM,
    spec,
    release: PRODUCT_CATALOG.releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: () => "x".repeat(32),
  });
  return { spec, desired };
}

function store(objects: readonly (KubeObject | RenderedObject)[]): Store<KubeObject> {
  const s = new Store<KubeObject>();
  for (const o of objects) s.upsert(o);
  return s;
}

const text = (secret: RenderedObject, key: string): string =>
  Buffer.from((secret.data as Record<string, string>)[key] ?? "", "base64").toString("utf8");

function userSecret(data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "onto-tls", namespace: NS },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  } as KubeObject;
}

describe("durations", () => {
  it("reads Go-style durations", () => {
    expect(durationMs("2160h")).toBe(2160 * HOUR);
    expect(durationMs("1h30m")).toBe(90 * 60_000);
    expect(durationMs("5m30s")).toBe(330_000);
  });
});

describe("the operator-issued platform certificate", () => {
  it("issues a CA and a certificate for every Service name and the ingress host, labelled as issued", async () => {
    const { spec, desired } = rendered();
    const plan = await planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW });
    expect(plan.problems).toEqual([]);
    const [ca, leaf] = plan.objects;
    if (!ca || !leaf) throw new Error("expected two Secrets");
    expect(ca.metadata).toMatchObject({ name: "onto-ca", labels: { [ISSUED_CERTIFICATE_LABEL]: "ca" } });
    expect(leaf.metadata).toMatchObject({
      name: "onto-tls",
      labels: { [ISSUED_CERTIFICATE_LABEL]: "certificate" },
    });
    expect(leaf.type).toBe("kubernetes.io/tls");
    expect(leaf.metadata.ownerReferences?.[0]?.uid).toBe("uid-1");

    const cert = text(leaf, "tls.crt");
    expect(keyMatches(cert, text(leaf, "tls.key"))).toBe(true);
    expect(signedBy(cert, text(leaf, "ca.crt"))).toBe(true);
    expect(text(leaf, "ca.crt")).toBe(text(ca, "tls.crt"));
    const facts = readCertificate(cert);
    const services = desired.filter((o) => o.kind === "Service").map((o) => o.metadata.name);
    expect(services).toContain("postgres");
    for (const svc of services)
      expect(facts.dnsNames).toEqual(expect.arrayContaining([svc, `${svc}.${NS}`, `${svc}.${NS}.svc`]));
    expect(facts.dnsNames).toContain("platform.example.com");
    expect(facts.dnsNames).toContain(`*.postgres-headless.${NS}.svc`);
    // Node's own verifier agrees: the name checks a TLS client makes.
    const x = new X509Certificate(cert);
    expect(x.checkHost("postgres.tenant.svc")).toBe("postgres.tenant.svc");
    // A StatefulSet pod's own name matches through the headless Service's wildcard.
    expect(x.checkHost("postgres-1.postgres-headless.tenant.svc")).toBe("*.postgres-headless.tenant.svc");
    expect(x.checkHost("elsewhere.example.com")).toBeUndefined();
    expect(x.ca).toBe(false);
    expect(new X509Certificate(text(ca, "tls.crt")).ca).toBe(true);

    expect(facts.notAfter.getTime() - NOW.getTime()).toBe(90 * HOUR);
    expect(plan.states["onto-tls"]).toMatchObject({
      issuer: "operator",
      notAfter: facts.notAfter.toISOString(),
    });
    expect(plan.serial).toBe(facts.serial);
    // Renewal at 2/3 of the lifetime by default (from notBefore, a minute back for clock skew).
    expect(plan.renewInMs).toBeGreaterThan(59 * HOUR);
    expect(plan.renewInMs).toBeLessThan(61 * HOUR);
  });

  it("keeps what it issued until the renewal point, then issues a new certificate from the same CA", async () => {
    const { spec, desired } = rendered();
    const first = await planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW });
    const [ca, leaf] = first.objects;
    if (!ca || !leaf) throw new Error("expected two Secrets");
    const live = store(first.objects);
    const later = new Date(NOW.getTime() + 59 * HOUR);
    const kept = await planCertificates({ platform: PLATFORM, spec, desired, secrets: live, now: later });
    expect(kept.objects).toEqual(first.objects);
    expect(kept.serial).toBe(first.serial);

    const due = new Date(renewAt(readCertificate(text(leaf, "tls.crt")), 0.6667).getTime() + 1000);
    const renewed = await planCertificates({ platform: PLATFORM, spec, desired, secrets: live, now: due });
    expect(renewed.serial).not.toBe(first.serial);
    expect(renewed.objects[0]).toEqual(ca);
    const cert = text(renewed.objects[1] as RenderedObject, "tls.crt");
    expect(signedBy(cert, text(ca, "tls.crt"))).toBe(true);
    // X.509 times have whole seconds.
    expect(Math.abs(readCertificate(cert).notAfter.getTime() - due.getTime() - 90 * HOUR)).toBeLessThan(1000);
  });

  it("names the certificates renewals replaced, and keeps naming them while the new one is kept", async () => {
    const { spec, desired } = rendered();
    const first = await planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW });
    expect(first.states["onto-tls"]?.replaced).toBeUndefined();
    const old = first.states["onto-tls"];
    if (!old?.renewAt) throw new Error("no renewAt");
    const due = new Date(Date.parse(old.renewAt) + 1000);
    const renewed = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store(first.objects),
      now: due,
      previous: first.states,
    });
    const replaced = [{ serial: old.serial, notAfter: old.notAfter, renewAt: old.renewAt }];
    expect(renewed.states["onto-tls"]?.replaced).toEqual(replaced);
    // The next reconcile finds the new certificate in the Secret: the status carries the old one.
    const kept = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store(renewed.objects),
      now: new Date(due.getTime() + 60_000),
      previous: renewed.states,
    });
    expect(kept.serial).toBe(renewed.serial);
    expect(kept.states["onto-tls"]?.replaced).toEqual(replaced);
    // Renewed again before the pods moved: both are named, newest first.
    const second = renewed.states["onto-tls"];
    if (!second?.renewAt) throw new Error("no renewAt");
    const again = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store(renewed.objects),
      now: new Date(Date.parse(second.renewAt) + 1000),
      previous: kept.states,
    });
    expect(again.states["onto-tls"]?.replaced).toEqual([
      { serial: second.serial, notAfter: second.notAfter, renewAt: second.renewAt },
      ...replaced,
    ]);
  });

  it("issues again when a name is added (an ingress host) and when the CA is gone", async () => {
    const { spec, desired } = rendered({ ...SPEC, gateway: { ingress: { enabled: false } } });
    const first = await planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW });
    const withHost = rendered();
    const again = await planCertificates({
      platform: PLATFORM,
      spec: withHost.spec,
      desired: withHost.desired,
      secrets: store(first.objects),
      now: NOW,
    });
    expect(again.serial).not.toBe(first.serial);
    expect(readCertificate(text(again.objects[1] as RenderedObject, "tls.crt")).dnsNames).toContain(
      "platform.example.com",
    );
    const withoutCa = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store(first.objects.slice(1)),
      now: NOW,
    });
    expect(withoutCa.serial).not.toBe(first.serial);
  });

  it("issues nothing when TLS is off", async () => {
    const { spec, desired } = rendered({ version: "1.5.0" });
    expect(
      await planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW }),
    ).toEqual({
      objects: [],
      problems: [],
      states: {},
    });
  });
});

describe("a user's TLS Secret", () => {
  const userPair = async (lifetimeMs: number, at = NOW, names?: readonly string[]) => {
    const ca = await issueCa("user CA", at, 10 * lifetimeMs);
    const hosts = names ?? ["platform.example.com", ...linkNames(rendered().desired, NS)];
    return { ...(await issueLeaf(ca, hosts, at, lifetimeMs)), caPem: ca.certPem };
  };

  it("with tlsEnabled must name what the platform's TLS clients verify: a problem lists what it lacks", async () => {
    const { spec, desired } = rendered();
    const needed = linkNames(desired, NS);
    expect(needed).toEqual(
      expect.arrayContaining([
        "postgres",
        `postgres.${NS}.svc`,
        "redis",
        `*.redis-headless.${NS}.svc`,
        "minio",
      ]),
    );
    expect(needed.some((n) => n.startsWith("auth-service"))).toBe(false); // only the infrastructure's
    const ingressOnly = await userPair(1000 * HOUR, NOW, ["platform.example.com"]);
    const plan = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([
        userSecret({
          "tls.crt": ingressOnly.certPem,
          "tls.key": ingressOnly.keyPem,
          "ca.crt": ingressOnly.caPem,
        }),
      ]),
      now: NOW,
    });
    expect(plan.serial).toBeUndefined();
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatchObject({
      field: "spec.global.tlsSecretName",
      reason: "InvalidTLSSecret",
    });
    expect(plan.problems[0]?.message).toMatch(
      new RegExp(
        `^Secret ${NS}/onto-tls: the certificate in tls.crt does not name .+ and ${needed.length - 4} more, which the platform's TLS clients verify`,
      ),
    );
    // A wildcard for the namespace covers the Services but not each member's headless name.
    const wildcard = await userPair(1000 * HOUR, NOW, [
      `*.${NS}.svc`,
      `*.${NS}`,
      ...needed.filter((n) => !n.includes(".")),
    ]);
    expect(uncoveredNames(wildcard.certPem, needed)).toEqual(needed.filter((n) => n.startsWith("*.")));
    // Without tlsEnabled only the Ingress uses it: no names asked for.
    const { spec: ingressSpec, desired: ingressDesired } = rendered({
      ...SPEC,
      global: { ...SPEC.global, tlsEnabled: false },
    });
    const ingressPlan = await planCertificates({
      platform: PLATFORM,
      spec: ingressSpec,
      desired: ingressDesired,
      secrets: store([userSecret({ "tls.crt": ingressOnly.certPem, "tls.key": ingressOnly.keyPem })]),
      now: NOW,
    });
    expect(ingressPlan.problems).toEqual([]);
  });

  it("is used as it is: nothing issued, its expiry in the state", async () => {
    const { spec, desired } = rendered();
    const pair = await userPair(1000 * HOUR);
    const secret = userSecret({ "tls.crt": pair.certPem, "tls.key": pair.keyPem, "ca.crt": pair.caPem });
    const plan = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([secret]),
      now: NOW,
    });
    expect(plan.objects).toEqual([]);
    expect(plan.problems).toEqual([]);
    expect(plan.states["onto-tls"]).toMatchObject({
      issuer: "user",
      serial: readCertificate(pair.certPem).serial,
    });
    expect(plan.serial).toBe(readCertificate(pair.certPem).serial);
  });

  it("without tls.key, with a key of another certificate, or expired: a problem naming the field, nothing issued", async () => {
    const { spec, desired } = rendered();
    const pair = await userPair(1000 * HOUR);
    const other = await userPair(1000 * HOUR);
    const expired = await userPair(HOUR, new Date(NOW.getTime() - 2 * HOUR));
    const cases: [Record<string, string>, string, string][] = [
      [{ "tls.crt": pair.certPem }, "InvalidTLSSecret", "Secret tenant/onto-tls: has no tls.key"],
      [{ "tls.key": pair.keyPem }, "InvalidTLSSecret", "Secret tenant/onto-tls: has no tls.crt"],
      [
        { "tls.crt": "garbage", "tls.key": pair.keyPem },
        "InvalidTLSSecret",
        "Secret tenant/onto-tls: tls.crt is not a PEM certificate",
      ],
      [
        { "tls.crt": pair.certPem, "tls.key": pair.keyPem },
        "InvalidTLSSecret",
        "Secret tenant/onto-tls: has no ca.crt (with tlsEnabled, the platform's TLS clients verify against it)",
      ],
      [
        { "tls.crt": pair.certPem, "tls.key": other.keyPem, "ca.crt": pair.caPem },
        "InvalidTLSSecret",
        "Secret tenant/onto-tls: tls.key is not the key of tls.crt",
      ],
      [
        { "tls.crt": expired.certPem, "tls.key": expired.keyPem, "ca.crt": expired.caPem },
        "TLSCertificateExpired",
        `Secret tenant/onto-tls: the certificate in tls.crt expired at ${readCertificate(expired.certPem).notAfter.toISOString()}`,
      ],
    ];
    for (const [data, reason, message] of cases) {
      const plan = await planCertificates({
        platform: PLATFORM,
        spec,
        desired,
        secrets: store([userSecret(data)]),
        now: NOW,
      });
      expect(plan.objects).toEqual([]);
      expect(plan.problems).toEqual([{ field: "spec.global.tlsSecretName", reason, message }]);
      expect(plan.serial).toBeUndefined();
    }
  });

  it("needs no ca.crt when only the Ingress terminates TLS with it", async () => {
    const { spec, desired } = rendered({ ...SPEC, global: { ...SPEC.global, tlsEnabled: false } });
    const pair = await userPair(1000 * HOUR);
    const plan = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([userSecret({ "tls.crt": pair.certPem, "tls.key": pair.keyPem })]),
      now: NOW,
    });
    expect(plan.problems).toEqual([]);
    expect(plan.states["onto-tls"]).toMatchObject({ issuer: "user" });
  });

  it("that cannot be used rolls nothing: each workload keeps the serial its live pods started with", async () => {
    const { spec, desired } = rendered();
    const pair = await userPair(1000 * HOUR);
    const good = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([userSecret({ "tls.crt": pair.certPem, "tls.key": pair.keyPem, "ca.crt": pair.caPem })]),
      now: NOW,
    });
    const running = withPlatformCertificate(desired, spec, good);
    const serialOf = (objects: RenderedObject[], kind: string, name: string) =>
      liveTlsSerial(objects.find((o) => o.kind === kind && o.metadata.name === name));
    expect(serialOf(running, "StatefulSet", "redis")).toBe(good.serial);
    expect(serialOf(running, "StatefulSet", "postgres")).toBeUndefined(); // reloaded, never rolled
    const broken = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([userSecret({ "tls.crt": pair.certPem })]),
      now: NOW,
    });
    expect(broken.serial).toBeUndefined();
    const live = (obj: RenderedObject) =>
      liveTlsSerial(running.find((o) => o.kind === obj.kind && o.metadata.name === obj.metadata.name));
    const kept = withPlatformCertificate(desired, spec, broken, live);
    for (const obj of kept.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet"))
      expect(liveTlsSerial(obj as KubeObject), `${obj.kind} ${obj.metadata.name}`).toBe(live(obj));
    // Without the live view, the annotation would be dropped and those pods rolled.
    expect(serialOf(withPlatformCertificate(desired, spec, broken), "StatefulSet", "redis")).toBeUndefined();
  });
});

describe("the platform certificate through cert-manager (global.tls.issuerRef)", () => {
  const CM_SPEC: OntoPlatformSpec = {
    ...SPEC,
    global: {
      ...SPEC.global,
      tls: { certificateLifetime: "90h", renewAtFraction: 0.75, issuerRef: { name: "ca" } },
    },
  };
  const served = { served: true, certificate: undefined, issuer: { found: true } };

  it("writes a Certificate with every name, the lifetime and the renewal point, and issues nothing itself", async () => {
    const { spec, desired } = rendered(CM_SPEC);
    const plan = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([]),
      now: NOW,
      certManager: served,
    });
    expect(plan.problems).toEqual([]);
    expect(plan.serial).toBeUndefined();
    expect(plan.objects).toHaveLength(1);
    const [certificate] = plan.objects;
    expect(certificate).toMatchObject({
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: "onto-tls", namespace: NS, ownerReferences: [{ uid: "uid-1" }] },
      spec: {
        secretName: "onto-tls",
        duration: `${90 * 3600}s`,
        renewBefore: `${Math.round(90 * 3600 * 0.25)}s`,
        issuerRef: { name: "ca", kind: "Issuer", group: "cert-manager.io" },
      },
    });
    const names = (certificate?.spec as { dnsNames: string[] }).dnsNames;
    expect(names).toEqual(expect.arrayContaining(["platform.example.com", ...linkNames(desired, NS)]));
  });

  it("uses the Secret cert-manager wrote like a user's, with cert-manager's renewal time", async () => {
    const { spec, desired } = rendered(CM_SPEC);
    const ca = await issueCa("cert-manager CA", NOW, 1000 * HOUR);
    const leaf = await issueLeaf(ca, ["platform.example.com", ...linkNames(desired, NS)], NOW, 90 * HOUR);
    const renewal = "2026-03-03T12:00:00.000Z";
    const plan = await planCertificates({
      platform: PLATFORM,
      spec,
      desired,
      secrets: store([userSecret({ "tls.crt": leaf.certPem, "tls.key": leaf.keyPem, "ca.crt": ca.certPem })]),
      now: NOW,
      certManager: {
        ...served,
        certificate: {
          metadata: { name: "onto-tls" },
          status: { renewalTime: "2026-03-03T12:00:00Z" },
        } as KubeObject,
      },
    });
    expect(plan.problems).toEqual([]);
    expect(plan.serial).toBe(readCertificate(leaf.certPem).serial);
    expect(plan.states["onto-tls"]).toMatchObject({ issuer: "cert-manager", renewAt: renewal });
  });

  it("names what stands in the way: no cert-manager API, a missing issuer, one not Ready, a failed issuance", async () => {
    const { spec, desired } = rendered(CM_SPEC);
    const plan = (certManager: Parameters<typeof planCertificates>[0]["certManager"]) =>
      planCertificates({ platform: PLATFORM, spec, desired, secrets: store([]), now: NOW, certManager });
    const none = await plan({ served: false, certificate: undefined, issuer: undefined });
    expect(none.objects).toEqual([]);
    expect(none.problems).toEqual([
      expect.objectContaining({ field: "spec.global.tls.issuerRef", reason: "CertManagerNotServed" }),
    ]);
    const missing = await plan({ served: true, certificate: undefined, issuer: { found: false } });
    expect(missing.problems).toEqual([
      {
        field: "spec.global.tls.issuerRef.name",
        reason: "IssuerNotFound",
        message: `Issuer ${NS}/ca does not exist (group cert-manager.io); cert-manager cannot issue the platform certificate`,
      },
    ]);
    const notReady = await plan({
      served: true,
      certificate: undefined,
      issuer: { found: true, ready: { type: "Ready", status: "False", message: "secret test-ca not found" } },
    });
    expect(notReady.problems[0]).toMatchObject({ reason: "IssuerNotReady" });
    expect(notReady.problems[0]?.message).toContain("secret test-ca not found");
    const failed = await plan({
      served: true,
      issuer: { found: true, ready: { type: "Ready", status: "True" } },
      certificate: {
        metadata: { name: "onto-tls" },
        status: { conditions: [{ type: "Issuing", status: "False", reason: "Failed", message: "denied" }] },
      } as KubeObject,
    });
    expect(failed.problems[0]?.message).toBe(
      `cert-manager failed to issue Certificate ${NS}/onto-tls from Issuer ${NS}/ca: denied`,
    );
  });
});
