// The platform certificate, the step between render and apply. When the spec needs
// global.tlsSecretName (tlsEnabled, or an ingress terminating TLS with it):
// - a Secret of that name without the operator's label is the user's: used as it is, never
//   written; what is wrong with it (no tls.key, not a certificate, a key that does not match,
//   expired) is a problem naming the field and the key;
// - otherwise the operator issues it from a per-platform CA (kept in the Secret `<platform>-ca`,
//   created on first need) with every name certificateNames lists, and issues it again when the
//   names or the lifetime change, the CA changed, or `renewAtFraction` of its lifetime has passed. A stopped
//   operator renews on its first reconcile after it starts again (the decision is made from the
//   stored certificate, never from memory);
// - with spec.global.tls.issuerRef, cert-manager issues and renews it: the operator writes a
//   cert-manager Certificate with the same names, lifetime and renewal point, and checks the Secret
//   cert-manager writes like a user's.
// The issued Secrets (or the Certificate) join the desired objects, so apply writes them and prune
// keeps them.
import { X509Certificate } from "node:crypto";
import { COMPONENTS, NAME_LABEL, REASON, type CertificateState, type ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import {
  ISSUED_CERTIFICATE_LABEL,
  caSecretName,
  certManagerCertificate,
  certificateNames,
  type CertManagerIssuerRef,
  issuedCertificateSecret,
  type PlatformRef,
  type RenderedObject,
  TLS_REVISION_ANNOTATION,
  withTlsRevision,
} from "../../render/index.js";
import type { ReadonlyStore } from "../../runtime/index.js";
import {
  issueCa,
  issueLeaf,
  keyMatches,
  CLOCK_SKEW_MS,
  readCertificate,
  signedBy,
  type CertificateFacts,
  type KeyPair,
} from "./certificate-pki.js";
import { CERTIFICATE_REF, certManagerProblems, renewalTime, type IssuerState } from "./cert-manager.js";
import type { SpecProblem } from "./status.js";

/**
 * Components whose program picks up a renewed certificate from its mounted Secret without a
 * restart; the pods of every other component that mounts it are rolled (render's withTlsRevision).
 * MinIO watches its certificate files and serves a new one by itself; Postgres reads them again at
 * pg_reload_conf(), which the HA controller calls on a member serving an older certificate than the
 * Secret holds (postgres-ha/reloads.ts). test/real/tls.test.ts shows both on the real node. Redis,
 * the platform services and Nessie read theirs only at start.
 */
export const TLS_RELOADING_COMPONENTS: ReadonlySet<string> = new Set<string>(["minio", "postgres"]);

/** The CA lives long: renewing it means every client must trust a new root. */
const CA_LIFETIME_MS = 10 * 365 * 24 * 3600_000;
const FIELD = "spec.global.tlsSecretName";
/** How many replaced certificates status.certificates keeps (the schema's maxItems). */
const MAX_REPLACED = 4;

/** How the certificate step issues key material (tests pass a clock; the CA's life is fixed). */
export interface Issuer {
  issueCa(commonName: string, now: Date, lifetimeMs: number): Promise<KeyPair>;
  issueLeaf(ca: KeyPair, names: readonly string[], now: Date, lifetimeMs: number): Promise<KeyPair>;
}

export const PLATFORM_ISSUER: Issuer = { issueCa, issueLeaf };

export interface CertificatePlan {
  /** The issued Secrets, to apply with the rendered objects. */
  objects: RenderedObject[];
  problems: SpecProblem[];
  /** For status.certificates, by Secret name. */
  states: Record<string, CertificateState>;
  /** Serial of the certificate in use, when there is a usable one (rolls the pods that need it). */
  serial?: string;
  /** When the next renewal is due, from `now`. */
  renewInMs?: number;
}

/** Go-style duration ("2160h", "1h30m", "90s") in milliseconds; the schema's pattern admits only these. */
export function durationMs(text: string): number {
  let ms = 0;
  for (const [, value, unit] of text.matchAll(/([0-9]+)([hms])/g))
    ms += Number(value) * (unit === "h" ? 3600_000 : unit === "m" ? 60_000 : 1000);
  return ms;
}

/** Whether the spec asks for the platform certificate, and its Secret's name. */
export function platformCertificateName(spec: ResolvedSpec): string | undefined {
  const ingress = spec.gateway.ingress;
  const ingressUsesIt =
    ingress.enabled &&
    ingress.tls &&
    (ingress.tlsSecretName ?? spec.global.tlsSecretName) === spec.global.tlsSecretName;
  return spec.global.tlsEnabled || ingressUsesIt ? spec.global.tlsSecretName : undefined;
}

/** When `facts` is due for renewal: `fraction` of its lifetime after it became valid. */
export function renewAt(facts: Pick<CertificateFacts, "notBefore" | "notAfter">, fraction: number): Date {
  const start = facts.notBefore.getTime();
  return new Date(start + fraction * (facts.notAfter.getTime() - start));
}

type SecretView = KubeObject & { data?: Record<string, string> };

function decoded(secret: SecretView | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}

function issuedAs(secret: SecretView | undefined): string | undefined {
  return secret?.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL];
}

