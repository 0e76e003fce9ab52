// The one workload builder every component goes through: Deployment or StatefulSet with its
// Service(s), ServiceAccount, ConfigMap (its checksum on the pod template, but for files the program
// reloads while it runs), HPA, PDB, anti-affinity, zone spread, restricted pod security and the node
// pool. Families describe what differs (containers, ports, storage); everything a production
// cluster expects of every pod lives here once.
import { VERSION_LABEL } from "../api/index.js";
import { checksumOf } from "./checksum.js";
import {
  CONFIG_CHECKSUM_ANNOTATION,
  HEADLESS_LABEL,
  PARTITION_ANNOTATION,
  TRACK_LABEL,
  commonLabels,
  objectMeta,
  selectorLabels,
  type Owner,
} from "./meta.js";
import type { Container, RenderedObject, Toleration, Volume } from "./objects.js";
import { TEMPLATE_REVISION, TEMPLATE_REVISION_ANNOTATION } from "./template-changes.js";

/** On the workload, not its pod template: which render revision made the template (no restart). */
const REVISION = { [TEMPLATE_REVISION_ANNOTATION]: String(TEMPLATE_REVISION) };

/** Cluster-wide placement and pull settings (spec.global), applied to every pod. */
export interface PodPlacement {
  imagePullPolicy: string;
  imagePullSecrets: string[];
  storageClass?: string | undefined;
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
}

export interface ScalingRule {
  pods: number;
  periodSeconds: number;
  stabilizationWindowSeconds: number;
}

export interface Autoscaling {
  minReplicas: number;
  maxReplicas: number;
  targetCPUUtilization: number;
  /** Seed 4.1's rates by default (spec autoscaling.behavior). */
  behavior: { scaleUp: ScalingRule; scaleDown: ScalingRule };
}

export interface PodParts {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  /** The image's non-root user; fsGroup makes mounted volumes writable for it. */
  runAsUser: number;
  fsGroup?: number;
  /** Added to the node pool's tolerations (e.g. the GPU taint). */
  tolerations?: Toleration[];
  terminationGracePeriodSeconds?: number;
}

export interface ServicePort {
  name: string;
  port: number;
  /** "grpc" ports get appProtocol grpc so meshes and ingress controllers speak HTTP/2. */
  appProtocol?: string;
}

export interface WorkloadInput {
  owner: Owner;
  kind: "Deployment" | "StatefulSet";
  replicas: number;
  /** Present only when autoscaling is on: the HPA then owns `replicas`. */
  autoscaling?: Autoscaling | undefined;
  /**
   * gRPC services scale on grpc_requests_per_second as well as CPU (seed 4.1), where the cluster
   * serves custom metrics.
   */
  grpc: boolean;
  image: string;
  /** Builds the pod for an image, so a canary is the same pod with the new image. */
  pod: (image: string) => PodParts;
  ports: ServicePort[];
  /** Extra selector terms for the main Service only (e.g. Postgres read-write -> the primary). */
  serviceSelector?: Record<string, string>;
  /** The main Service routes to pods that are not Ready too (its selector alone decides). */
  publishNotReadyAddresses?: boolean;
  /** ConfigMap `<name>-config`; its checksum goes on the pod template. */
  config?: Record<string, string>;
  /**
   * More keys of the same ConfigMap, left out of the checksum: files the program reads again
   * while it runs (the kubelet updates a ConfigMap volume mounted without subPath in place), so a
   * change of them alone restarts no pod. The component must apply them itself (or be told to).
   */
  reloadableConfig?: Record<string, string>;
  /** StatefulSet only: one PersistentVolumeClaim template per entry. */
  volumeClaims?: { name: string; storage: string }[];
  /** StatefulSet only: whether its volumes go when it is deleted (spec.retentionPolicy); default Retain. */
  volumeRetention?: "Retain" | "Delete";
  podManagementPolicy?: "OrderedReady" | "Parallel";
  /** Upgrade: StatefulSet pods with an ordinal below this keep the old revision. */
  partition?: number;
  /**
   * StatefulSet only: the operator replaces its pods itself, one at a time in an order of its own
   * (updateStrategy OnDelete; the partition is then the PARTITION_ANNOTATION).
   */
  updatedByOperator?: boolean;
  /** Upgrade: a one-replica `<name>-canary` Deployment running a new image beside the stable one. */
  canary?: { image: string; version: string } | undefined;
  /**
   * Deployments: replace pods one at a time without a surge pod, for pods holding a scarce
   * resource (GPUs) where an extra pod would wait for a device no node has free.
   */
  noSurge?: boolean;
  /** Port name a ServiceMonitor scrapes, when the component exposes Prometheus metrics. */
  metricsPort?: string;
  metricsPath?: string;
  metricsTls?: MetricsTls;
}

