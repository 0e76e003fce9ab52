// Render: one OntoPlatform (resolved spec + release + what the cluster offers + healing
// overrides + upgrade step + stored secrets) in, every desired object out, in apply order.
// Pure: the operator applies exactly this, and `onto render` prints exactly this.
import { enabledComponents, type ComponentName } from "../api/index.js";
import { createContext, type RenderContext } from "./context.js";
import { renderAuthService, renderOntologyService, renderSchemaRegistry } from "./control-plane.js";
import { renderDataService, renderNessie } from "./data-plane.js";
import { renderGateway } from "./gateway.js";
import { renderKafka } from "./infrastructure/kafka.js";
import { renderMinio } from "./infrastructure/minio.js";
import { renderPostgres } from "./infrastructure/postgres.js";
import { renderRedis } from "./infrastructure/redis.js";
import type { RenderInput } from "./input.js";
import { renderAgentRuntime, renderReasoningService, renderTemporal } from "./intelligence-plane.js";
import type { RenderedObject } from "./objects.js";
import { renderObservability } from "./observability.js";
import { renderTenancy } from "./tenancy.js";
import type { ComponentObjects, WorkloadSummary } from "./workload.js";

const RENDERERS: Readonly<Record<ComponentName, (ctx: RenderContext) => ComponentObjects>> = {
  postgres: renderPostgres,
  redis: renderRedis,
  minio: renderMinio,
  kafka: renderKafka,
  "ontology-service": renderOntologyService,
  "schema-registry": renderSchemaRegistry,
  "auth-service": renderAuthService,
  "data-service": renderDataService,
  nessie: renderNessie,
  "reasoning-service": renderReasoningService,
  "agent-runtime": renderAgentRuntime,
  temporal: renderTemporal,
  gateway: renderGateway,
};

/**
 * Every object of the platform, in apply order: the tenant guard rails first (a LimitRange and
 * a ResourceQuota must exist before the pods they govern are admitted), then the components in
 * the seed's order (infrastructure, control, data, intelligence, gateway; within a component its
 * Secret, ServiceAccount and ConfigMap before the workload), then observability.
 */
export function renderPlatform(input: RenderInput): RenderedObject[] {
  const ctx = createContext(input);
  const objects: RenderedObject[] = [...renderTenancy(ctx)];
  const workloads: WorkloadSummary[] = [];
  for (const component of enabledComponents(ctx.spec)) {
    const rendered = RENDERERS[component.name as ComponentName](ctx);
    objects.push(...rendered.objects);
    workloads.push(rendered.workload);
  }
  objects.push(...renderObservability(ctx, workloads));
  // Builders share small objects (selectors, probes); callers get a tree with no shared parts,
  // so mutating one object (or printing it as YAML) never affects another.
  return structuredClone(objects);
}

export type { Capabilities, ComponentRollout, RenderInput, UpgradeStep } from "./input.js";
export type { RenderedObject } from "./objects.js";
export type { ExistingSecrets, SecretGenerator } from "./secrets.js";
export type { MemoryOverride } from "./resources.js";
export type { PlatformRef } from "./meta.js";
export {
  CONFIG_CHECKSUM_ANNOTATION,
  HEADLESS_LABEL,
  PARTITION_ANNOTATION,
  TRACK_LABEL,
  commonLabels,
  ownerReference,
  selectorLabels,
} from "./meta.js";
export { GENERATED_SECRET_LABEL } from "./secrets.js";
export {
  ISSUED_CERTIFICATE_LABEL,
  TLS_REVISION_ANNOTATION,
  caSecretName,
  certManagerCertificate,
  certificateNames,
  issuedCertificateSecret,
  type CertManagerIssuerRef,
  withTlsRevision,
} from "./certificates.js";
export { canaryName, configMapName, headlessServiceName } from "./workload.js";
export { metricsNotScraped, verticalResources } from "./observability.js";
export {
  MANAGED_KINDS,
  OPTIONAL_APIS,
  OPTIONAL_KINDS,
  apiVersionOf,
  applyWave,
  capabilitiesFrom,
  optionalApi,
  servedKinds,
  type ManagedKind,
  type OptionalApi,
} from "./kinds.js";
export { KAFKA, MINIO, NESSIE, POSTGRES, REDIS, TEMPORAL } from "./endpoints.js";
export { TLS_KEYS } from "./tls.js";
export {
  DECLARED_CHANGES,
  RESTART_REASONS,
  TEMPLATE_REVISION,
  TEMPLATE_REVISION_ANNOTATION,
  changesSince,
  covers,
  revisionOf,
  type DeclaredChange,
  type RestartReason,
} from "./template-changes.js";
