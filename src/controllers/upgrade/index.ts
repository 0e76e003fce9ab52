// Upgrades (issue 6): the orchestrator the platform reconciler calls through PlatformHooks.
export {
  FORCE_ANNOTATION,
  POD,
  RETRY_ANNOTATION,
  UpgradeOrchestrator,
  podUnderUpgrade,
} from "./orchestrator.js";
export type { UpgradeOrchestratorDeps } from "./orchestrator.js";
