// Intelligence layer (D/E): the reasoning service (GPU-accelerated when asked: the GPU as an
// extended resource, and the toleration of the GPU nodes' taint), the agent runtime, and the
// Temporal server its durable workflows need when agentRuntime.temporal.enabled.
import { mainResources, workloadBase, type RenderContext, placementFor } from "./context.js";
import { POSTGRES, TEMPORAL } from "./endpoints.js";
import { renderPlatformService } from "./platform-service.js";
import { secretEnv } from "./secrets.js";
import { buildWorkload, configMapName, type ComponentObjects } from "./workload.js";

const TEMPORAL_UID = 1000; // the temporal user of the Temporal images

export function renderReasoningService(ctx: RenderContext): ComponentObjects {
  const gpu = ctx.spec.intelligencePlane.reasoningService.gpu;
  return renderPlatformService(ctx, "reasoning-service", {
    needs: ["redis", "kafka", "services"],
    ...(gpu.enabled
      ? {
          extraResources: { [gpu.type]: String(gpu.count) },
          // GPU nodes are tainted with the resource name (the NVIDIA GPU operator's convention).
          tolerations: [{ key: gpu.type, operator: "Exists", effect: "NoSchedule" }],
        }
      : {}),
  });
}

export const renderAgentRuntime = (ctx: RenderContext): ComponentObjects =>
  renderPlatformService(ctx, "agent-runtime", { needs: ["postgres", "redis", "kafka", "temporal"] });

function temporalConfig(ctx: RenderContext): Record<string, string> {
  const { logging, metrics } = ctx.spec.observability;
  return {
    // temporalio/auto-setup creates and migrates its two databases in the platform's PostgreSQL.
    DB: "postgres12",
    DB_PORT: String(POSTGRES.port),
    POSTGRES_SEEDS: POSTGRES.service,
    POSTGRES_USER: POSTGRES.user,
    DBNAME: "temporal",
    VISIBILITY_DBNAME: "temporal_visibility",
    DEFAULT_NAMESPACE: TEMPORAL.namespace,
    BIND_ON_IP: "0.0.0.0",
    LOG_LEVEL: logging.level.toLowerCase(),
    ...(metrics.enabled ? { PROMETHEUS_ENDPOINT: `0.0.0.0:${TEMPORAL.metricsPort}` } : {}),
  };
}

export function renderTemporal(ctx: RenderContext): ComponentObjects {
  const name = "temporal";
  const probe = { grpc: { port: TEMPORAL.port, service: "temporal.api.workflowservice.v1.WorkflowService" } };
  return buildWorkload(
    {
      ...workloadBase(ctx, name),
      ports: [
        { name: "grpc", port: TEMPORAL.port, appProtocol: "grpc" },
        { name: "metrics", port: TEMPORAL.metricsPort },
      ],
      config: temporalConfig(ctx),
      ...(ctx.spec.observability.metrics.enabled ? { metricsPort: "metrics", metricsPath: "/metrics" } : {}),
      pod: (image) => ({
        runAsUser: TEMPORAL_UID,
        fsGroup: TEMPORAL_UID,
        containers: [
          {
            name,
            image,
            ports: [
              { name: "grpc", containerPort: TEMPORAL.port },
              { name: "metrics", containerPort: TEMPORAL.metricsPort },
            ],
            envFrom: [{ configMapRef: { name: configMapName(name) } }],
            env: [
              secretEnv("POSTGRES_PWD", POSTGRES.secret, POSTGRES.passwordKey),
              { name: "TEMPORAL_BROADCAST_ADDRESS", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
            ],
            resources: mainResources(ctx, name),
            startupProbe: { ...probe, periodSeconds: 5, failureThreshold: 120 },
            readinessProbe: { ...probe, periodSeconds: 10, failureThreshold: 3 },
            livenessProbe: { ...probe, periodSeconds: 20, failureThreshold: 3 },
          },
        ],
      }),
    },
    placementFor(ctx, name),
  );
}
