// What the spec asks for that the cluster cannot give, each naming its field: an ingress TLS
// Secret of its own name that does not exist. (The platform certificate, global.tlsSecretName, is
// issued when missing: certificates.ts; quota problems are computed from the rendered objects, in
// quota.ts.) Pure over the Secret cache.
import { REASON, type ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { ReadonlyStore } from "../../runtime/index.js";
import type { SpecProblem } from "./status.js";

export function tlsProblems(
  namespace: string,
  spec: ResolvedSpec,
  secrets: ReadonlyStore<KubeObject>,
): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const need = (field: string, secretName: string | undefined): void => {
    if (secretName && !secrets.getByName(namespace, secretName)) {
      problems.push({
        field,
        reason: REASON.MissingTLSSecret,
        message: `Secret ${namespace}/${secretName} does not exist`,
      });
    }
  };
  const ingress = spec.gateway.ingress;
  if (ingress.enabled && ingress.tls && ingress.tlsSecretName !== spec.global.tlsSecretName)
    need("spec.gateway.ingress.tlsSecretName", ingress.tlsSecretName);
  return problems;
}