/** A stored key pair, when both halves are there, parse, and belong together. */
function storedPair(secret: SecretView | undefined): { pair: KeyPair; facts: CertificateFacts } | undefined {
  const cert = decoded(secret, "tls.crt");
  const key = decoded(secret, "tls.key");
  if (!cert || !key) return undefined;
  try {
    const facts = readCertificate(cert);
    return keyMatches(cert, key) ? { pair: { certPem: cert, keyPem: key }, facts } : undefined;
  } catch {
    return undefined;
  }
}

/** The infrastructure components: their clients verify the platform certificate's names. */
const INFRASTRUCTURE: ReadonlySet<string> = new Set(
  COMPONENTS.filter((c) => c.plane === "infrastructure").map((c) => c.name),
);

/**
 * The names a user's certificate must cover for the platform's own TLS links with tlsEnabled: of
 * those the operator would issue for the infrastructure Services (Postgres, Redis, MinIO, Kafka),
 * the forms their clients and peers reach and verify: the short name, the `.svc` name, and each
 * member by its headless `.svc` name. (`<name>.<namespace>` is issued but no link uses it, and no
 * wildcard could stand for it: OpenSSL matches no `*.<namespace>`.)
 */
export function linkNames(desired: readonly RenderedObject[], namespace: string): string[] {
  const services = desired.filter(
    (o) => o.kind === "Service" && INFRASTRUCTURE.has(o.metadata.labels[NAME_LABEL] ?? ""),
  );
  return certificateNames(services, namespace, undefined).filter((n) => !n.endsWith(`.${namespace}`));
}

/** The names of `needed` the certificate does not cover (a `*.` name stands for any one member). */
export function uncoveredNames(certPem: string, needed: readonly string[]): string[] {
  const cert = new X509Certificate(certPem);
  return needed.filter((name) => cert.checkHost(name.replace(/^\*\./, "member-0.")) === undefined);
}

/** Lists at most a few names, and how many more. */
function someNames(names: readonly string[]): string {
  const shown = names.slice(0, 4).join(", ");
  return names.length > 4 ? `${shown} and ${names.length - 4} more` : shown;
}

