// Local PersistentVolumes for a platform on the local cluster, provisioned statically the way
// Kubernetes documents it for local storage (there is no dynamic provisioner for `local`
// volumes): one PV per claim, pre-bound to it through claimRef, in the StorageClass
// LOCAL_STORAGE_CLASS. Why not the cluster's default class: its host-path provisioner makes each
// volume a root-owned 0750 folder, and the kubelet applies a pod's fsGroup to `local` volumes but
// never to `hostPath` ones, so a non-root Postgres, Redis or MinIO on a real node could not write
// its own volume. On a real node a claim's PV is a folder under the cluster's state folder, which
// the kubelet bind-mounts and hands to the pod's fsGroup, as on any cluster with local disks;
// claims of pods on the simulated nodes get a PV too (KWOK mounts nothing), so one StorageClass
// serves a whole platform.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../kube/index.js";

export const LOCAL_STORAGE_CLASS = "onto-local";
/** Label on each PV naming the namespace of its claim (for cleanup). */
export const LOCAL_VOLUME_NAMESPACE_LABEL = "onto.paas/local-volume-namespace";

export interface LocalClaim {
  namespace: string;
  /** The PVC's name, e.g. data-postgres-0. */
  name: string;
  /** Capacity of the PV (at least the claim's request). */
  storage: string;
  /** The real node the claim's pod runs on; absent: a simulated node. */
  realNode?: string | undefined;
}

function storageClass(): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: LOCAL_STORAGE_CLASS },
    provisioner: "kubernetes.io/no-provisioner",
    volumeBindingMode: "WaitForFirstConsumer",
    reclaimPolicy: "Retain",
  } as KubeObject;
}

/** PV names are cluster-wide: namespace and claim, cut to the 253 characters a name may have. */
export function localVolumeName(claim: Pick<LocalClaim, "namespace" | "name">): string {
  return `${LOCAL_STORAGE_CLASS}-${claim.namespace}-${claim.name}`.slice(0, 253);
}

function volumeFolder(stateDir: string, claim: LocalClaim): string {
  return join(stateDir, "local-volumes", localVolumeName(claim));
}

function persistentVolume(stateDir: string, claim: LocalClaim): KubeObject {
  const affinity = claim.realNode
    ? { key: "kubernetes.io/hostname", operator: "In", values: [claim.realNode] }
    : { key: "type", operator: "In", values: ["kwok"] };
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name: localVolumeName(claim),
      labels: { [LOCAL_VOLUME_NAMESPACE_LABEL]: claim.namespace },
    },
    spec: {
      capacity: { storage: claim.storage },
      accessModes: ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      storageClassName: LOCAL_STORAGE_CLASS,
      claimRef: { namespace: claim.namespace, name: claim.name },
      // A simulated node mounts nothing; the path only has to be absolute.
      local: { path: claim.realNode ? volumeFolder(stateDir, claim) : "/nonexistent" },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [affinity] }] } },
    },
  } as KubeObject;
}

/**
 * Creates the StorageClass and a PV (and, on a real node, its folder) for each claim that has
 * none. A PV that exists is left as it is: a re-created platform's claims bind their old volumes.
 */
export async function ensureLocalVolumes(
  client: KubeClient,
  stateDir: string,
  claims: readonly LocalClaim[],
): Promise<void> {
  await client.apply(storageClass(), { force: true });
  for (const claim of claims) {
    const pv = persistentVolume(stateDir, claim);
    if (
      await client.getIfExists({ apiVersion: "v1", kind: "PersistentVolume", name: pv.metadata?.name ?? "" })
    )
      continue;
    if (claim.realNode) mkdirSync(volumeFolder(stateDir, claim), { recursive: true, mode: 0o755 });
    await client.create(pv);
  }
}

/** Deletes the PVs of a namespace's claims and their folders (after the claims are gone). */
export async function deleteLocalVolumes(
  client: KubeClient,
  stateDir: string,
  namespace: string,
): Promise<void> {
  const list = await client.list("v1", "PersistentVolume", {
    labelSelector: `${LOCAL_VOLUME_NAMESPACE_LABEL}=${namespace}`,
  });
  for (const pv of list.items) {
    await client
      .delete({ apiVersion: "v1", kind: "PersistentVolume", name: pv.metadata?.name ?? "" })
      .catch(() => undefined);
    // Retried: a program that was writing into it until moments ago leaves ENOTEMPTY behind.
    rmSync(join(stateDir, "local-volumes", pv.metadata?.name ?? "-"), {
      recursive: true,
      force: true,
      maxRetries: 5,
      retryDelay: 200,
    });
  }
}

interface StatefulSetLike {
  kind: string;
  metadata: { name: string; namespace?: string | undefined };
  spec?: unknown;
}

/**
 * The claims a platform's StatefulSets make (`<template>-<set>-<ordinal>`), from its rendered
 * objects (`onto render`): pods whose node selector asks for `realSelector` are on `realNode`.
 */
export function claimsOfRendered(
  objects: readonly StatefulSetLike[],
  namespace: string,
  realSelector: Record<string, string>,
  realNode: string,
): LocalClaim[] {
  const claims: LocalClaim[] = [];
  for (const o of objects) {
    if (o.kind !== "StatefulSet") continue;
    const spec = o.spec as {
      replicas?: number;
      template: { spec: { nodeSelector?: Record<string, string> } };
      volumeClaimTemplates?: {
        metadata: { name: string };
        spec: { resources: { requests: { storage: string } } };
      }[];
    };
    const selector = spec.template.spec.nodeSelector ?? {};
    const real = Object.entries(realSelector).every(([k, v]) => selector[k] === v);
    for (const template of spec.volumeClaimTemplates ?? []) {
      for (let i = 0; i < (spec.replicas ?? 1); i++) {
        claims.push({
          namespace,
          name: `${template.metadata.name}-${o.metadata.name}-${i}`,
          storage: template.spec.resources.requests.storage,
          ...(real ? { realNode } : {}),
        });
      }
    }
  }
  return claims;
}
