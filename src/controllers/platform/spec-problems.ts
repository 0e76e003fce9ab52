// What the spec asks for that the cluster cannot give, each naming its field: a TLS Secret the
// spec names that does not exist. (Quota problems are computed from the rendered objects, in
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
  if (spec.global.tlsEnabled) need("spec.global.tlsSecretName", spec.global.tlsSecretName);
  const ingress = spec.gateway.ingress;
  if (ingress.enabled && ingress.tls) {
    need(
      ingress.tlsSecretName ? "spec.gateway.ingress.tlsSecretName" : "spec.global.tlsSecretName",
      ingress.tlsSecretName ?? spec.global.tlsSecretName,
    );
  }
  return problems.filter((p, i) => problems.findIndex((q) => q.message === p.message) === i);
}