/** What is wrong with a user's TLS Secret, if anything (the Secret itself is never touched). */
function userSecretProblem(
  ref: string,
  secret: SecretView,
  now: Date,
  needsCa: boolean,
  neededNames: readonly string[],
): { problem?: SpecProblem; facts?: CertificateFacts } {
  const invalid = (message: string) => ({
    problem: { field: FIELD, reason: REASON.InvalidTLSSecret, message: `Secret ${ref}: ${message}` },
  });
  const cert = decoded(secret, "tls.crt");
  const key = decoded(secret, "tls.key");
  if (!cert) return invalid("has no tls.crt");
  if (!key) return invalid("has no tls.key");
  let facts: CertificateFacts;
  try {
    facts = readCertificate(cert);
  } catch {
    return invalid("tls.crt is not a PEM certificate");
  }
  try {
    if (!keyMatches(cert, key)) return { ...invalid("tls.key is not the key of tls.crt"), facts };
  } catch {
    return { ...invalid("tls.key is not a PEM private key"), facts };
  }
  // With tlsEnabled the platform's own TLS links (MinIO and its peers, the services) verify the
  // certificate against ca.crt; without it their pods could not even mount the file.
  if (needsCa && !decoded(secret, "ca.crt"))
    return {
      ...invalid("has no ca.crt (with tlsEnabled, the platform's TLS clients verify against it)"),
      facts,
    };
  if (facts.notAfter.getTime() <= now.getTime())
    return {
      facts,
      problem: {
        field: FIELD,
        reason: REASON.TLSCertificateExpired,
        message: `Secret ${ref}: the certificate in tls.crt expired at ${facts.notAfter.toISOString()}`,
      },
    };
  const missing = uncoveredNames(cert, neededNames);
  if (missing.length > 0)
    return {
      ...invalid(
        `the certificate in tls.crt does not name ${someNames(missing)}, which the platform's TLS clients verify (with tlsEnabled)`,
      ),
      facts,
    };
  return { facts };
}

/** What the reconciler read of cert-manager for a platform with spec.global.tls.issuerRef. */
export interface CertManagerView {
  /** Whether the cluster serves cert-manager.io/v1 Certificate. */
  served: boolean;
  /** The Certificate the operator wrote, as the cache has it. */
  certificate: KubeObject | undefined;
  /** The issuer, when it was read (only while the Certificate is not Ready). */
  issuer: IssuerState | undefined;
}

/** Validity of what a Secret holds, as with a user's: its names, key, CA and expiry. */
function certificateInUse(
  plan: CertificatePlan,
  spec: ResolvedSpec,
  desired: readonly RenderedObject[],
  ref: { namespace: string; name: string },
  live: SecretView,
  now: Date,
  issuer: CertificateState["issuer"],
  renewAtTime?: string,
): void {
  const tls = spec.global.tlsEnabled;
  const { problem, facts } = userSecretProblem(
    `${ref.namespace}/${ref.name}`,
    live,
    now,
    tls,
    tls ? linkNames(desired, ref.namespace) : [],
  );
  if (problem) plan.problems.push(problem);
  if (facts) {
    plan.states[ref.name] = {
      issuer,
      notAfter: facts.notAfter.toISOString(),
      ...(renewAtTime ? { renewAt: renewAtTime } : {}),
      serial: facts.serial,
    };
    if (!problem) plan.serial = facts.serial;
  }
}

/**
 * The platform certificate through cert-manager: the operator writes the Certificate (when the
 * cluster serves the API) and uses the Secret cert-manager writes, checked like a user's. It
 * neither issues nor writes that Secret, whoever made it: one the operator issued before issuerRef
 * was set stays in use (and is not pruned) until cert-manager replaces its content.
 */
