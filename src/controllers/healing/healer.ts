// The healer (seed 5.1): one OntoPlatform in, its pods and the nodes they run on read from the
// informer caches, and the four remedies applied where they are due:
//   OOMKilled        raise the component's memory limit in status.healing.memoryOverrides
//                    (render applies it; the pods roll), up to selfHealing.maxMemory; a
//                    StatefulSet pod still OOM-killed at its old limit is deleted so the raise
//                    reaches it (OrderedReady replaces no pod that is not Ready);
//   CrashLoopBackOff a diagnosis in the CrashLoop condition and an Event, no restart (also for a
//                    pod the kubelet cannot start for a missing Secret or ConfigMap);
//   Evicted          delete the evicted pod after recording its reason and the node's pressure;
//   node lost        force-delete the platform's pods stranded on a node NotReady for longer than
//                    selfHealing.nodeLossGraceSeconds, so their controllers recreate them elsewhere.
// Guard rails: selfHealing.enabled, an hourly rate limit kept in status, no node-loss action when
// more than half of the platform's node pool is NotReady, a cooldown between raises. Every action
// goes through act() (Event, audit line, onto_actions_total) and counts in
// onto_healing_actions_total{action,reason}.
//
// Level-triggered like the platform reconciler: every pass decides again from the caches and the
// status, so a restart mid-way loses nothing but the pass in flight. The decisions are pure
// (memory.ts, crash-diagnoses.ts, pod-remedies.ts, over a Pass); this file runs them in order.
import {
  CONDITION,
  HEALING_CONDITION_TYPES,
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  REASON,
  resolveSpec,
  type ComponentInfo,
  type OntoPlatform,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import { canonical, type Request, type Result } from "../../runtime/index.js";
import { act, record, type ActionContext } from "../shared/act.js";
import type { PlatformViews } from "../shared/platform-views.js";
import { isTerminating, type PodView, type WorkloadView } from "../shared/kube-views.js";
import { StaleStatusError, writePlatformStatus } from "../shared/platform-status.js";
import { podUnderUpgrade } from "../upgrade/index.js";
import { diagnoseCrashLoops, diagnosisLookups } from "./crash-diagnoses.js";
import { healOom, needsRender, reconsiderOverrides } from "./memory.js";
import type { HealingMetrics } from "./metrics.js";
import { Pass, type HealingNote, type HealingView } from "./pass.js";
import {
  planEvictedCleanup,
  planNodeLoss,
  planStuckOomReplacements,
  type HealingAction,
} from "./pod-remedies.js";

/** How long a force-deleted pod's UID is remembered (see Healer.freed). */
const FREED_MEMORY_MS = 10 * 60_000;

export interface HealerDeps extends PlatformViews {
  metrics: HealingMetrics;
  /** Asks the platform controller to reconcile `key` (to render a new memory override). */
  requestReconcile: (key: string) => void;
}

/** The platform key ("namespace/name") a platform pod belongs to, from its labels. */
export function platformKeyOfPod(pod: KubeObject): string | undefined {
  const labels = pod.metadata?.labels;
  const instance = labels?.[INSTANCE_LABEL];
  if (!instance || labels[MANAGED_BY_LABEL] !== MANAGED_BY || !pod.metadata?.namespace) return undefined;
  return `${pod.metadata.namespace}/${instance}`;
}

export class Healer {
  private readonly now: () => Date;
  /**
   * Pods (by UID) force-deleted lately. A pod a grace-0 delete did not remove is not deleted again
   * and again by every pass (a pass that lost its status write to a conflict runs once more).
   * In memory only: after a restart one repeat is harmless, and the hourly budget is in status.
   */
  private readonly freed = new Map<string, number>();

  constructor(private readonly deps: HealerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async reconcile(platform: OntoPlatform, request: Request): Promise<Result> {
    if (!platform.metadata.uid || isTerminating(platform)) return {};
    let spec: ResolvedSpec;
    try {
      spec = resolveSpec(platform.spec);
    } catch {
      return {}; // the platform reconciler reports an invalid spec in the Degraded condition
    }
    if (spec.paused) return {}; // spec.paused: the operator changes nothing, healing included
    const client = this.deps.client.withSignal(request.signal);
    const pass = new Pass(platform, spec, this.now());
    if (!spec.selfHealing.enabled) {
      // Off: no action, and no healer condition left saying something is going on. Overrides
      // already in status stay (render keeps applying them) until the spec limit passes them.
      for (const type of HEALING_CONDITION_TYPES)
        pass.condition(type, false, REASON.HealingDisabled, "spec.selfHealing.enabled is false");
      await this.writeStatus(client, pass);
      return {};
    }

    const ctx: ActionContext = {
      client,
      recorder: this.deps.actions,
      actor: "healer",
      platform,
      reconcileId: request.id,
    };
    const view = this.view(pass);
    // Canaries and the component an upgrade is moving fail for the upgrade to judge (it rolls back).
    const notUpgrading = view.pods.filter((p) => !podUnderUpgrade(platform, p));
    reconsiderOverrides(pass);
    healOom(pass, notUpgrading);
    diagnoseCrashLoops(pass, notUpgrading, diagnosisLookups(pass, view));
    await this.run(ctx, pass, [
      ...planStuckOomReplacements(pass, notUpgrading, view),
      ...planEvictedCleanup(pass, view.pods, view.nodes),
      ...planNodeLoss(pass, view.pods, view.nodes, (uid) => this.freed.has(uid)),
    ]);

    const withheld = pass.withheld.length > 0;
    pass.condition(
      CONDITION.HealingWithheld,
      withheld,
      withheld ? REASON.GuardRail : REASON.NotWithheld,
      pass.withheld.join("; ") || "no healing action is held back",
    );
    await this.writeStatus(client, pass);
    for (const note of pass.afterWrite) this.note(ctx, note);
    if (needsRender(pass, view)) this.deps.requestReconcile(request.key);
    return pass.requeueMs !== undefined ? { requeueAfterMs: pass.requeueMs } : {};
  }

  /** The caches a pass reads, for its namespace. */
  private view(pass: Pass): HealingView {
    const ns = pass.namespace;
    const key = `${ns}/${pass.platform.metadata.name}`;
    for (const [uid, at] of this.freed)
      if (pass.now.getTime() - at >= FREED_MEMORY_MS) this.freed.delete(uid);
    const pods = (this.deps.pods(ns).byNamespace(ns) as PodView[]).filter((p) => platformKeyOfPod(p) === key);
    pods.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
    return {
      pods,
      nodes: this.deps.nodes().list(),
      secrets: this.deps.cache({ apiVersion: "v1", kind: "Secret" }, ns),
      configMaps: this.deps.cache({ apiVersion: "v1", kind: "ConfigMap" }, ns),
      workload: (info: ComponentInfo): WorkloadView | undefined =>
        this.deps.cache({ apiVersion: "apps/v1", kind: info.kind }, ns).getByName(ns, info.name),
    };
  }

  /** Runs the pod actions in order; a budgeted one runs only while the hourly budget allows. */
  private async run(ctx: ActionContext, pass: Pass, actions: HealingAction[]): Promise<void> {
    let budgetSpent = false;
    for (const action of actions) {
      if (action.budget && (budgetSpent || !pass.allow(action.budget.what))) {
        budgetSpent = true;
        continue;
      }
      const outcome = await act(ctx, action);
      if (!outcome.ok) this.failed(action, outcome.error);
      else if (outcome.took) {
        this.deps.metrics.inc(action.action, action.reason);
        if (action.budget) {
          pass.count(action.budget.component, action.action);
          this.freed.set(action.budget.uid, pass.now.getTime());
        }
      }
    }
  }

  /** Records a status-only action the pass took (once its status is written). */
  private note(ctx: ActionContext, note: HealingNote): void {
    record(ctx, note);
    this.deps.metrics.inc(note.action, note.reason);
  }

  private failed(action: HealingAction, error: string): void {
    this.deps.logger.warn(
      { action: action.action, target: action.target.name, error },
      "healing action failed",
    );
  }

  /**
   * Writes status.healing and the healer's conditions, guarded by the resourceVersion the decisions
   * were made from. After a conflict the write is made again over the fresh status unless its
   * healing record changed meanwhile: then the pass runs again from the fresher cache.
   */
  private async writeStatus(client: KubeClient, pass: Pass): Promise<void> {
    const before = JSON.stringify(canonical(pass.platform.status?.healing ?? null));
    await writePlatformStatus(client, pass.platform, (current) => {
      if (JSON.stringify(canonical(current.healing ?? null)) !== before)
        throw new StaleStatusError("status.healing");
      return pass.statusOver(current);
    });
  }
}
