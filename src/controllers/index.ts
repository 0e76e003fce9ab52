// The public surface of the controllers: the operator's wiring (`onto operator` and the tests run
// it), and what the CLI shares with the controllers so that it decides as they do (the render
// input from the cluster, the applied-hash annotation, the upgrade rules and annotations, the
// StatefulSet fields that are re-created rather than updated, and claim growth).
export { DISCOVERY_INTERVAL_MS } from "./capabilities.js";
export { discoverCapabilities, runOperator, type OperatorOptions, type RunningOperator } from "./operator.js";
export {
  CERTIFICATE_REF,
  CLAIM_REF,
  IMMUTABLE_STATEFULSET_FIELDS,
  STORAGE_CLASS_REF,
  coveredBy,
  decodeGeneratedSecrets,
  immutableChanges,
  namespaceSecurity,
  planVolumeGrowth,
  planCertificates,
  platformCertificateName,
  renderFor,
  withAppliedHash,
  withKeptStorage,
  withPlatformCertificate,
  type VolumeGrowth,
} from "./platform/index.js";
export { FORCE_ANNOTATION, RETRY_ANNOTATION, pathRefusal, refusedRollback } from "./upgrade/index.js";
export type { PlatformHooks, UpgradeDecision } from "./shared/upgrade-decision.js";
export { APPROVE_RESTARTS_ANNOTATION } from "./shared/maintenance-windows.js";
export {
  formatPlan,
  isWorkload,
  restartPlan,
  type RestartEntry,
  type WorkloadObject,
} from "./shared/restart-plan.js";
