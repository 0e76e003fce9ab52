// The contract between the platform reconciler and the upgrade orchestrator: every reconcile asks
// the orchestrator (through PlatformHooks) what to do, and carries out the decision note for note.
import type { OntoPlatform, Reason, ResolvedSpec, UpgradeStatus } from "../../api/index.js";
import type { UpgradeStep } from "../../render/index.js";

/** A decision of the upgrade orchestrator, note for note what the reconciler does with it. */
export interface UpgradeDecision {
  /** Which version each component runs this reconcile; absent: spec.version everywhere. */
  step?: UpgradeStep | undefined;
  /**
   * The new status.upgrade, written before anything is applied (write-ahead), so a crash between
   * the write and the apply resumes the step it decided; absent: unchanged.
   */
  upgrade?: UpgradeStatus | undefined;
  /** The Upgrading condition, written with `upgrade`. */
  condition?: { status: "True" | "False"; reason: Reason; message: string } | undefined;
  /** What was decided, recorded (Event + audit line) once the write-ahead succeeded. */
  notes?: {
    reason: string;
    message: string;
    target: { apiVersion: string; kind: string; name: string };
    warning?: boolean;
  }[];
  /** Pods to delete after the objects are applied (a StatefulSet pod stuck on a bad revision). */
  deletePods?: { name: string; reason: string; message: string }[];
  /** Look again this soon (a soak ending, a timeout). */
  requeueAfterMs?: number | undefined;
  /** Called once the write-ahead succeeded (metrics of finished upgrades). */
  committed?: () => void;
}

/** Extension points the upgrade orchestrator plugs into. */
export interface PlatformHooks {
  /** The upgrade step of this reconcile; undefined: no upgrade, spec.version everywhere. */
  upgradeStep?(platform: OntoPlatform, spec: ResolvedSpec): Promise<UpgradeDecision | undefined>;
}