/** The metrics port speaks TLS with the platform certificate: scrape it verifying against its CA. */
export interface MetricsTls {
  secretName: string;
  serverName: string;
}

/** What the observability family needs to know about a rendered workload. */
export interface WorkloadSummary {
  owner: Owner;
  kind: "Deployment" | "StatefulSet";
  name: string;
  /** An HPA scales it on CPU: a VerticalPodAutoscaler may then act on memory only. */
  horizontal: boolean;
  metricsPort?: string;
  metricsPath?: string;
  metricsTls?: MetricsTls;
}

/** Everything rendered for one component, and the summary of its workload. */
export interface ComponentObjects {
  objects: RenderedObject[];
  workload: WorkloadSummary;
}

export const configMapName = (component: string): string => `${component}-config`;
export const headlessServiceName = (component: string): string => `${component}-headless`;
export const canaryName = (component: string): string => `${component}-canary`;

const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  runAsNonRoot: true,
};

// The seed's scaling behaviour (section 4.1): add up to 2 pods a minute, remove 1 every 2 minutes.
function hpaRule(rule: ScalingRule): Record<string, unknown> {
  return {
    stabilizationWindowSeconds: rule.stabilizationWindowSeconds,
    policies: [{ type: "Pods", value: rule.pods, periodSeconds: rule.periodSeconds }],
  };
}
export const GRPC_RPS_METRIC = "grpc_requests_per_second";
const GRPC_RPS_TARGET = "1000";

function hardenContainer(c: Container, placement: PodPlacement, owner: Owner): Container {
  const { requests, limits } = c.resources;
  if (!requests.cpu || !requests.memory || !limits.cpu || !limits.memory) {
    // A programming error in a family, not bad user input: tenant quotas refuse such pods.
    throw new Error(`render: container ${owner.component}/${c.name} lacks cpu/memory requests or limits`);
  }
  // Families may add settings (a read-only root filesystem); the restricted ones always win.
  return {
    ...c,
    imagePullPolicy: placement.imagePullPolicy,
    securityContext: { ...c.securityContext, ...RESTRICTED_CONTAINER },
    // The programs write no termination log: on an error exit the kubelet keeps the end of the
    // container's log as its termination message instead, which the crash-loop diagnosis quotes.
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
}

/**
 * Whether the kubelet runs commands in the container to probe it. When such a probe times out, the
 * runtime kills the command's shell but not what the shell started (psql, redis-cli); that orphan
 * is handed to process 1 of the PID namespace. In a container of its own that is the server itself:
 * a Postgres postmaster that reaps a child it does not know, exited with a code other than 0 or 1
 * (psql ends with 2, or with SIGPIPE once the shell that read its output is gone), takes it for a
 * crashed backend, ends every session and runs crash recovery. So such pods share one PID
 * namespace, whose process 1 is the sandbox's pause program, which reaps orphans and nothing more.
 */
function runsExecProbes(c: Container): boolean {
  return [c.startupProbe, c.readinessProbe, c.livenessProbe].some((p) => p?.exec !== undefined);
}

/**
 * A pod spec every platform pod shares, workload or Job: restricted Pod Security (non-root,
 * seccomp RuntimeDefault, no privilege escalation, no capabilities), the node pool, pull settings,
 * no API token (no platform pod talks to the API server).
 */
export function hardenedPodSpec(
  parts: PodParts,
  placement: PodPlacement,
  owner: Owner,
  serviceAccountName: string,
): Record<string, unknown> {
  const tolerations = [...placement.tolerations, ...(parts.tolerations ?? [])];
  return {
    serviceAccountName,
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    ...(parts.containers.some(runsExecProbes) ? { shareProcessNamespace: true } : {}),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: parts.runAsUser,
      runAsGroup: parts.fsGroup ?? parts.runAsUser,
      // The kubelet re-owns a volume only when its root does not match (a new volume), not on
      // every mount: large volumes start fast, and files a program made private stay private.
      ...(parts.fsGroup !== undefined
        ? { fsGroup: parts.fsGroup, fsGroupChangePolicy: "OnRootMismatch" }
        : {}),
      seccompProfile: { type: "RuntimeDefault" },
    },
    ...(placement.imagePullSecrets.length > 0
      ? { imagePullSecrets: placement.imagePullSecrets.map((name) => ({ name })) }
      : {}),
    ...(parts.terminationGracePeriodSeconds !== undefined
      ? { terminationGracePeriodSeconds: parts.terminationGracePeriodSeconds }
      : {}),
    ...(parts.initContainers
      ? { initContainers: parts.initContainers.map((c) => hardenContainer(c, placement, owner)) }
      : {}),
    containers: parts.containers.map((c) => hardenContainer(c, placement, owner)),
    ...(parts.volumes ? { volumes: parts.volumes } : {}),
    ...(Object.keys(placement.nodeSelector).length > 0 ? { nodeSelector: placement.nodeSelector } : {}),
    ...(tolerations.length > 0 ? { tolerations } : {}),
  };
}

