// The public surface of the controllers: the operator's wiring (`onto operator` and the tests run
// it), and what the CLI shares with the controllers so that it decides as they do (the render
// input from the cluster, the applied-hash annotation, the upgrade rules and annotations).
export { DISCOVERY_INTERVAL_MS } from "./capabilities.js";
export { discoverCapabilities, runOperator, type OperatorOptions, type RunningOperator } from "./operator.js";
export {
  decodeGeneratedSecrets,
  namespaceSecurity,
  planCertificates,
  platformCertificateName,
  renderFor,
  withAppliedHash,
  withPlatformCertificate,
} from "./platform/index.js";
export { FORCE_ANNOTATION, RETRY_ANNOTATION, pathRefusal, refusedRollback } from "./upgrade/index.js";
export type { PlatformHooks, UpgradeDecision } from "./shared/upgrade-decision.js";
export {
  formatPlan,
  isWorkload,
  restartPlan,
  type RestartEntry,
  type WorkloadObject,
} from "./shared/restart-plan.js";