function planCertManager(input: {
  platform: PlatformRef;
  spec: ResolvedSpec;
  desired: readonly RenderedObject[];
  now: Date;
  name: string;
  live: SecretView | undefined;
  issuerRef: CertManagerIssuerRef;
  plan: CertificatePlan;
  certManager?: CertManagerView | undefined;
}): CertificatePlan {
  const { platform, spec, name, live, issuerRef, plan } = input;
  const ns = platform.namespace;
  const view = input.certManager;
  if (!view?.served) {
    plan.problems.push({
      field: "spec.global.tls.issuerRef",
      reason: REASON.CertManagerNotServed,
      message: `the cluster does not serve cert-manager's Certificate API (${CERTIFICATE_REF.apiVersion}); Secret ${ns}/${name} is not issued`,
    });
  } else {
    plan.objects.push(
      certManagerCertificate(platform, name, {
        dnsNames: certificateNames(
          input.desired,
          ns,
          spec.gateway.ingress.enabled ? spec.gateway.ingress.host : undefined,
        ),
        issuerRef,
        lifetimeSeconds: Math.round(durationMs(spec.global.tls.certificateLifetime) / 1000),
        renewAtFraction: spec.global.tls.renewAtFraction,
      }),
    );
    plan.problems.push(
      ...certManagerProblems({
        ref: issuerRef,
        namespace: ns,
        issuer: view.issuer,
        certificate: view.certificate,
      }),
    );
  }
  if (live)
    certificateInUse(
      plan,
      spec,
      input.desired,
      { namespace: ns, name },
      live,
      input.now,
      "cert-manager",
      renewalTime(view?.certificate),
    );
  return plan;
}

/** The certificate step's decisions and, where needed, freshly issued key material. */
export async function planCertificates(input: {
  platform: PlatformRef;
  spec: ResolvedSpec;
  desired: readonly RenderedObject[];
  secrets: ReadonlyStore<KubeObject>;
  now: Date;
  issuer?: Issuer;
  /** status.certificates as last written (carries the replaced certificate forward). */
  previous?: Record<string, CertificateState> | undefined;
  /** With spec.global.tls.issuerRef: what the cluster says of cert-manager (./cert-manager.ts). */
  certManager?: CertManagerView | undefined;
}): Promise<CertificatePlan> {
  const { platform, spec, now } = input;
  const issuer = input.issuer ?? PLATFORM_ISSUER;
  const name = platformCertificateName(spec);
  const plan: CertificatePlan = { objects: [], problems: [], states: {} };
  if (!name) return plan;
  const ns = platform.namespace;
  const live = input.secrets.getByName(ns, name);

  const issuerRef = spec.global.tls.issuerRef;
  if (issuerRef) return planCertManager({ ...input, name, live, issuerRef, plan });

  if (live && issuedAs(live) !== "certificate") {
    certificateInUse(plan, spec, input.desired, { namespace: ns, name }, live, now, "user");
    return plan;
  }

  const caName = caSecretName(platform.name);
  const caLive = input.secrets.getByName(ns, caName);
  if (caLive && issuedAs(caLive) !== "ca") {
    plan.problems.push({
      field: FIELD,
      reason: REASON.InvalidTLSSecret,
      message: `Secret ${ns}/${caName} is where the operator keeps the platform's CA, but it was not created by the operator; rename it`,
    });
    return plan;
  }
  let ca = storedPair(caLive);
  if (!ca || !ca.facts.isCa || ca.facts.notAfter.getTime() <= now.getTime()) {
    const pair = await issuer.issueCa(`${platform.name}.${ns} platform CA`, now, CA_LIFETIME_MS);
    ca = { pair, facts: readCertificate(pair.certPem) };
  }

  const fraction = spec.global.tls.renewAtFraction;
  const lifetimeMs = durationMs(spec.global.tls.certificateLifetime);
  const names = certificateNames(
    input.desired,
    ns,
    spec.gateway.ingress.enabled ? spec.gateway.ingress.host : undefined,
  );
  let leaf = storedPair(live);
  const stored = leaf;
  const usable =
    leaf !== undefined &&
    signedBy(leaf.pair.certPem, ca.pair.certPem) &&
    names.every((n) => leaf?.facts.dnsNames.includes(n)) &&
    // A changed certificateLifetime takes effect at once (the skew backdating aside).
    Math.abs(leaf.facts.notAfter.getTime() - leaf.facts.notBefore.getTime() - lifetimeMs - CLOCK_SKEW_MS) <
      CLOCK_SKEW_MS &&
    renewAt(leaf.facts, fraction).getTime() > now.getTime();
  if (!leaf || !usable) {
    const pair = await issuer.issueLeaf(ca.pair, names, now, lifetimeMs);
    leaf = { pair, facts: readCertificate(pair.certPem) };
  }

  plan.objects.push(
    issuedCertificateSecret(platform, caName, "ca", {
      cert: ca.pair.certPem,
      key: ca.pair.keyPem,
      ca: ca.pair.certPem,
    }),
    issuedCertificateSecret(platform, name, "certificate", {
      cert: leaf.pair.certPem,
      key: leaf.pair.keyPem,
      ca: ca.pair.certPem,
    }),
  );
  const due = renewAt(leaf.facts, fraction);
  // The certificates this one replaced (newest first, a few): pods whose restart waits still run
  // with one of them (disruption.ts lets their restart go before it expires). The Secret holds
  // only the new one, so the status carries them from the renewal on.
  const before = input.previous?.[name];
  const earlier = before?.replaced ?? [];
  const replaced = (
    stored && stored.facts.serial !== leaf.facts.serial
      ? [
          {
            serial: stored.facts.serial,
            notAfter: stored.facts.notAfter.toISOString(),
            renewAt: renewAt(stored.facts, fraction).toISOString(),
          },
          ...earlier,
        ]
      : before?.serial === leaf.facts.serial
        ? earlier
        : []
  )
    .filter(
      (r, i, all) => r.serial !== leaf.facts.serial && all.findIndex((o) => o.serial === r.serial) === i,
    )
    .slice(0, MAX_REPLACED);
  plan.states[name] = {
    issuer: "operator",
    notAfter: leaf.facts.notAfter.toISOString(),
    renewAt: due.toISOString(),
    serial: leaf.facts.serial,
    ...(replaced.length > 0 ? { replaced } : {}),
  };
  plan.states[caName] = {
    issuer: "operator",
    notAfter: ca.facts.notAfter.toISOString(),
    serial: ca.facts.serial,
  };
  plan.serial = leaf.facts.serial;
  plan.renewInMs = Math.max(0, due.getTime() - now.getTime());
  return plan;
}

