// The cert-manager side of the platform certificate (spec.global.tls.issuerRef): what the
// reconciler reads of the issuer the spec names and of the Certificate it wrote, and the problems
// they show. cert-manager reports an issuer it cannot find only on the CertificateRequest it made,
// not on the Certificate, so the issuer is read directly (one GET, and only while the Certificate
// is not Ready).
import { REASON } from "../../api/index.js";
import { NotFoundError, type KubeObject, type ObjectRef } from "../../kube/index.js";
import type { CertManagerIssuerRef } from "../../render/index.js";
import type { SpecProblem } from "./status.js";

/** cert-manager's own API group: the issuers of that group are the ones the operator can read. */
export const CERT_MANAGER_GROUP = "cert-manager.io";
export const CERTIFICATE_REF = { apiVersion: `${CERT_MANAGER_GROUP}/v1`, kind: "Certificate" } as const;

const FIELD = "spec.global.tls.issuerRef";

/** What a GET of the issuer found: absent, or its Ready condition. */
export interface IssuerState {
  found: boolean;
  ready?: Condition | undefined;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

function conditions(obj: KubeObject | undefined): Condition[] {
  return (obj as { status?: { conditions?: Condition[] } } | undefined)?.status?.conditions ?? [];
}

function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

/** Whether cert-manager says the Certificate's Secret is issued, current and matches its spec. */
export function certificateReady(certificate: KubeObject | undefined): boolean {
  return condition(certificate, "Ready")?.status === "True";
}

/** When cert-manager renews the Certificate (its status.renewalTime), if it said; written as status writes times. */
export function renewalTime(certificate: KubeObject | undefined): string | undefined {
  const time = (certificate as { status?: { renewalTime?: string } } | undefined)?.status?.renewalTime;
  const ms = time ? Date.parse(time) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function issuerObjectRef(ref: CertManagerIssuerRef, namespace: string): ObjectRef {
  return {
    apiVersion: `${ref.group}/v1`,
    kind: ref.kind,
    name: ref.name,
    ...(ref.kind === "Issuer" ? { namespace } : {}),
  };
}

/**
 * The issuer `ref` names, read from the API server; undefined when it cannot be read (an issuer
 * of another group, whose API the operator does not know, or a failed request: no problem is
 * claimed on a guess).
 */
export async function readIssuer(
  client: { get(ref: ObjectRef): Promise<KubeObject> },
  ref: CertManagerIssuerRef,
  namespace: string,
): Promise<IssuerState | undefined> {
  if (ref.group !== CERT_MANAGER_GROUP) return undefined;
  try {
    const issuer = await client.get(issuerObjectRef(ref, namespace));
    return { found: true, ready: condition(issuer, "Ready") };
  } catch (err) {
    if (err instanceof NotFoundError) return { found: false };
    return undefined;
  }
}

function issuerName(ref: CertManagerIssuerRef, namespace: string): string {
  return ref.kind === "Issuer" ? `Issuer ${namespace}/${ref.name}` : `ClusterIssuer ${ref.name}`;
}

/** What stands in the way of cert-manager issuing the platform certificate, from what was read. */
export function certManagerProblems(input: {
  ref: CertManagerIssuerRef;
  namespace: string;
  issuer: IssuerState | undefined;
  certificate: KubeObject | undefined;
}): SpecProblem[] {
  const { ref, namespace, issuer, certificate } = input;
  const named = issuerName(ref, namespace);
  if (issuer && !issuer.found)
    return [
      {
        field: `${FIELD}.name`,
        reason: REASON.IssuerNotFound,
        message: `${named} does not exist (group ${ref.group}); cert-manager cannot issue the platform certificate`,
      },
    ];
  if (issuer?.ready && issuer.ready.status !== "True")
    return [
      {
        field: FIELD,
        reason: REASON.IssuerNotReady,
        message: `${named} is not Ready: ${issuer.ready.message ?? issuer.ready.reason ?? "no message"}`,
      },
    ];
  const issuing = condition(certificate, "Issuing");
  if (issuing?.status === "False" && issuing.reason === "Failed")
    return [
      {
        field: FIELD,
        reason: REASON.IssuerNotReady,
        message: `cert-manager failed to issue Certificate ${namespace}/${certificate?.metadata?.name ?? ""} from ${named}: ${issuing.message ?? "no message"}`,
      },
    ];
  return [];
}
