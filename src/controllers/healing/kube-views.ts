// The few fields of Pods and Nodes the healer reads, typed once. The caches hold whole objects;
// these views name what the decisions depend on, nothing more.
import type { KubeObject } from "../../kube/index.js";

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
    conditions?: { type: string; status: string }[];
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

export type WorkloadView = KubeObject & {
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: ContainerView[] } };
  };
  status?: { readyReplicas?: number; replicas?: number; updateRevision?: string };
};

/** The pod's controlling owner kind (ReplicaSet, StatefulSet, Job ...), if any. */
export function controllerKind(pod: KubeObject): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller)?.kind;
}

export function isTerminating(obj: KubeObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}
