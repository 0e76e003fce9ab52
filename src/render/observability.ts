// Observability objects the cluster can act on: a ServiceMonitor per component exposing
// Prometheus metrics when the Prometheus Operator is installed (monitoring.coreos.com/v1 served)
// and the spec asks for it, and a VerticalPodAutoscaler in recommendation mode per workload when
// the VPA is installed (the seed pairs HPA with VPA; "Off" never evicts, so it cannot fight the HPA).
import type { ResolvedSpec } from "../api/index.js";
import type { RenderContext } from "./context.js";
import type { Capabilities } from "./input.js";
import { HEADLESS_LABEL, objectMeta, selectorLabels } from "./meta.js";
import type { RenderedObject } from "./objects.js";
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
      endpoints: [{ port: w.metricsPort, path: w.metricsPath ?? "/metrics", interval: "30s" }],
    },
  };
}

function verticalPodAutoscaler(w: WorkloadSummary): RenderedObject {
  return {
    apiVersion: "autoscaling.k8s.io/v1",
    kind: "VerticalPodAutoscaler",
    metadata: objectMeta(w.owner, w.name),
    spec: {
      targetRef: { apiVersion: "apps/v1", kind: w.kind, name: w.name },
      updatePolicy: { updateMode: "Off" },
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
    for (const w of workloads) objects.push(verticalPodAutoscaler(w));
  }
  return objects;
}
