// One healing pass over one platform: what it read (the platform, its spec, the caches), what it
// decided so far (memory overrides, the hourly action count, conditions, what is held back), and
// the notes to record once the status that carries them is written. The decisions (memory.ts,
// crashloop.ts, pod-remedies.ts) fill it; the healer writes it.
import {
  HEALING_CONDITION_TYPES,
  PLATFORM_REF,
  type ComponentInfo,
  type ConditionType,
  type MemoryOverride,
  type OntoPlatform,
  type OntoPlatformStatus,
  type Reason,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject, ObjectRef } from "../../kube/index.js";
import { metaTime, setCondition, type Condition, type ReadonlyStore } from "../../runtime/index.js";
import type { ActionNote } from "../shared/act.js";
import type { NodeView, PodView, WorkloadView } from "../shared/kube-views.js";
import {
  budgetSpentBy,
  rateLimitRetryMs,
  rateLimited,
  withinWindow,
  type RecentAction,
} from "../shared/healing-budget.js";

/** Look again at least this often while something is pending (a NotReady node, a crash loop). */
export const PENDING_RECHECK_MS = 30_000;

/** A healing action as recorded, with its name for onto_healing_actions_total{action}. */
export interface HealingNote extends ActionNote {
  action: string;
}

/** What a pass reads besides the platform: the caches of its namespace. */
export interface HealingView {
  /** The platform's pods, by name. */
  pods: PodView[];
  nodes: NodeView[];
  secrets: ReadonlyStore<KubeObject>;
  configMaps: ReadonlyStore<KubeObject>;
  /** The component's Deployment or StatefulSet. */
  workload(info: ComponentInfo): WorkloadView | undefined;
}

export class Pass {
  overrides: Record<string, MemoryOverride>;
  recent: RecentAction[];
  conditions: Condition[];
  /** Notes recorded once the status that carries them is written. */
  readonly afterWrite: HealingNote[] = [];
  requeueMs: number | undefined;
  readonly withheld: string[] = [];

  constructor(
    readonly platform: OntoPlatform,
    readonly spec: ResolvedSpec,
    readonly now: Date,
  ) {
    const healing = platform.status?.healing;
    this.overrides = { ...(healing?.memoryOverrides ?? {}) };
    this.recent = withinWindow(healing?.recentActions, now);
    this.conditions = [...(platform.status?.conditions ?? [])];
  }

  get namespace(): string {
    return this.platform.metadata.namespace;
  }

  requeue(ms: number): void {
    this.requeueMs = Math.max(1_000, Math.min(this.requeueMs ?? Infinity, ms));
  }

  /** Sets a healer condition True, or False only when it exists (no noise on healthy platforms). */
  condition(type: ConditionType, on: boolean, reason: Reason, message: string): void {
    if (!on && !this.conditions.some((c) => c.type === type)) return;
    this.conditions = setCondition(
      this.conditions,
      {
        type,
        status: on ? "True" : "False",
        reason,
        message,
        observedGeneration: this.platform.metadata.generation ?? 0,
      },
      this.now,
    );
  }

  /** Whether the hourly budget allows one more action; if not, says so and schedules a retry. */
  allow(what: string): boolean {
    const max = this.spec.selfHealing.maxActionsPerHour;
    const spent = budgetSpentBy(this.recent, this.platform.status?.postgres?.recentFailovers, this.now);
    if (!rateLimited(spent, max)) return true;
    this.withheld.push(`${what}: rate limit of ${max} healing actions per hour reached`);
    this.requeue(rateLimitRetryMs(spent, this.now));
    return false;
  }

  count(component: string, action: string): void {
    this.recent.push({ at: metaTime(this.now), component, action });
  }

  platformRef(): ObjectRef {
    return { ...PLATFORM_REF, namespace: this.namespace, name: this.platform.metadata.name };
  }

  workloadRef(info: ComponentInfo): ObjectRef {
    return { apiVersion: "apps/v1", kind: info.kind, namespace: this.namespace, name: info.name };
  }

  podRef(pod: PodView): ObjectRef {
    return { apiVersion: "v1", kind: "Pod", namespace: this.namespace, name: pod.metadata?.name ?? "" };
  }

  /**
   * The status this pass writes over `current`: its healing record and its own conditions, every
   * other field as `current` has it. `current` is what the pass read, or a fresher read after a
   * write conflict (the caller refuses one whose healing record changed meanwhile).
   */
  statusOver(current: OntoPlatformStatus): OntoPlatformStatus {
    const healing: NonNullable<OntoPlatformStatus["healing"]> = {
      ...(Object.keys(this.overrides).length > 0 ? { memoryOverrides: this.overrides } : {}),
      ...(this.recent.length > 0 ? { recentActions: this.recent } : {}),
    };
    const after: OntoPlatformStatus = { ...current };
    const mine = this.conditions.filter((c) => isHealingCondition(c.type));
    if (current.conditions !== undefined || mine.length > 0) {
      const merged = (current.conditions ?? []).map((c) => mine.find((m) => m.type === c.type) ?? c);
      for (const m of mine) if (!merged.some((c) => c.type === m.type)) merged.push(m);
      after.conditions = merged;
    }
    if (Object.keys(healing).length > 0) after.healing = healing;
    else delete after.healing;
    return after;
  }
}

function isHealingCondition(type: string): boolean {
  return (HEALING_CONDITION_TYPES as readonly string[]).includes(type);
}
