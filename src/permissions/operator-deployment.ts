// The operator's own workload, hardened: a Deployment that runs as a non-root user with a
// read-only root filesystem, no capabilities, no privilege escalation and the RuntimeDefault
// seccomp profile (Pod Security "restricted"), with limits, probes, two replicas under leader
// election spread across zones and nodes, a PodDisruptionBudget, and the metrics Service.
// The kustomize base (deploy/) is written from these; the Helm chart's templates are checked
// against them by test/cluster/install-chart.test.ts.

export const OPERATOR_NAME = "onto-operator";
export const OPERATOR_NAMESPACE = "onto-system";
export const OPERATOR_IMAGE = "ghcr.io/coomia/onto-operator:0.1.0";
export const METRICS_PORT = 8080;
export const HEALTH_PORT = 8081;
/** The fleet limit the install sets: at most this many platforms restart pods at once (0: no limit). */
export const MAX_RESTARTING_PLATFORMS = 0;
/** UID and GID of the image's non-root user (the distroless "nonroot" user). */
export const RUN_AS_USER = 65532;
/** Comma-separated namespaces the operator watches; unset or empty: all namespaces. */
export const WATCH_NAMESPACES_ENV = "WATCH_NAMESPACES";

export const OPERATOR_COMMAND = [
  "node",
  "dist/cli/main.js",
  "operator",
  "--leader-elect",
  "--metrics-port",
  String(METRICS_PORT),
  "--health-port",
  String(HEALTH_PORT),
  "--max-restarting-platforms",
  String(MAX_RESTARTING_PLATFORMS),
];

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  [field: string]: unknown;
}

/** Labels every install object carries. */
export function operatorLabels(): Record<string, string> {
  return {
    "app.kubernetes.io/name": OPERATOR_NAME,
    "app.kubernetes.io/component": "operator",
    "app.kubernetes.io/part-of": "coomia-dip",
  };
}

/** The labels that select the operator's pods (a subset of operatorLabels, never changed on upgrade). */
export function selectorLabels(): Record<string, string> {
  return { "app.kubernetes.io/name": OPERATOR_NAME, "app.kubernetes.io/component": "operator" };
}

function metadata(name: string, namespace?: string): Manifest["metadata"] {
  return namespace === undefined
    ? { name, labels: operatorLabels() }
    : { name, namespace, labels: operatorLabels() };
}

/** The operator's namespace, enforcing Pod Security "restricted" (the operator's pods pass it). */
export function operatorNamespace(namespace = OPERATOR_NAMESPACE): Manifest {
  const meta = metadata(namespace);
  for (const mode of ["enforce", "audit", "warn"]) {
    meta.labels[`pod-security.kubernetes.io/${mode}`] = "restricted";
    meta.labels[`pod-security.kubernetes.io/${mode}-version`] = "latest";
  }
  return { apiVersion: "v1", kind: "Namespace", metadata: meta };
}

export const CONTAINER_SECURITY_CONTEXT = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: RUN_AS_USER,
  runAsGroup: RUN_AS_USER,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

export const RESOURCES = {
  requests: { cpu: "100m", memory: "256Mi" },
  limits: { cpu: "1", memory: "512Mi" },
};

export interface DeploymentOptions {
  namespace?: string;
  image?: string;
  replicas?: number;
  serviceAccount?: string;
}

export function operatorDeployment(opts: DeploymentOptions = {}): Manifest {
  const namespace = opts.namespace ?? OPERATOR_NAMESPACE;
  const selector = selectorLabels();
  const spread = (topologyKey: string, whenUnsatisfiable: string) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable,
    labelSelector: { matchLabels: selector },
    // Only pods of the same ReplicaSet count, so a rollout is not blocked by the old pods.
    matchLabelKeys: ["pod-template-hash"],
  });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(OPERATOR_NAME, namespace),
    spec: {
      replicas: opts.replicas ?? 2,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector },
      // A standby is ready (see src/runtime/manager.ts), so surging one pod at a time keeps a
      // warm standby throughout a rollout.
      strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: {
          labels: operatorLabels(),
          annotations: { "kubectl.kubernetes.io/default-container": "operator" },
        },
        spec: {
          serviceAccountName: opts.serviceAccount ?? OPERATOR_NAME,
          automountServiceAccountToken: true,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUN_AS_USER,
            runAsGroup: RUN_AS_USER,
            seccompProfile: { type: "RuntimeDefault" },
          },
          topologySpreadConstraints: [
            spread("topology.kubernetes.io/zone", "ScheduleAnyway"),
            spread("kubernetes.io/hostname", "ScheduleAnyway"),
          ],
          containers: [
            {
              name: "operator",
              image: opts.image ?? OPERATOR_IMAGE,
              imagePullPolicy: "IfNotPresent",
              command: OPERATOR_COMMAND,
              env: [
                { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                // Keep V8's heap under the container's memory limit (512Mi) with room for buffers.
                { name: "NODE_OPTIONS", value: "--max-old-space-size=384" },
              ],
              ports: [
                { name: "metrics", containerPort: METRICS_PORT, protocol: "TCP" },
                { name: "health", containerPort: HEALTH_PORT, protocol: "TCP" },
              ],
              livenessProbe: {
                httpGet: { path: "/healthz", port: "health" },
                initialDelaySeconds: 15,
                periodSeconds: 20,
                timeoutSeconds: 5,
                failureThreshold: 3,
              },
              readinessProbe: {
                httpGet: { path: "/readyz", port: "health" },
                initialDelaySeconds: 5,
                periodSeconds: 10,
                timeoutSeconds: 5,
                failureThreshold: 3,
              },
              resources: RESOURCES,
              securityContext: CONTAINER_SECURITY_CONTEXT,
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          // The root filesystem is read-only; Node.js and its libraries may still want a scratch dir.
          volumes: [{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }],
        },
      },
    },
  };
}

/** Keeps one replica up through voluntary disruptions (node drains), so a leader or a warm standby remains. */
export function operatorPodDisruptionBudget(namespace = OPERATOR_NAMESPACE): Manifest {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: metadata(OPERATOR_NAME, namespace),
    spec: { minAvailable: 1, selector: { matchLabels: selectorLabels() } },
  };
}

/** The Service Prometheus scrapes (every replica: a standby reports leader_election_master_status 0). */
export function metricsService(namespace = OPERATOR_NAMESPACE): Manifest {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: metadata(`${OPERATOR_NAME}-metrics`, namespace),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(),
      ports: [{ name: "metrics", port: METRICS_PORT, targetPort: "metrics", protocol: "TCP" }],
    },
  };
}
