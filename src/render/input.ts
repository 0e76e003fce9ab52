// What render needs, all passed in: render reads nothing else (no cluster, no clock, no env).
import type { ComponentName, ResolvedSpec, VerticalState } from "../api/index.js";
import type { Release } from "../release/index.js";
import type { PlatformRef } from "./meta.js";
import type { MemoryOverride } from "./resources.js";
import type { ExistingSecrets, SecretGenerator } from "./secrets.js";

/** APIs the cluster serves beyond the built-in ones (from discovery). */
export interface Capabilities {
  /** monitoring.coreos.com/v1 ServiceMonitor (Prometheus Operator). */
  serviceMonitor: boolean;
  /** autoscaling.k8s.io/v1 VerticalPodAutoscaler. */
  verticalPodAutoscaler: boolean;
  /**
   * custom.metrics.k8s.io (an adapter such as prometheus-adapter): without it an HPA's Pods metric
   * never resolves, and an HPA with one unresolved metric never scales down, so the
   * grpc_requests_per_second metric is rendered only when this is served.
   */
  customMetrics?: boolean;
  /**
   * cert-manager.io/v1 Certificate: the platform certificate is issued through cert-manager when
   * spec.global.tls.issuerRef names an issuer (and only when this is served).
   */
  certManager?: boolean;
}

/**
 * How one component is rolled during an upgrade; the orchestrator sets it per step.
 * - `version`: the platform version whose image the main workload runs.
 * - `canaryVersion` (Deployments): also run a one-replica `<name>-canary` Deployment of that version.
 * - `partition` (StatefulSets): pods with an ordinal below it keep the previous revision, so with
 *   `version` = the new one and partition = replicas - 1 only the highest ordinal is the canary.
 */
export interface ComponentRollout {
  version: string;
  canaryVersion?: string | undefined;
  partition?: number | undefined;
}

/** Per component; a component absent here runs spec.version. */
export type UpgradeStep = Readonly<Partial<Record<ComponentName, ComponentRollout>>>;

export interface RenderInput {
  platform: PlatformRef;
  spec: ResolvedSpec;
  /** The release of spec.version (releaseFor(spec.version)). */
  release: Release;
  capabilities: Capabilities;
  /** status.healing.memoryOverrides: raised memory by component name. */
  overrides?: Readonly<Record<string, MemoryOverride>>;
  /** status.verticalScaling: the requests applied from VPA recommendations, by component name. */
  vertical?: Readonly<Record<string, VerticalState>>;
  upgrade?: UpgradeStep;
  /** The release of a version other than spec.version (upgrade steps); default: the product catalog. */
  releaseOf?: (version: string) => Release;
  /** Values already stored in the generated Secrets (decoded), so they are never regenerated. */
  existingSecrets?: ExistingSecrets;
  /** Makes values for generated Secret keys that do not exist yet. */
  generateSecret: SecretGenerator;
}
