// The few fields of Pods, Nodes and workloads the controllers read, typed once. The caches hold
// whole objects; these views name what the decisions depend on, nothing more.
import type { KubeObject } from "../../kube/index.js";
import { PARTITION_ANNOTATION } from "../../render/index.js";

/** StatefulSet pods carry the revision they were created from in this label. */
export const REVISION_LABEL = "controller-revision-hash";

export interface ContainerTermination {
  exitCode?: number;
  reason?: string;
  message?: string;
  finishedAt?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: ContainerTermination;
}

export interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface EnvVarView {
  name: string;
  valueFrom?: {
    secretKeyRef?: { name?: string; key?: string; optional?: boolean };
    configMapKeyRef?: { name?: string; key?: string; optional?: boolean };
  };
}

export interface ContainerView {
  name: string;
  image?: string;
  env?: EnvVarView[];
  envFrom?: {
    configMapRef?: { name?: string; optional?: boolean };
    secretRef?: { name?: string; optional?: boolean };
  }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

export interface VolumeView {
  name: string;
  secret?: { secretName?: string; optional?: boolean };
  configMap?: { name?: string; optional?: boolean };
  projected?: {
    sources?: {
      secret?: { name?: string; optional?: boolean };
      configMap?: { name?: string; optional?: boolean };
    }[];
  };
}

export interface PodCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export type PodView = KubeObject & {
  spec?: {
    nodeName?: string;
    containers?: ContainerView[];
    initContainers?: ContainerView[];
    volumes?: VolumeView[];
  };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: PodCondition[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
};

export interface NodeCondition {
  type: string;
  status: string;
  lastHeartbeatTime?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export type NodeView = KubeObject & {
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: { conditions?: NodeCondition[] };
};

/** The status fields of a Deployment or StatefulSet the operator reads. */
export interface WorkloadStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  conditions?: { type: string; status: string; reason?: string }[];
}

export interface StatefulSetUpdateStrategy {
  type?: string;
  rollingUpdate?: { partition?: number };
}

/** What a StatefulSet's update state is read from. */
export interface StatefulSetUpdateView {
  metadata?: { annotations?: Record<string, string> } | undefined;
  spec?: { replicas?: number; updateStrategy?: StatefulSetUpdateStrategy } | undefined;
  status?: WorkloadStatus | undefined;
}

/** The operator replaces the StatefulSet's pods itself (updateStrategy OnDelete). */
export function updatedByOperator(sts: StatefulSetUpdateView): boolean {
  return sts.spec?.updateStrategy?.type === "OnDelete";
}

/**
 * Pods with an ordinal below this keep their revision: the RollingUpdate partition, or the
 * operator's partition annotation where it replaces the pods itself (OnDelete has no partition).
 */
export function statefulSetPartition(sts: StatefulSetUpdateView): number {
  if (!updatedByOperator(sts)) return sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  const annotated = Number(sts.metadata?.annotations?.[PARTITION_ANNOTATION] ?? 0);
  return Number.isInteger(annotated) && annotated > 0 ? annotated : 0;
}

/**
 * Every pod of the StatefulSet is on its update revision, as its controller counts them. Under
 * RollingUpdate the controller moves currentRevision to updateRevision once every pod is updated
 * and Ready; under OnDelete it never does (Kubernetes completes only a RollingUpdate), so there the
 * count of pods on the update revision decides.
 */
export function statefulSetOnUpdateRevision(sts: StatefulSetUpdateView): boolean {
  const s = sts.status;
  if (!s?.updateRevision) return s?.currentRevision === undefined;
  if (!updatedByOperator(sts)) return s.currentRevision === s.updateRevision;
  const desired = sts.spec?.replicas ?? 1;
  return (s.updatedReplicas ?? 0) >= desired && (s.replicas ?? 0) <= desired;
}

/** A Deployment or StatefulSet as the caches hold it. */
export type WorkloadView = KubeObject & {
  spec?: {
    replicas?: number;
    updateStrategy?: StatefulSetUpdateStrategy;
    template?: { spec?: { containers?: ContainerView[] } };
  };
  status?: WorkloadStatus;
};

/** The pod's controlling owner kind (ReplicaSet, StatefulSet, Job ...), if any. */
export function controllerKind(pod: KubeObject): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller)?.kind;
}

/** Deleted, waiting for its finalizers or its kubelet. */
export function isTerminating(obj: KubeObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}

/** What a pod's conditions are read from (a PodView, or another client's Pod type). */
export interface WithConditions<C extends { type: string; status: string }> {
  status?: { conditions?: readonly C[] | undefined } | undefined;
}

export function podCondition<C extends { type: string; status: string }>(
  pod: WithConditions<C>,
  type: string,
): C | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** The pod's Ready condition is True. */
export function isPodReady(pod: WithConditions<{ type: string; status: string }>): boolean {
  return podCondition(pod, "Ready")?.status === "True";
}

/**
 * The workload's controller is replacing (or starting) pods: it has not seen the latest spec yet,
 * pods of an older template remain, or (a Deployment) its Progressing condition does not yet say
 * the newest ReplicaSet is available, which covers the pods a no-surge rollout has just replaced
 * and are not ready yet. A StatefulSet's pods are all replaced once they are all on its update
 * revision (statefulSetOnUpdateRevision). A pod that turns unready after a rollout completed does not
 * count: that is a fault, not a restart. This is the one fact behind status.disruption.restarting
 * and the fleet limit.
 */
export function replacingPods(workload: WorkloadView): boolean {
  const s = workload.status;
  if (!s) return false;
  if ((s.observedGeneration ?? 0) < (workload.metadata?.generation ?? 0)) return true;
  const desired = workload.spec?.replicas ?? 1;
  if ((s.updatedReplicas ?? 0) < desired) return true;
  if (workload.kind === "StatefulSet")
    return s.updateRevision !== undefined && !statefulSetOnUpdateRevision(workload);
  if ((s.replicas ?? 0) > (s.updatedReplicas ?? 0)) return true;
  const progressing = s.conditions?.find((c) => c.type === "Progressing");
  return progressing !== undefined && progressing.reason !== "NewReplicaSetAvailable";
}
