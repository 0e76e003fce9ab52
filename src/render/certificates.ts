// The objects of the platform certificate: the names it must cover (every Service the platform
// renders, in its short, namespaced and .svc forms, each StatefulSet pod through its headless
// Service, and the ingress host), the Secrets that hold what the operator issued (its per-platform
// CA and the certificate itself), and the pod-template annotation that rolls the workloads whose
// program reads the certificate only at start. Pure: the key material is issued by the caller (it
// needs randomness and a clock) and handed in.
import {
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NAME_LABEL,
  PART_OF,
  PART_OF_LABEL,
} from "../api/index.js";
import { HEADLESS_LABEL, ownerReference, type PlatformRef } from "./meta.js";
import type { RenderedObject } from "./objects.js";

/** Label on a Secret the operator issued ("ca" or "certificate"); a Secret without it is the user's. */
export const ISSUED_CERTIFICATE_LABEL = "onto.paas/issued-certificate";
/** Pod-template annotation: the serial of the platform certificate the pods started with. */
export const TLS_REVISION_ANNOTATION = "onto.paas/tls-serial";
/** Name label of the certificate Secrets (they belong to no one component). */
const CERTIFICATE_COMPONENT = "platform-tls";

export type IssuedRole = "ca" | "certificate";

/** The Secret holding the per-platform CA that signs the platform certificate. */
export function caSecretName(platformName: string): string {
  return `${platformName}-ca`;
}

/** Every DNS name the platform certificate must cover, sorted, without duplicates. */
export function certificateNames(
  objects: readonly RenderedObject[],
  namespace: string,
  ingressHost: string | undefined,
): string[] {
  const names = new Set<string>();
  for (const obj of objects) {
    if (obj.kind !== "Service") continue;
    const name = obj.metadata.name;
    for (const form of [name, `${name}.${namespace}`, `${name}.${namespace}.svc`]) names.add(form);
    // A StatefulSet's pods are reached by name through its headless Service (replication, peers).
    if (obj.metadata.labels[HEADLESS_LABEL] === "true") {
      names.add(`*.${name}.${namespace}.svc`);
      names.add(`*.${name}.${namespace}`);
    }
  }
  if (ingressHost) names.add(ingressHost);
  return [...names].sort();
}

/** A kubernetes.io/tls Secret with what the operator issued; owned, so it goes with the platform. */
export function issuedCertificateSecret(
  platform: PlatformRef,
  name: string,
  role: IssuedRole,
  pem: { cert: string; key: string; ca: string },
): RenderedObject {
  const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: platform.namespace,
      labels: {
        [NAME_LABEL]: CERTIFICATE_COMPONENT,
        [INSTANCE_LABEL]: platform.name,
        [PART_OF_LABEL]: PART_OF,
        [MANAGED_BY_LABEL]: MANAGED_BY,
        [ISSUED_CERTIFICATE_LABEL]: role,
      },
      ownerReferences: [ownerReference(platform)],
    },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(pem.cert), "tls.key": b64(pem.key), "ca.crt": b64(pem.ca) },
  };
}

/** The cert-manager issuer a Certificate names (spec.global.tls.issuerRef, defaults applied). */
export interface CertManagerIssuerRef {
  name: string;
  kind: string;
  group: string;
}

/**
 * The cert-manager Certificate that has cert-manager issue the platform certificate into the Secret
 * `name`: the same names, key type, usages, lifetime and renewal point as one the operator issues
 * itself (renewBefore is what is left of the lifetime at `renewAtFraction`). Owned, so it goes
 * with the platform; the Secret cert-manager writes carries the platform's labels but no owner
 * reference, so it outlives a deleted Certificate as cert-manager intends.
 */
export function certManagerCertificate(
  platform: PlatformRef,
  name: string,
  spec: {
    dnsNames: readonly string[];
    issuerRef: CertManagerIssuerRef;
    lifetimeSeconds: number;
    renewAtFraction: number;
  },
): RenderedObject {
  const identity = {
    [NAME_LABEL]: CERTIFICATE_COMPONENT,
    [INSTANCE_LABEL]: platform.name,
    [PART_OF_LABEL]: PART_OF,
  };
  const renewBefore = Math.max(1, Math.round(spec.lifetimeSeconds * (1 - spec.renewAtFraction)));
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: {
      name,
      namespace: platform.namespace,
      labels: { ...identity, [MANAGED_BY_LABEL]: MANAGED_BY },
      ownerReferences: [ownerReference(platform)],
    },
    spec: {
      secretName: name,
      secretTemplate: { labels: identity },
      dnsNames: [...spec.dnsNames],
      duration: `${spec.lifetimeSeconds}s`,
      renewBefore: `${renewBefore}s`,
      issuerRef: { ...spec.issuerRef },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      usages: ["digital signature", "server auth", "client auth"],
    },
  };
}

interface PodTemplated {
  spec?: {
    template?: { metadata?: { annotations?: Record<string, string> }; spec?: { volumes?: unknown[] } };
  };
}

function mountsSecret(obj: RenderedObject, secretName: string): boolean {
  const volumes = (obj as PodTemplated).spec?.template?.spec?.volumes ?? [];
  return volumes.some((v) => (v as { secret?: { secretName?: string } }).secret?.secretName === secretName);
}

/**
 * `objects` with the certificate's serial on the pod template of every workload that mounts
 * `secretName` and whose program does not reload it by itself (`reloads` names those that do): a
 * new certificate rolls those pods through their own rolling update, one at a time.
 */
export function withTlsRevision(
  objects: readonly RenderedObject[],
  secretName: string,
  serial: string,
  reloads: ReadonlySet<string>,
): RenderedObject[] {
  return objects.map((obj) => {
    if (obj.kind !== "Deployment" && obj.kind !== "StatefulSet") return obj;
    if (reloads.has(obj.metadata.labels[NAME_LABEL] ?? "") || !mountsSecret(obj, secretName)) return obj;
    const copy = structuredClone(obj) as RenderedObject & PodTemplated;
    const template = copy.spec?.template;
    if (!template) return obj;
    template.metadata = {
      ...template.metadata,
      annotations: { ...template.metadata?.annotations, [TLS_REVISION_ANNOTATION]: serial },
    };
    return copy;
  });
}