function podTemplate(
  input: WorkloadInput,
  placement: PodPlacement,
  image: string,
  track: "stable" | "canary",
): Record<string, unknown> {
  const selector = selectorLabels(input.owner.platform.name, input.owner.component);
  const annotations: Record<string, string> = {};
  if (input.config) annotations[CONFIG_CHECKSUM_ANNOTATION] = checksumOf(input.config);
  // No version label on pods: a platform version that keeps a component's image (a patch release
  // that only moves other components) must not restart it; the workload carries the version.
  const { [VERSION_LABEL]: _version, ...labels } = commonLabels(input.owner);
  return {
    metadata: {
      labels: { ...labels, [TRACK_LABEL]: track },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: {
      ...hardenedPodSpec(input.pod(image), placement, input.owner, input.owner.component),
      // Spread replicas over nodes and zones (seed 8.1); preferred, so a small cluster still schedules.
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                topologyKey: "kubernetes.io/hostname",
                labelSelector: { matchLabels: selector },
              },
            },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "topology.kubernetes.io/zone",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: selector },
        },
      ],
    },
  };
}

function volumeClaimTemplates(input: WorkloadInput, placement: PodPlacement): Record<string, unknown>[] {
  // Claim templates are immutable: only labels that never change (no version) go on them.
  const { [VERSION_LABEL]: _version, ...stableLabels } = commonLabels(input.owner);
  return (input.volumeClaims ?? []).map((claim) => ({
    metadata: { name: claim.name, labels: stableLabels },
    spec: {
      accessModes: ["ReadWriteOnce"],
      ...(placement.storageClass ? { storageClassName: placement.storageClass } : {}),
      resources: { requests: { storage: claim.storage } },
    },
  }));
}

function workloadObject(input: WorkloadInput, placement: PodPlacement): RenderedObject {
  const { owner } = input;
  const name = owner.component;
  const selector = { ...selectorLabels(owner.platform.name, name), [TRACK_LABEL]: "stable" };
  const replicas = input.autoscaling ? {} : { replicas: input.replicas };
  const template = podTemplate(input, placement, input.image, "stable");
  if (input.kind === "Deployment") {
    return {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: objectMeta(owner, name, { ...REVISION }),
      spec: {
        ...replicas,
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        strategy: {
          type: "RollingUpdate",
          rollingUpdate: input.noSurge
            ? { maxSurge: 0, maxUnavailable: 1 }
            : { maxSurge: 1, maxUnavailable: 0 },
        },
        template,
      },
    };
  }
  const partition = input.partition ?? 0;
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: objectMeta(owner, name, {
      ...REVISION,
      ...(input.updatedByOperator && partition > 0 ? { [PARTITION_ANNOTATION]: String(partition) } : {}),
    }),
    spec: {
      ...replicas,
      revisionHistoryLimit: 5,
      serviceName: headlessServiceName(name),
      podManagementPolicy: input.podManagementPolicy ?? "OrderedReady",
      selector: { matchLabels: selector },
      updateStrategy: input.updatedByOperator
        ? { type: "OnDelete" }
        : { type: "RollingUpdate", rollingUpdate: { partition } },
      // The StatefulSet controller deletes the claims when the StatefulSet goes (with the platform,
      // or when the component is removed) only under retention Delete; scaling down never does.
      persistentVolumeClaimRetentionPolicy: {
        whenDeleted: input.volumeRetention ?? "Retain",
        whenScaled: "Retain",
      },
      template,
      ...(input.volumeClaims ? { volumeClaimTemplates: volumeClaimTemplates(input, placement) } : {}),
    },
  };
}

