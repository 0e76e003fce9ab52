// Pod Security for tenant namespaces (issue 8): when a platform is a tenant (tenancy.mode
// "namespace"), its namespace enforces the `restricted` Pod Security Standard, so nothing
// privileged can run beside the platform. The labels are applied with the operator's field
// manager; the Namespace itself is never owned by the platform (deleting the platform must not
// delete the namespace) and never pruned.
import type { ResolvedSpec } from "../../api/index.js";

export const POD_SECURITY_LABELS = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/warn": "restricted",
} as const;

export interface NamespaceLabels {
  apiVersion: "v1";
  kind: "Namespace";
  metadata: { name: string; labels: Record<string, string> };
}

/** The Namespace labels to apply for `spec`, or undefined when the platform is not a tenant. */
export function namespaceSecurity(namespace: string, spec: ResolvedSpec): NamespaceLabels | undefined {
  if (spec.tenancy.mode !== "namespace") return undefined;
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace, labels: { ...POD_SECURITY_LABELS } },
  };
}
