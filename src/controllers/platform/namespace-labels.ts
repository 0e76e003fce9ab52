// The tenant namespace's Pod Security labels (namespace-security.ts says which): applied when the
// cached Namespace lacks one of them, under the operator's field manager. The Namespace is never
// owned by the platform and never pruned.
import type { ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { ReadonlyStore } from "../../runtime/index.js";
import type { ClusterAction } from "../shared/act.js";
import { namespaceSecurity } from "./namespace-security.js";

/** The label apply `namespace` needs (none when it already carries every label, or is no tenant). */
export function planNamespaceLabels(
  namespace: string,
  spec: ResolvedSpec,
  namespaces: ReadonlyStore<KubeObject>,
): ClusterAction[] {
  const wanted = namespaceSecurity(namespace, spec);
  if (!wanted) return [];
  const live = namespaces.getByName(undefined, wanted.metadata.name);
  const missing = Object.entries(wanted.metadata.labels).filter(
    ([k, v]) => live?.metadata?.labels?.[k] !== v,
  );
  if (live && missing.length === 0) return [];
  const name = wanted.metadata.name;
  return [
    {
      verb: "patch",
      target: { apiVersion: "v1", kind: "Namespace", name },
      reason: "PodSecurityRestricted",
      message: `namespace ${name} now enforces the restricted Pod Security Standard`,
      failure: { reason: "PodSecurityFailed", message: `could not label namespace ${name}` },
      label: `Namespace/${name}`,
      run: async (client) => {
        await client.apply(wanted, { force: true });
        return true;
      },
    },
  ];
}