function canaryObject(
  input: WorkloadInput,
  placement: PodPlacement,
  canary: { image: string; version: string },
): RenderedObject {
  const { owner } = input;
  const selector = { ...selectorLabels(owner.platform.name, owner.component), [TRACK_LABEL]: "canary" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: objectMeta({ ...owner, version: canary.version }, canaryName(owner.component)),
    spec: {
      replicas: 1,
      revisionHistoryLimit: 1,
      selector: { matchLabels: selector },
      template: podTemplate(input, placement, canary.image, "canary"),
    },
  };
}

function services(input: WorkloadInput): RenderedObject[] {
  const { owner } = input;
  const selector = selectorLabels(owner.platform.name, owner.component);
  const ports = input.ports.map((p) => ({
    name: p.name,
    port: p.port,
    targetPort: p.name,
    protocol: "TCP",
    ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
  }));
  const main: RenderedObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: objectMeta(owner, owner.component),
    spec: {
      type: "ClusterIP",
      selector: { ...selector, ...input.serviceSelector },
      ports,
      ...(input.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
    },
  };
  if (input.kind !== "StatefulSet") return [main];
  // Stable per-pod DNS names for peers (quorum members find each other before they are Ready).
  const headlessMeta = objectMeta(owner, headlessServiceName(owner.component));
  headlessMeta.labels[HEADLESS_LABEL] = "true";
  const headless: RenderedObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: headlessMeta,
    spec: { clusterIP: "None", publishNotReadyAddresses: true, selector, ports },
  };
  return [main, headless];
}

function horizontalPodAutoscaler(input: WorkloadInput, autoscaling: Autoscaling): RenderedObject {
  const { owner } = input;
  const metrics: Record<string, unknown>[] = [
    {
      type: "Resource",
      resource: {
        name: "cpu",
        target: { type: "Utilization", averageUtilization: autoscaling.targetCPUUtilization },
      },
    },
  ];
  if (input.grpc) {
    metrics.push({
      type: "Pods",
      pods: {
        metric: { name: GRPC_RPS_METRIC },
        target: { type: "AverageValue", averageValue: GRPC_RPS_TARGET },
      },
    });
  }
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: objectMeta(owner, owner.component),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: input.kind, name: owner.component },
      minReplicas: autoscaling.minReplicas,
      maxReplicas: autoscaling.maxReplicas,
      metrics,
      behavior: {
        scaleUp: hpaRule(autoscaling.behavior.scaleUp),
        scaleDown: hpaRule(autoscaling.behavior.scaleDown),
      },
    },
  };
}

function podDisruptionBudget(input: WorkloadInput): RenderedObject {
  const { owner } = input;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: objectMeta(owner, owner.component),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(owner.platform.name, owner.component) },
    },
  };
}

/**
 * Every object of one component, in apply order: identity and configuration first, then the
 * Services, the workload(s), and what acts on them (HPA, PDB).
 */
export function buildWorkload(input: WorkloadInput, placement: PodPlacement): ComponentObjects {
  const { owner } = input;
  if (input.canary && input.kind !== "Deployment") {
    throw new Error(`render: ${owner.component} is a StatefulSet; upgrade it with a partition, not a canary`);
  }
  const objects: RenderedObject[] = [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: objectMeta(owner, owner.component),
      automountServiceAccountToken: false,
    },
  ];
  if (input.config || input.reloadableConfig) {
    objects.push({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: objectMeta(owner, configMapName(owner.component)),
      data: { ...input.config, ...input.reloadableConfig },
    });
  }
  objects.push(...services(input), workloadObject(input, placement));
  if (input.canary) objects.push(canaryObject(input, placement, input.canary));
  if (input.autoscaling) objects.push(horizontalPodAutoscaler(input, input.autoscaling));
  // A budget only means something with more than one pod; with one it would block every drain.
  const floor = input.autoscaling ? input.autoscaling.minReplicas : input.replicas;
  if (floor >= 2) objects.push(podDisruptionBudget(input));
  return {
    objects,
    workload: {
      owner,
      kind: input.kind,
      name: owner.component,
      horizontal: input.autoscaling !== undefined,
      ...(input.metricsPort ? { metricsPort: input.metricsPort } : {}),
      ...(input.metricsPath ? { metricsPath: input.metricsPath } : {}),
      ...(input.metricsTls ? { metricsTls: input.metricsTls } : {}),
    },
  };
}