/** The serial of the certificate a live workload's pods started with (render's withTlsRevision). */
export function liveTlsSerial(live: KubeObject | undefined): string | undefined {
  const template = (live as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } })
    ?.spec?.template;
  return template?.metadata?.annotations?.[TLS_REVISION_ANNOTATION];
}

/**
 * The objects to apply: the issued Secrets, then `rendered` with the certificate's serial on the
 * pod templates that must restart for a new one (shared by the reconciler and `onto diff`). Without
 * a usable certificate (the Secret is missing or invalid, a condition says why) each workload keeps
 * the serial its live template has (`liveSerial`): a pod restarted onto a Secret it cannot mount
 * or use would not come back.
 */
export function withPlatformCertificate(
  rendered: readonly RenderedObject[],
  spec: ResolvedSpec,
  plan: CertificatePlan,
  liveSerial?: (obj: RenderedObject) => string | undefined,
): RenderedObject[] {
  const name = platformCertificateName(spec);
  if (!name) return [...plan.objects, ...rendered];
  if (plan.serial)
    return [...plan.objects, ...withTlsRevision(rendered, name, plan.serial, TLS_RELOADING_COMPONENTS)];
  const kept = rendered.map((obj) => {
    // Only workloads carry it (and only their kinds are sure to have a cache to look in).
    if (obj.kind !== "Deployment" && obj.kind !== "StatefulSet") return obj;
    const serial = liveSerial?.(obj);
    return serial ? (withTlsRevision([obj], name, serial, TLS_RELOADING_COMPONENTS)[0] ?? obj) : obj;
  });
  return [...plan.objects, ...kept];
}
