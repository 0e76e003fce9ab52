// Metadata every rendered object carries: the common app.kubernetes.io labels and the owner
// reference that ties it to its OntoPlatform (garbage collection and the reconciler's watch).
import {
  COMPONENT_LABEL,
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NAME_LABEL,
  PART_OF,
  PART_OF_LABEL,
  PLATFORM_REF,
  VERSION_LABEL,
} from "../api/index.js";
import type { ObjectMeta, OwnerReference } from "./objects.js";
/** Pod-template label that separates a canary from the stable pods of the same component. */
export const TRACK_LABEL = "onto.paas/track";
/** Marks a StatefulSet's headless Service, so selectors of "the" Service can leave it out. */
export const HEADLESS_LABEL = "onto.paas/headless";
/** Pod-template annotation holding the checksum of the component's ConfigMap. */
export const CONFIG_CHECKSUM_ANNOTATION = "onto.paas/config-checksum";
/**
 * On a StatefulSet the operator updates itself (updateStrategy OnDelete, which has no partition
 * field): pods with an ordinal below it keep their revision, as below a RollingUpdate partition.
 * An upgrade's canary step sets it to replicas - 1.
 */
export const PARTITION_ANNOTATION = "onto.paas/partition";

export interface PlatformRef {
  name: string;
  namespace: string;
  uid: string;
}

/** Where an object belongs: the component it serves and that component's plane. */
export interface Owner {
  platform: PlatformRef;
  component: string;
  /** The plane label value, e.g. "infrastructure", "control-plane". */
  plane: string;
  version: string;
}

export function ownerReference(platform: PlatformRef): OwnerReference {
  return {
    ...PLATFORM_REF,
    name: platform.name,
    uid: platform.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The labels a Service or workload selects on: stable across versions and config changes. */
export function selectorLabels(platformName: string, component: string): Record<string, string> {
  return { [NAME_LABEL]: component, [INSTANCE_LABEL]: platformName };
}

export function commonLabels(owner: Owner): Record<string, string> {
  return {
    ...selectorLabels(owner.platform.name, owner.component),
    [COMPONENT_LABEL]: owner.plane,
    [PART_OF_LABEL]: PART_OF,
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [VERSION_LABEL]: owner.version,
  };
}

export function objectMeta(owner: Owner, name: string, annotations?: Record<string, string>): ObjectMeta {
  return {
    name,
    namespace: owner.platform.namespace,
    labels: commonLabels(owner),
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
    ownerReferences: [ownerReference(owner.platform)],
  };
}
