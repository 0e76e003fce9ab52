// The kinds render can produce, and the optional APIs a cluster may not serve (some of those
// kinds, and the custom metrics API): the one table the reconciler prunes and watches by, the RBAC
// rules grant by, discovery asks about, and `onto render --api-versions` maps its flags through.
import type { Capabilities } from "./input.js";

/** A kind render can produce: the reconciler prunes by kind, the RBAC generator grants by it. */
export interface ManagedKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  /**
   * When it is applied in a reconcile pass: every object of one wave is sent together, a wave only
   * once the one before has been answered. 0: the tenant's guard rails, which must exist before
   * the pods they govern are admitted; 1: what pods use (credentials, identity, configuration,
   * addresses); 2: the workloads; 3: what acts on workloads (autoscalers, budgets, ingress,
   * monitoring).
   */
  wave: 0 | 1 | 2 | 3;
  /** An optional API: rendered, pruned and watched only when the cluster serves it (discovery). */
  capability?: keyof Capabilities;
}

export const MANAGED_KINDS: readonly ManagedKind[] = [
  { group: "", version: "v1", kind: "ResourceQuota", plural: "resourcequotas", wave: 0 },
  { group: "", version: "v1", kind: "LimitRange", plural: "limitranges", wave: 0 },
  { group: "networking.k8s.io", version: "v1", kind: "NetworkPolicy", plural: "networkpolicies", wave: 0 },
  { group: "", version: "v1", kind: "Secret", plural: "secrets", wave: 1 },
  {
    group: "cert-manager.io",
    version: "v1",
    kind: "Certificate",
    plural: "certificates",
    wave: 1,
    capability: "certManager",
  },
  { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", wave: 1 },
  { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", wave: 1 },
  { group: "", version: "v1", kind: "Service", plural: "services", wave: 1 },
  { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", wave: 2 },
  { group: "apps", version: "v1", kind: "StatefulSet", plural: "statefulsets", wave: 2 },
  { group: "batch", version: "v1", kind: "Job", plural: "jobs", wave: 2 },
  {
    group: "autoscaling",
    version: "v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    wave: 3,
  },
  { group: "policy", version: "v1", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", wave: 3 },
  { group: "networking.k8s.io", version: "v1", kind: "Ingress", plural: "ingresses", wave: 3 },
  {
    group: "monitoring.coreos.com",
    version: "v1",
    kind: "ServiceMonitor",
    plural: "servicemonitors",
    wave: 3,
    capability: "serviceMonitor",
  },
  {
    group: "autoscaling.k8s.io",
    version: "v1",
    kind: "VerticalPodAutoscaler",
    plural: "verticalpodautoscalers",
    wave: 3,
    capability: "verticalPodAutoscaler",
  },
];

export function apiVersionOf(kind: Pick<ManagedKind, "group" | "version">): string {
  return kind.group ? `${kind.group}/${kind.version}` : kind.version;
}

/** The optional kinds, each with the capability that says whether the cluster serves it. */
export const OPTIONAL_KINDS = MANAGED_KINDS.filter(
  (k): k is ManagedKind & { capability: keyof Capabilities } => k.capability !== undefined,
);

/** The wave `kind` is applied in (see ManagedKind.wave); a kind render does not produce goes last. */
export function applyWave(kind: string | undefined): number {
  return MANAGED_KINDS.find((k) => k.kind === kind)?.wave ?? 4;
}

/** The managed kinds a cluster with `capabilities` serves (optional ones only when discovered). */
export function servedKinds(capabilities: Capabilities): ManagedKind[] {
  return MANAGED_KINDS.filter((k) => k.capability === undefined || capabilities[k.capability]);
}

/** An API the cluster may not serve: a kind, or a whole group version (an aggregated API). */
export interface OptionalApi {
  capability: keyof Capabilities;
  apiVersion: string;
  /** Absent: the group version itself is what matters (custom.metrics.k8s.io has no kind to look for). */
  kind?: string;
}

/** Every optional API: the optional kinds, and the custom metrics API an HPA's Pods metric needs. */
export const OPTIONAL_APIS: readonly OptionalApi[] = [
  ...OPTIONAL_KINDS.map((k) => ({ capability: k.capability, apiVersion: apiVersionOf(k), kind: k.kind })),
  { capability: "customMetrics", apiVersion: "custom.metrics.k8s.io/v1beta2" },
];

/** The optional API that sets `capability`. */
export function optionalApi(capability: keyof Capabilities): OptionalApi {
  const api = OPTIONAL_APIS.find((a) => a.capability === capability);
  if (!api) throw new Error(`no optional API sets ${capability}`);
  return api;
}

/** Capabilities from a question the caller answers per optional API (discovery, a flag list). */
export function capabilitiesFrom(serves: (api: OptionalApi) => boolean): Capabilities {
  const found: Capabilities = { serviceMonitor: false, verticalPodAutoscaler: false, customMetrics: false };
  for (const api of OPTIONAL_APIS) found[api.capability] = serves(api);
  return found;
}
