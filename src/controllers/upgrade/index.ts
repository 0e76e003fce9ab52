// Upgrades (issue 6): the orchestrator the platform reconciler calls through PlatformHooks, and
// the rule on which version changes are safe (also what `onto upgrade` checks before it writes).
export {
  FORCE_ANNOTATION,
  POD,
  RETRY_ANNOTATION,
  UpgradeOrchestrator,
  podUnderUpgrade,
} from "./orchestrator.js";
export type { UpgradeOrchestratorDeps } from "./orchestrator.js";
export { pathRefusal } from "./plan.js";
export { refusedRollback } from "./points-of-no-return.js";
