// Who holds a field of an object, from its managedFields (server-side apply's record of who set
// what and how): the tests that check the operator leaves a Deployment's replicas to the HPA.
import type { KubeObject } from "../../src/kube/index.js";

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  fieldsV1?: { "f:spec"?: Record<string, unknown> };
}

/** Each manager whose entry holds spec.replicas, with how it wrote it (Apply or Update). */
export function replicasOwners(object: KubeObject): { manager: string; operation: string }[] {
  return ((object.metadata?.managedFields ?? []) as ManagedFieldsEntry[])
    .filter((f) => f.fieldsV1?.["f:spec"]?.["f:replicas"] !== undefined)
    .map((f) => ({ manager: f.manager ?? "?", operation: f.operation ?? "?" }));
}
