// Every component of a platform: where its settings live in the spec, the name of its
// Kubernetes objects, its plane, and how it runs. Render, status and upgrade code iterate over
// this one table instead of naming components themselves.
import type { ResolvedSpec } from "./schema.js";

/** Upgrade order of the planes (seed 3.2): infrastructure first, gateway last. */
export const PLANES = [
  "infrastructure",
  "controlPlane",
  "dataPlane",
  "intelligencePlane",
  "gateway",
] as const;
export type Plane = (typeof PLANES)[number];

export interface ComponentInfo {
  /** Kubernetes name of the component's workload, Service and related objects. */
  readonly name: string;
  readonly plane: Plane;
  /** Path of the component's settings in the spec, e.g. ["controlPlane", "ontologyService"]. */
  readonly specPath: readonly string[];
  readonly kind: "Deployment" | "StatefulSet";
  /** Speaks gRPC: gRPC health probes, and the grpc_requests_per_second autoscaling metric. */
  readonly grpc: boolean;
  /** Has spec.autoscaling (stateless services). */
  readonly autoscalable: boolean;
  /** Has spec.storage: one persistent volume per pod. */
  readonly stateful: boolean;
}

/** Every component, in upgrade order (plane order, then the order within the plane). */
export const COMPONENTS = [
  c("postgres", "infrastructure", ["infrastructure", "postgres"], "StatefulSet", false),
  c("redis", "infrastructure", ["infrastructure", "redis"], "StatefulSet", false),
  c("minio", "infrastructure", ["infrastructure", "minio"], "StatefulSet", false),
  c("kafka", "infrastructure", ["infrastructure", "kafka"], "StatefulSet", false),
  c("ontology-service", "controlPlane", ["controlPlane", "ontologyService"], "Deployment", true, true),
  c("schema-registry", "controlPlane", ["controlPlane", "schemaRegistry"], "Deployment", false, true),
  c("auth-service", "controlPlane", ["controlPlane", "authService"], "Deployment", true, true),
  c("data-service", "dataPlane", ["dataPlane", "dataService"], "Deployment", true, true),
  c("nessie", "dataPlane", ["dataPlane", "nessie"], "StatefulSet", false),
  c(
    "reasoning-service",
    "intelligencePlane",
    ["intelligencePlane", "reasoningService"],
    "Deployment",
    true,
    true,
  ),
  c("agent-runtime", "intelligencePlane", ["intelligencePlane", "agentRuntime"], "Deployment", true, true),
  c("temporal", "intelligencePlane", ["intelligencePlane", "agentRuntime", "temporal"], "Deployment", true),
  c("gateway", "gateway", ["gateway"], "Deployment", false, true),
] as const satisfies readonly ComponentInfo[];

export type ComponentName = (typeof COMPONENTS)[number]["name"];

function c<N extends string>(
  name: N,
  plane: Plane,
  specPath: readonly string[],
  kind: "Deployment" | "StatefulSet",
  grpc: boolean,
  autoscalable = false,
) {
  return { name, plane, specPath, kind, grpc, autoscalable, stateful: kind === "StatefulSet" } as const;
}

/** The settings every component has, as resolved. */
export interface ResolvedComponent {
  replicas: number;
  resources: ResolvedSpec["controlPlane"]["ontologyService"]["resources"];
  /** Present on stateful components. */
  storage?: string;
  /** Present on autoscalable components. */
  autoscaling?: ResolvedSpec["controlPlane"]["ontologyService"]["autoscaling"];
  /** The component's own node pool, when the spec sets one (merged over global.nodePool). */
  nodePool?: ResolvedSpec["global"]["nodePool"];
  /** Present on every component but temporal (which is rendered with the default, Recommend). */
  verticalScaling?: ResolvedSpec["controlPlane"]["ontologyService"]["verticalScaling"];
}

/** The resolved settings of `component` in `spec`. */
export function componentSpec(spec: ResolvedSpec, component: ComponentInfo): ResolvedComponent {
  let node: unknown = spec;
  for (const key of component.specPath) node = (node as Record<string, unknown>)[key];
  // The table's paths are checked against the schema by components.test.ts.
  return node as ResolvedComponent;
}

/** Whether `spec` runs `component` (temporal only when agentRuntime.temporal.enabled). */
export function isEnabled(spec: ResolvedSpec, component: ComponentInfo): boolean {
  if (component.name === "temporal") return spec.intelligencePlane.agentRuntime.temporal.enabled;
  return true;
}

/** The components `spec` runs, in upgrade order. */
export function enabledComponents(spec: ResolvedSpec): ComponentInfo[] {
  return COMPONENTS.filter((component) => isEnabled(spec, component));
}

export function componentByName(name: string): ComponentInfo | undefined {
  return COMPONENTS.find((component) => component.name === name);
}
