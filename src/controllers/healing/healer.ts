// The healer (seed 5.1): one OntoPlatform in, its pods and the nodes they run on read from the
// informer caches, and the four remedies applied where they are due:
//   OOMKilled        raise the component's memory limit in status.healing.memoryOverrides
//                    (render applies it; the pods roll), up to selfHealing.maxMemory;
//   CrashLoopBackOff a diagnosis in the CrashLoop condition and an Event, no restart;
//   Evicted          delete the evicted pod after recording its reason and the node's pressure;
//   node lost        force-delete the platform's pods stranded on a node NotReady for longer than
//                    selfHealing.nodeLossGraceSeconds, so their controllers recreate them elsewhere.
// Guard rails: selfHealing.enabled, an hourly rate limit kept in status, no node-loss action when
// more than half of the platform's node pool is NotReady, a cooldown between raises. Every action
// goes through the ActionRecorder (Event, audit line, onto_actions_total) and counts in
// onto_healing_actions_total{action,reason}.
//
// Level-triggered like the platform reconciler: every pass decides again from the caches and the
// status, so a restart mid-way loses nothing but the pass in flight.
import {
  componentByName,
  componentSpec,
  enabledComponents,
  isEnabled,
  resolveSpec,
  type ComponentInfo,
  type MemoryOverride,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import { ConflictError, type KubeClient, type KubeObject, type ObjectRef } from "../../kube/index.js";
import { MANAGED_BY } from "../../render/index.js";
import {
  errorFields,
  setCondition,
  type Condition,
  type Logger,
  type Request,
  type Result,
  type Store,
} from "../../runtime/index.js";
import type { ActionRecorder, ActionVerb } from "../actions.js";
import { mergePatchDiff } from "../platform/merge-patch.js";
import { PLATFORM_REF } from "../platform/reconciler.js";
import {
  crashLooping,
  diagnoseCrashLoop,
  diagnoseNotStarting,
  notStarting,
  type CrashDiagnosis,
} from "./crashloop.js";
import { rateLimitRetryMs, rateLimited, withinWindow, type RecentAction } from "./guard.js";
import {
  controllerKind,
  isTerminating,
  type NodeView,
  type PodView,
  type WorkloadView,
} from "./kube-views.js";
import type { HealingMetrics } from "./metrics.js";
import {
  assessNodeLoss,
  createdAfter,
  isNotReady,
  lastSeen,
  notReadyForMs,
  pressureConditions,
} from "./nodes.js";
import {
  oomKilledMain,
  oomTermination,
  overrideSuperseded,
  planMemoryRaise,
  sameQuantity,
  stuckOnOldLimit,
} from "./oom.js";
import { podUnderUpgrade } from "../upgrade/index.js";

export const INSTANCE_LABEL = "app.kubernetes.io/instance";
export const NAME_LABEL = "app.kubernetes.io/name";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";

/** Condition types the healer owns on the OntoPlatform. */
export const HEALING_CONDITIONS = {
  memoryRaised: "MemoryRaised",
  memoryAtCap: "MemoryAtCap",
  crashLoop: "CrashLoop",
  withheld: "HealingWithheld",
} as const;

/** How long a force-deleted pod's UID is remembered (see Healer.freed). */
const FREED_MEMORY_MS = 10 * 60_000;

/** Look again at least this often while something is pending (a NotReady node, a crash loop). */
const PENDING_RECHECK_MS = 30_000;

export interface HealerDeps {
  client: KubeClient;
  /** Informer cache of a kind for a namespace (the platform controller's caches). */
  cache: (kind: { apiVersion: string; kind: string }, namespace: string) => Store<KubeObject>;
  /** The platform pods of a namespace (informer on managed-by=onto-operator). */
  pods: (namespace: string) => Store<KubeObject>;
  nodes: () => Store<KubeObject>;
  actions: ActionRecorder;
  metrics: HealingMetrics;
  logger: Logger;
  /** Asks the platform controller to reconcile `key` (to render a new memory override). */
  requestReconcile: (key: string) => void;
  now?: () => Date;
}

/** The platform key ("namespace/name") a platform pod belongs to, from its labels. */
export function platformKeyOfPod(pod: KubeObject): string | undefined {
  const labels = pod.metadata?.labels;
  const instance = labels?.[INSTANCE_LABEL];
  if (!instance || labels[MANAGED_BY_LABEL] !== MANAGED_BY || !pod.metadata?.namespace) return undefined;
  return `${pod.metadata.namespace}/${instance}`;
}

interface Pending {
  action: string;
  reason: string;
  verb: ActionVerb;
  target: ObjectRef;
  message: string;
  warning?: boolean;
}

/** One pass over one platform: what it read, what it decided, what it will write. */
class Pass {
  overrides: Record<string, MemoryOverride>;
  recent: RecentAction[];
  conditions: Condition[];
  /** Actions recorded once the status that carries them is written. */
  readonly afterWrite: Pending[] = [];
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
  condition(type: string, on: boolean, reason: string, message: string): void {
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
    if (!rateLimited(this.recent, max)) return true;
    this.withheld.push(`${what}: rate limit of ${max} healing actions per hour reached`);
    this.requeue(rateLimitRetryMs(this.recent, this.now));
    return false;
  }

  count(component: string, action: string): void {
    this.recent.push({ at: this.now.toISOString().replace(/\.\d{3}Z$/, "Z"), component, action });
  }
}

export class Healer {
  private readonly now: () => Date;
  private counter = 0;
  /**
   * Pods (by UID) force-deleted lately. A pod a grace-0 delete did not remove is not deleted again
   * and again by every pass (a pass that lost its status write to a conflict runs once more).
   * In memory only: after a restart one repeat is harmless, and the hourly budget is in status.
   */
  private readonly freed = new Map<string, number>();

  constructor(private readonly deps: HealerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async reconcile(request: Request): Promise<Result> {
    const { namespace = "", name } = request;
    const platform = this.deps.cache(PLATFORM_REF, namespace).getByName(namespace, name) as
      OntoPlatform | undefined;
    if (!platform?.metadata.uid || (platform.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      return {};
    let spec: ResolvedSpec;
    try {
      spec = resolveSpec(platform.spec);
    } catch {
      return {}; // the platform reconciler reports an invalid spec in the Degraded condition
    }
    if (spec.paused) return {}; // spec.paused: the operator changes nothing, healing included
    const pass = new Pass(platform, spec, this.now());
    if (!spec.selfHealing.enabled) {
      // Off: no action, and no healer condition left saying something is going on. Overrides
      // already in status stay (render keeps applying them) until the spec limit passes them.
      for (const type of Object.values(HEALING_CONDITIONS))
        pass.condition(type, false, "HealingDisabled", "spec.selfHealing.enabled is false");
      await this.writeStatus(pass);
      return {};
    }

    const reconcileId = `heal-${name}-${(this.counter++).toString(36)}-${Date.now().toString(36)}`;
    for (const [uid, at] of this.freed)
      if (pass.now.getTime() - at >= FREED_MEMORY_MS) this.freed.delete(uid);
    const pods = this.deps
      .pods(namespace)
      .byNamespace(namespace)
      .filter((p) => platformKeyOfPod(p) === `${namespace}/${name}`) as PodView[];
    pods.sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
    const nodes = this.deps.nodes().list() as NodeView[];

    this.reconsiderOverrides(pass);
    // Canaries and the component an upgrade is moving fail for the upgrade to judge (it rolls back).
    const notUpgrading = pods.filter((p) => !podUnderUpgrade(platform, p));
    this.healOom(pass, notUpgrading);
    await this.replaceStuckOomPods(pass, notUpgrading, reconcileId);
    this.diagnoseCrashLoops(pass, notUpgrading);
    await this.cleanEvicted(pass, pods, nodes, reconcileId);
    await this.freeLostNodes(pass, pods, nodes, reconcileId);

    const withheld = pass.withheld.join("; ");
    pass.condition(
      HEALING_CONDITIONS.withheld,
      pass.withheld.length > 0,
      pass.withheld.length > 0 ? "GuardRail" : "NotWithheld",
      withheld || "no healing action is held back",
    );
    await this.writeStatus(pass);
    for (const action of pass.afterWrite) this.record(pass, reconcileId, action);
    this.pokeReconciler(pass, request.key);
    return pass.requeueMs !== undefined ? { requeueAfterMs: pass.requeueMs } : {};
  }

  // ------------------------------------------------------------------ OOMKilled

  /** The documented rule: an override at or below the spec's new limit is dropped. */
  private reconsiderOverrides(pass: Pass): void {
    for (const [component, override] of Object.entries(pass.overrides)) {
      const info = componentByName(component);
      const enabled = info !== undefined && isEnabled(pass.spec, info);
      const specLimit = info ? componentSpec(pass.spec, info).resources.limits?.memory : undefined;
      if (enabled && !overrideSuperseded(override, specLimit)) continue;
      delete pass.overrides[component];
      pass.afterWrite.push({
        action: "drop-override",
        reason: enabled ? "SpecLimitChanged" : "ComponentDisabled",
        verb: "status",
        target: this.platformRef(pass),
        message: enabled
          ? `dropped the healed memory limit ${override.memoryLimit} of ${component}: the spec now sets ${specLimit ?? "?"}`
          : `dropped the healed memory limit of ${component}: the component is no longer enabled`,
      });
    }
  }

  private healOom(pass: Pass, pods: PodView[]): void {
    const atCap: string[] = [];
    const policy = pass.spec.selfHealing;
    for (const info of enabledComponents(pass.spec)) {
      const resources = componentSpec(pass.spec, info).resources;
      for (const pod of pods) {
        if (pod.metadata?.labels?.[NAME_LABEL] !== info.name) continue;
        const killed = oomKilledMain(pod, info.name);
        if (!killed?.limit) continue;
        const decision = planMemoryRaise({
          component: info.name,
          podLimit: killed.limit,
          podRequest: killed.request,
          override: pass.overrides[info.name],
          specLimit: resources.limits?.memory,
          specRequest: resources.requests.memory,
          policy: {
            oomMemoryFactor: policy.oomMemoryFactor,
            maxMemory: policy.maxMemory,
            cooldownSeconds: policy.cooldownSeconds,
          },
          now: pass.now,
        });
        if (decision.kind === "stale") continue;
        if (decision.kind === "cooldown") {
          pass.requeue(decision.retryAfterMs);
          break;
        }
        if (decision.kind === "atCap") {
          atCap.push(
            `${info.name} is Degraded: pod ${pod.metadata?.name ?? "?"} was OOMKilled at memory limit ${decision.limit}, ` +
              `which is selfHealing.maxMemory (${decision.cap}); no further raise (raise the spec's memory limit or selfHealing.maxMemory)`,
          );
          const current = pass.overrides[info.name];
          if (current && !current.atCap) pass.overrides[info.name] = { ...current, atCap: true };
          break;
        }
        if (!pass.allow(`raise the memory limit of ${info.name}`)) break;
        pass.overrides[info.name] = decision.override;
        pass.count(info.name, "raise-memory");
        const message =
          `raised the memory limit of ${info.name} from ${decision.from} to ${decision.override.memoryLimit}` +
          (decision.override.memoryRequest ? ` (request ${decision.override.memoryRequest})` : "") +
          ` after pod ${pod.metadata?.name ?? "?"} was OOMKilled (raise ${decision.override.raises}` +
          (decision.override.atCap ? `, now at selfHealing.maxMemory ${policy.maxMemory})` : ")");
        pass.afterWrite.push({
          action: "raise-memory",
          reason: "OOMKilled",
          verb: "status",
          target: this.workloadRef(pass, info),
          message,
          warning: true,
        });
        pass.condition(HEALING_CONDITIONS.memoryRaised, true, "OOMKilled", message);
        break;
      }
    }
    pass.condition(
      HEALING_CONDITIONS.memoryAtCap,
      atCap.length > 0,
      atCap.length > 0 ? "MemoryAtCap" : "BelowCap",
      atCap.length > 0 ? atCap.join("; ") : "no component is OOMKilled at selfHealing.maxMemory",
    );
    if (Object.keys(pass.overrides).length === 0)
      pass.condition(
        HEALING_CONDITIONS.memoryRaised,
        false,
        "NoOverride",
        "no memory limit raised by healing",
      );
  }

  /**
   * StatefulSet pods OOM-killed on every start at a limit below the one their template now carries
   * are deleted, so the StatefulSet recreates them with the raised limit (see stuckOnOldLimit).
   * Not counted against the hourly budget: the pod runs nothing, and the raise was counted.
   */
  private async replaceStuckOomPods(pass: Pass, pods: PodView[], reconcileId: string): Promise<void> {
    for (const info of enabledComponents(pass.spec)) {
      if (info.kind !== "StatefulSet") continue;
      const workload = this.workload(pass, info);
      const templateLimit = workload?.spec?.template?.spec?.containers?.find((c) => c.name === info.name)
        ?.resources?.limits?.memory;
      for (const pod of pods) {
        if (pod.metadata?.labels?.[NAME_LABEL] !== info.name || isTerminating(pod)) continue;
        const killed = oomKilledMain(pod, info.name);
        if (!killed?.limit) continue;
        const stuck = stuckOnOldLimit({
          podLimit: killed.limit,
          templateLimit,
          podRevision: pod.metadata?.labels?.["controller-revision-hash"],
          updateRevision: workload?.status?.updateRevision,
          ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
        });
        if (!stuck) continue;
        const target = this.podRef(pass, pod);
        await this.act(pass, reconcileId, {
          action: "replace-pod",
          reason: "OOMKilled",
          verb: "delete",
          target,
          message: `deleted pod ${target.name}, OOMKilled at its old memory limit ${killed.limit}: the StatefulSet recreates it with ${templateLimit ?? "?"} (it replaces no pod that is not Ready by itself)`,
          run: () => this.deleteExactly(target, pod, {}),
        });
      }
    }
  }

  /** Once status carries an override the workload does not show yet, the platform controller renders it. */
  private pokeReconciler(pass: Pass, key: string): void {
    const stale = Object.entries(pass.platform.status?.healing?.memoryOverrides ?? {}).some(
      ([component, o]) => {
        const info = componentByName(component);
        if (!info) return false;
        const workload = this.workload(pass, info);
        const main = workload?.spec?.template?.spec?.containers?.find((c) => c.name === info.name);
        return main !== undefined && !sameQuantity(main.resources?.limits?.memory, o.memoryLimit);
      },
    );
    if (stale) this.deps.requestReconcile(key);
  }

  // ------------------------------------------------------------------ CrashLoopBackOff

  private diagnoseCrashLoops(pass: Pass, pods: PodView[]): void {
    const ns = pass.namespace;
    const secrets = this.deps.cache({ apiVersion: "v1", kind: "Secret" }, ns);
    const configMaps = this.deps.cache({ apiVersion: "v1", kind: "ConfigMap" }, ns);
    const lookups = {
      secretExists: (n: string) => secrets.getByName(ns, n) !== undefined,
      configMapExists: (n: string) => configMaps.getByName(ns, n) !== undefined,
      configMapKeys: (n: string) =>
        Object.keys(
          (configMaps.getByName(ns, n) as { data?: Record<string, string> } | undefined)?.data ?? {},
        ),
      dependencyProblem: (component: string) => this.dependencyProblem(pass, component),
    };
    const found = new Map<string, CrashDiagnosis>();
    for (const pod of pods) {
      const component = pod.metadata?.labels?.[NAME_LABEL];
      if (!component || isTerminating(pod) || found.has(component)) continue;
      // OOM kills have their own remedy; the crash loop they cause is not diagnosed twice.
      const looping = crashLooping(pod).filter((s) => !oomTermination(s));
      const first = looping[0];
      if (first) {
        found.set(component, diagnoseCrashLoop(pod, component, first, lookups));
        continue;
      }
      // What the kubelet reports for a missing Secret or ConfigMap is not a crash loop.
      for (const status of notStarting(pod)) {
        const diagnosis = diagnoseNotStarting(pod, status, lookups);
        if (diagnosis) {
          found.set(component, diagnosis);
          break;
        }
      }
    }
    const previous = pass.conditions.find((c) => c.type === HEALING_CONDITIONS.crashLoop);
    if (found.size === 0) {
      pass.condition(
        HEALING_CONDITIONS.crashLoop,
        false,
        "NoCrashLoop",
        "no platform pod is in CrashLoopBackOff or waits on a missing Secret or ConfigMap",
      );
      return;
    }
    const diagnoses = [...found.entries()].sort(([a], [b]) => a.localeCompare(b));
    const message = diagnoses.map(([component, d]) => `${component}: ${d.message}`).join("; ");
    const reason = diagnoses[0]?.[1].reason ?? "ContainerExited";
    pass.condition(HEALING_CONDITIONS.crashLoop, true, reason, message);
    pass.requeue(PENDING_RECHECK_MS);
    // An Event when the diagnosis is new or changed, not on every pass.
    if (previous?.status === "True" && previous.message === message) return;
    for (const [component, d] of diagnoses) {
      if (previous?.status === "True" && previous.message.includes(`${component}: ${d.message}`)) continue;
      pass.afterWrite.push({
        action: "diagnose",
        reason: d.reason,
        verb: "status",
        target: this.platformRef(pass),
        message: `${component}: ${d.message}`,
        warning: true,
      });
    }
  }

  /** undefined when `component`'s workload has all its pods ready; else what is missing. */
  private dependencyProblem(pass: Pass, component: string): string | undefined {
    const info = componentByName(component);
    if (!info) return undefined;
    if (!isEnabled(pass.spec, info)) return "not enabled in the spec";
    const workload = this.workload(pass, info);
    if (!workload) return `${info.kind} ${info.name} does not exist`;
    const desired = workload.spec?.replicas ?? 1;
    const ready = workload.status?.readyReplicas ?? 0;
    return ready >= desired && desired > 0 ? undefined : `${ready}/${desired} pods ready`;
  }

  // ------------------------------------------------------------------ Evicted

  private async cleanEvicted(
    pass: Pass,
    pods: PodView[],
    nodes: NodeView[],
    reconcileId: string,
  ): Promise<void> {
    for (const pod of pods) {
      if (pod.status?.phase !== "Failed" || pod.status.reason !== "Evicted" || isTerminating(pod)) continue;
      const nodeName = pod.spec?.nodeName;
      const node = nodes.find((n) => n.metadata?.name === nodeName);
      const pressure = pressureConditions(node);
      const why = pod.status.message?.trim() || "no message";
      const nodeText = !nodeName
        ? "no node recorded"
        : pressure.length > 0
          ? `node ${nodeName} reports ${pressure.join(", ")}`
          : `node ${nodeName} reports no memory, disk or PID pressure now`;
      const target = this.podRef(pass, pod);
      // Deleting a pod that already failed changes nothing that runs: it is cleanup, outside the
      // hourly budget (an eviction storm must not leave its debris because of the rate limit).
      await this.act(pass, reconcileId, {
        action: "delete-evicted",
        reason: "Evicted",
        verb: "delete",
        target,
        message: `deleted evicted pod ${target.name} (${why}); ${nodeText}`,
        warning: pressure.length > 0,
        run: () => this.deleteExactly(target, pod, {}),
      });
    }
  }

  // ------------------------------------------------------------------ node lost

  private async freeLostNodes(
    pass: Pass,
    pods: PodView[],
    nodes: NodeView[],
    reconcileId: string,
  ): Promise<void> {
    const policy = pass.spec.selfHealing;
    const graceMs = policy.nodeLossGraceSeconds * 1000;
    const pool = pass.spec.global.nodePool;
    const assessment = assessNodeLoss(nodes, pool, graceMs, pass.now);
    const onNotReady = (node: NodeView): PodView[] =>
      pods.filter((p) => p.spec?.nodeName === node.metadata?.name);
    if (assessment.withheld) {
      const affected = nodes.filter((n) => isNotReady(n) && onNotReady(n).length > 0);
      if (affected.length > 0) {
        const { notReady, total } = assessment.withheld;
        pass.withheld.push(
          `${notReady} of ${total} nodes of the platform's pool are NotReady: a cluster or network failure, ` +
            `not a node failure; no pod on ${affected.map((n) => n.metadata?.name ?? "?").join(", ")} is force-deleted`,
        );
        pass.requeue(PENDING_RECHECK_MS);
      }
      return;
    }
    if (
      assessment.recheckAfterMs !== undefined &&
      nodes.some((n) => isNotReady(n) && onNotReady(n).length > 0)
    )
      pass.requeue(assessment.recheckAfterMs);
    for (const node of assessment.lost) {
      const nodeName = node.metadata?.name ?? "?";
      // Pods a controller replaces by itself once they are gone (ReplicaSet pods) are left to the
      // taint-based eviction; what stays put is what needs the force: StatefulSet pods (their
      // replacement waits for the old pod to be gone) and pods stuck Terminating (no kubelet to confirm).
      // Only pods that were there when the node went away: a pod placed on it afterwards (a
      // scheduler that does not know yet) is not stranded by the loss, and freeing it would loop.
      const since = lastSeen(node);
      const stranded = onNotReady(node).filter(
        (p) => (controllerKind(p) === "StatefulSet" || isTerminating(p)) && !createdAfter(p, since),
      );
      if (stranded.length === 0) continue;
      const downSeconds = Math.round(notReadyForMs(node, pass.now) / 1000);
      const names = stranded.map((p) => p.metadata?.name ?? "?");
      for (const pod of stranded) {
        const component = pod.metadata?.labels?.[NAME_LABEL] ?? "?";
        const uid = pod.metadata?.uid ?? "";
        const freedAt = this.freed.get(uid);
        if (freedAt !== undefined && pass.now.getTime() - freedAt < FREED_MEMORY_MS) continue;
        if (!pass.allow(`force-delete pod ${pod.metadata?.name ?? "?"} on lost node ${nodeName}`)) return;
        const target = this.podRef(pass, pod);
        const deleted = await this.act(pass, reconcileId, {
          action: "force-delete",
          reason: "NodeLost",
          verb: "force-delete",
          target,
          message:
            `force-deleted pod ${target.name} stranded on node ${nodeName}, NotReady for ${downSeconds} s ` +
            `(> nodeLossGraceSeconds ${policy.nodeLossGraceSeconds}), so it is recreated on another node ` +
            `(stranded on ${nodeName}: ${names.join(", ")})`,
          warning: true,
          run: () => this.deleteExactly(target, pod, { gracePeriodSeconds: 0 }),
        });
        if (deleted) {
          pass.count(component, "force-delete");
          this.freed.set(uid, pass.now.getTime());
        }
      }
    }
  }

  // ------------------------------------------------------------------ plumbing

  /**
   * Deletes the very pod the decision was made about: the cache may still show a pod whose
   * controller has already replaced it under the same name (StatefulSet pods), and a delete by
   * name alone would hit the replacement. A UID precondition makes that a conflict: nothing to do.
   */
  private async deleteExactly(
    target: ObjectRef,
    pod: PodView,
    opts: { gracePeriodSeconds?: number },
  ): Promise<boolean> {
    const uid = pod.metadata?.uid;
    try {
      return await this.deps.client.delete(target, {
        propagationPolicy: "Background",
        ...opts,
        ...(uid ? { preconditions: { uid } } : {}),
      });
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Runs one cluster action, records it (ok or error), counts it; true when it took effect. */
  private async act(
    pass: Pass,
    reconcileId: string,
    action: Pending & { run: () => Promise<boolean> },
  ): Promise<boolean> {
    try {
      const took = await action.run();
      if (took) this.record(pass, reconcileId, action);
      return took;
    } catch (err) {
      this.record(pass, reconcileId, action, errorFields(err).error);
      return false;
    }
  }

  private record(pass: Pass, reconcileId: string, action: Pending, error?: string): void {
    this.deps.actions.record({
      platform: pass.platform,
      verb: action.verb,
      target: action.target,
      reason: action.reason,
      message: action.message,
      reconcileId,
      actor: "healer",
      outcome: error === undefined ? "ok" : "error",
      error,
      warning: action.warning,
    });
    if (error === undefined) this.deps.metrics.inc(action.action, action.reason);
    else
      this.deps.logger.warn(
        { action: action.action, target: action.target.name, error },
        "healing action failed",
      );
  }

  /**
   * Writes status.healing and the healer's conditions as a merge-patch diff, guarded by the
   * resourceVersion the decisions were made from: a status that changed meanwhile is a conflict,
   * and the pass runs again from the fresher cache instead of overwriting someone else's write.
   */
  private async writeStatus(pass: Pass): Promise<void> {
    const before = pass.platform.status ?? {};
    const healing: NonNullable<OntoPlatformStatus["healing"]> = {
      ...(Object.keys(pass.overrides).length > 0 ? { memoryOverrides: pass.overrides } : {}),
      ...(pass.recent.length > 0 ? { recentActions: pass.recent } : {}),
    };
    const after: OntoPlatformStatus = { ...before };
    if (before.conditions !== undefined || pass.conditions.length > 0) after.conditions = pass.conditions;
    if (Object.keys(healing).length > 0) after.healing = healing;
    else delete after.healing;
    const patch = mergePatchDiff(before, after);
    if (patch === undefined) return;
    await this.deps.client.mergePatch(
      this.platformRef(pass),
      { metadata: { resourceVersion: pass.platform.metadata.resourceVersion }, status: patch },
      "status",
    );
  }

  private workload(pass: Pass, info: ComponentInfo): WorkloadView | undefined {
    const found: KubeObject | undefined = this.deps
      .cache({ apiVersion: "apps/v1", kind: info.kind }, pass.namespace)
      .getByName(pass.namespace, info.name);
    return found;
  }

  private platformRef(pass: Pass): ObjectRef {
    return { ...PLATFORM_REF, namespace: pass.namespace, name: pass.platform.metadata.name };
  }

  private workloadRef(pass: Pass, info: ComponentInfo): ObjectRef {
    return { apiVersion: "apps/v1", kind: info.kind, namespace: pass.namespace, name: info.name };
  }

  private podRef(pass: Pass, pod: PodView): ObjectRef {
    return { apiVersion: "v1", kind: "Pod", namespace: pass.namespace, name: pod.metadata?.name ?? "" };
  }
}
