// The plain shapes render produces. render/ may not import the API client (it stays pure and
// cheap to test), so these are the few Kubernetes fields it writes, typed just enough for the
// compiler to catch a misspelt key in the parts we build often.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  /** Absent only on objects that must outlive the platform (retained generated Secrets). */
  ownerReferences?: OwnerReference[];
}

/** One desired object, ready for server-side apply. */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ResourceList {
  cpu?: string;
  memory?: string;
  [resource: string]: string | undefined;
}

export interface ResourceRequirements {
  requests: ResourceList;
  limits: ResourceList;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface Probe {
  grpc?: { port: number; service?: string };
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

export interface ContainerPort {
  name: string;
  containerPort: number;
  protocol?: "TCP" | "UDP";
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: Record<string, unknown>[];
  ports?: ContainerPort[];
  resources: ResourceRequirements;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  /** Run by the kubelet before it stops the container on a pod's deletion (not on a kill). */
  lifecycle?: { preStop?: { exec: { command: string[] } } };
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
  securityContext?: Record<string, unknown>;
  terminationMessagePolicy?: "File" | "FallbackToLogsOnError";
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: "Exists" | "Equal";
  value?: string;
  effect?: string;
}
