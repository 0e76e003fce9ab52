// Observability objects the cluster can act on: a ServiceMonitor per component exposing
// Prometheus metrics when the Prometheus Operator is installed (monitoring.coreos.com/v1 served)
// and the spec asks for it, and a VerticalPodAutoscaler per workload whose verticalScaling.mode is
// not Off when the VPA is installed (the seed pairs HPA with VPA). The VPA's own updater never acts
// (updateMode Off): the operator applies a recommendation itself, through a normal rolling update
// (mode Apply). A workload an HPA scales on CPU gets a VPA for memory only, so the two never both
// act on CPU.
import { componentByName, componentSpec, type ResolvedSpec } from "../api/index.js";
import type { RenderContext } from "./context.js";
import type { Capabilities } from "./input.js";
import { HEADLESS_LABEL, objectMeta, selectorLabels } from "./meta.js";
import type { RenderedObject } from "./objects.js";
import { TLS_KEYS } from "./tls.js";
import type { WorkloadSummary } from "./workload.js";

function serviceMonitor(ctx: RenderContext, w: WorkloadSummary): RenderedObject {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "ServiceMonitor",
    metadata: objectMeta(w.owner, w.name),
    spec: {
      // Only the main Service: a StatefulSet's headless Service has the same pods.
      selector: {
        matchLabels: selectorLabels(ctx.platform.name, w.name),
        matchExpressions: [{ key: HEADLESS_LABEL, operator: "DoesNotExist" }],
      },
      namespaceSelector: { matchNames: [ctx.platform.namespace] },
      endpoints: [
        {
          port: w.metricsPort,
          path: w.metricsPath ?? "/metrics",
          interval: "30s",
          ...(w.metricsTls
            ? {
                scheme: "https",
                tlsConfig: {
                  ca: { secret: { name: w.metricsTls.secretName, key: TLS_KEYS.ca } },
                  serverName: w.metricsTls.serverName,
                },
              }
            : {}),
        },
      ],
    },
  };
}

/** Resources the VPA of a workload recommends: memory only where an HPA scales on CPU. */
export function verticalResources(horizontal: boolean): string[] {
  return horizontal ? ["memory"] : ["cpu", "memory"];
}

function verticalPodAutoscaler(ctx: RenderContext, w: WorkloadSummary): RenderedObject | undefined {
  const component = componentByName(w.name);
  const settings = component ? componentSpec(ctx.spec, component).verticalScaling : undefined;
  if (settings?.mode === "Off") return undefined;
  const bound = (b: { cpu?: string | undefined; memory?: string | undefined } | undefined) =>
    b ? Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) : undefined;
  const minAllowed = bound(settings?.minAllowed);
  const maxAllowed = bound(settings?.maxAllowed);
  return {
    apiVersion: "autoscaling.k8s.io/v1",
    kind: "VerticalPodAutoscaler",
    metadata: objectMeta(w.owner, w.name),
    spec: {
      targetRef: { apiVersion: "apps/v1", kind: w.kind, name: w.name },
      updatePolicy: { updateMode: "Off" },
      resourcePolicy: {
        containerPolicies: [
          {
            // The main container is named after the component; helpers are sized by the render.
            containerName: w.name,
            controlledResources: verticalResources(w.horizontal),
            controlledValues: "RequestsOnly",
            ...(minAllowed && Object.keys(minAllowed).length > 0 ? { minAllowed } : {}),
            ...(maxAllowed && Object.keys(maxAllowed).length > 0 ? { maxAllowed } : {}),
          },
          { containerName: "*", mode: "Off" },
        ],
      },
    },
  };
}

/** True when ServiceMonitors are wanted but the cluster cannot take them (for a status condition). */
export function metricsNotScraped(spec: ResolvedSpec, capabilities: Capabilities): boolean {
  const { metrics } = spec.observability;
  return metrics.enabled && metrics.serviceMonitor && !capabilities.serviceMonitor;
}

export function renderObservability(
  ctx: RenderContext,
  workloads: readonly WorkloadSummary[],
): RenderedObject[] {
  const { metrics } = ctx.spec.observability;
  const objects: RenderedObject[] = [];
  if (metrics.enabled && metrics.serviceMonitor && ctx.capabilities.serviceMonitor) {
    for (const w of workloads) if (w.metricsPort) objects.push(serviceMonitor(ctx, w));
  }
  if (ctx.capabilities.verticalPodAutoscaler) {
    for (const w of workloads) {
      const vpa = verticalPodAutoscaler(ctx, w);
      if (vpa) objects.push(vpa);
    }
  }
  return objects;
}
