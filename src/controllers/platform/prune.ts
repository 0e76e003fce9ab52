// Prune, the stage after apply: what this platform created earlier (its managed-by and instance
// labels and its owner reference) that the spec no longer asks for is deleted. Generated Secrets
// are kept under retentionPolicy.secrets Retain, and the platform certificate the operator issued
// while cert-manager takes it over; PersistentVolumeClaims are never a managed kind,
// so they are never pruned.
import {
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type OntoPlatform,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import {
  GENERATED_SECRET_LABEL,
  ISSUED_CERTIFICATE_LABEL,
  apiVersionOf,
  type ManagedKind,
  type RenderedObject,
} from "../../render/index.js";
import type { ReadonlyStore } from "../../runtime/index.js";
import type { ClusterAction } from "../shared/act.js";
import { objectId } from "./apply.js";

/** Whether `obj` carries the labels of what this operator makes for a platform named `platform`. */
export function labelledFor(obj: KubeObject, platform: string): boolean {
  const labels = obj.metadata?.labels;
  return labels?.[MANAGED_BY_LABEL] === MANAGED_BY && labels[INSTANCE_LABEL] === platform;
}

/** Whether an owner reference of `obj` names the platform of `uid`. */
export function ownerIs(obj: KubeObject, uid: string | undefined): boolean {
  return (obj.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);
}

/** Whether `obj` is one this platform created (not merely one in its namespace). */
export function ownedBy(obj: KubeObject, platform: OntoPlatform): boolean {
  return labelledFor(obj, platform.metadata.name) && ownerIs(obj, platform.metadata.uid);
}

/** The deletions that leave only `desired` of the platform's objects of `kinds`. */
export function planPrune(
  platform: OntoPlatform,
  spec: ResolvedSpec,
  desired: readonly RenderedObject[],
  kinds: readonly ManagedKind[],
  cache: (kind: { apiVersion: string; kind: string }) => ReadonlyStore<KubeObject>,
): ClusterAction[] {
  const ns = platform.metadata.namespace;
  const wanted = new Set(desired.map((o) => objectId(o.kind, o.metadata.name)));
  const actions: ClusterAction[] = [];
  for (const kind of kinds) {
    const ref = { apiVersion: apiVersionOf(kind), kind: kind.kind };
    for (const obj of cache(ref)
      .byNamespace(ns)
      .filter((o) => ownedBy(o, platform))) {
      const name = obj.metadata?.name ?? "";
      const id = objectId(kind.kind, name);
      if (wanted.has(id)) continue;
      const retained =
        kind.kind === "Secret" &&
        obj.metadata?.labels?.[GENERATED_SECRET_LABEL] &&
        spec.retentionPolicy.secrets === "Retain";
      // The certificate the operator issued before issuerRef was set stays in use until
      // cert-manager writes its own into the same Secret (certificates.ts).
      const handedToCertManager =
        kind.kind === "Secret" &&
        spec.global.tls.issuerRef !== undefined &&
        name === spec.global.tlsSecretName &&
        obj.metadata?.labels?.[ISSUED_CERTIFICATE_LABEL] === "certificate";
      if (retained || handedToCertManager) continue;
      const target = { ...ref, namespace: ns, name };
      actions.push({
        verb: "delete",
        target,
        reason: "Pruned",
        message: `pruned ${id}: the spec no longer asks for it`,
        failure: { reason: "PruneFailed", message: `could not prune ${id}` },
        label: `prune ${id}`,
        run: async (client) => {
          await client.delete(target, { propagationPolicy: "Background" });
          return true;
        },
      });
    }
  }
  return actions;
}
