// The upgrade orchestrator (seed 3.2): a change of spec.version is rolled out component by
// component in plane order, each one first as a canary (a `<name>-canary` Deployment, or the
// highest StatefulSet ordinal through a partition), promoted when the canary stayed Ready for the
// soak time, and rolled back when it fails. It plugs into the platform reconciler as
// PlatformHooks.upgradeStep: every reconcile it decides, from status.upgrade (written ahead of
// every action) and what the informer caches show, which version each component renders. It
// keeps no state of its own, so an operator restarted at any point resumes the same step: the
// canary it finds is the one it created, a promoted component keeps rolling forward, a rollback
// goes on until the component is back.
import { APPROVE_RESTARTS_ANNOTATION, windowState } from "../shared/maintenance-windows.js";
import {
  COMPONENTS,
  INSTANCE_LABEL,
  NAME_LABEL,
  PLATFORM_REF,
  CONDITION,
  REASON,
  VERSION_LABEL,
  componentByName,
  componentSpec,
  enabledComponents,
  type ComponentInfo,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
  type UpgradeStatus,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { PRODUCT_CATALOG, type ImageSource, type ReleaseCatalog } from "../../release/index.js";
import { TRACK_LABEL, canaryName, type ComponentRollout, type UpgradeStep } from "../../render/index.js";
import { CacheNotSyncedError, metaTime, type ReadonlyStore } from "../../runtime/index.js";
import type { Registry } from "prom-client";
import { FLEET_RECHECK_MS, fleetWaitText, type FleetLimit } from "../shared/fleet-limit.js";
import type { PlatformHooks, UpgradeDecision } from "../shared/upgrade-decision.js";
import { isTerminating, type PodView, type WorkloadView } from "../shared/kube-views.js";
import {
  deploymentRolledOut,
  notReadyText,
  podFault,
  readySince,
  runsImage,
  statefulSetPods,
  statefulSetRolledOut,
  stuckStatefulSetPods,
  templateRuns,
  type Fault,
} from "./health.js";
import { UpgradeMetrics, type UpgradeResult } from "./metrics.js";
import { imageAt, imageSource, pathFor, planUpgrade } from "./plan.js";
import { forwardFixFor, passedPoint, refusedRollback } from "./points-of-no-return.js";

/** Set (any new value) on a platform whose upgrade failed to try the same version again. */
export const RETRY_ANNOTATION = "onto.paas/retry-upgrade";
/** "true": allow a downgrade, a skipped minor version, or a start while Degraded. */
export const FORCE_ANNOTATION = "onto.paas/force-upgrade";

/** While waiting for pods, look again this often even without a watch event. */
const POLL_MS = 2_000;
const BLOCKED_RECHECK_MS = 15_000;
const ACTIVE = new Set<UpgradeStatus["phase"]>(["InProgress", "RollingBack"]);

type Ref = { apiVersion: string; kind: string };
const DEPLOYMENT: Ref = { apiVersion: "apps/v1", kind: "Deployment" };
const STATEFULSET: Ref = { apiVersion: "apps/v1", kind: "StatefulSet" };
export const POD: Ref = { apiVersion: "v1", kind: "Pod" };

export interface UpgradeOrchestratorDeps {
  /** The informer cache of a kind in a namespace (Deployments, StatefulSets, Pods, OntoPlatforms). */
  cache: (kind: Ref, namespace: string) => ReadonlyStore<KubeObject>;
  /** Registry for onto_upgrade_duration_seconds and onto_upgrades_total. */
  registry: Registry;
  releases?: ReleaseCatalog | undefined;
  now?: () => Date;
  /** The operator's fleet limit: an upgrade starts only with a slot (absent: no limit). */
  fleet?: FleetLimit | undefined;
}

type Note = NonNullable<UpgradeDecision["notes"]>[number];

/** What one reconcile sees: the platform, its spec and the cached workloads and pods. */
interface Scene {
  platform: OntoPlatform;
  spec: ResolvedSpec;
  status: OntoPlatformStatus;
  now: Date;
  enabled: ComponentInfo[];
  images: ImageSource;
}

/** How a step is going. */
type Health =
  { state: "done" } | { state: "failed"; fault: Fault } | { state: "waiting"; why: string; inMs?: number };

function workloadRef(c: ComponentInfo): Note["target"] {
  return { apiVersion: "apps/v1", kind: c.kind, name: c.name };
}

export class UpgradeOrchestrator implements Required<PlatformHooks> {
  private readonly releases: ReleaseCatalog;
  private readonly metrics: UpgradeMetrics;
  private readonly now: () => Date;

  constructor(private readonly deps: UpgradeOrchestratorDeps) {
    this.releases = deps.releases ?? PRODUCT_CATALOG;
    this.metrics = new UpgradeMetrics(deps.registry);
    this.now = deps.now ?? (() => new Date());
  }

  /** The PlatformHooks entry point (an arrow, so it can be passed around unbound). */
  upgradeStep = (platform: OntoPlatform, spec: ResolvedSpec): Promise<UpgradeDecision | undefined> =>
    Promise.resolve(this.decide(platform, spec));

  /** Keys of platforms a pod event concerns: only those with an upgrade in flight. */
  platformsFor = (pod: KubeObject): string[] => {
    const ns = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.labels?.[INSTANCE_LABEL];
    if (!name) return [];
    let platform: OntoPlatform | undefined;
    try {
      platform = this.deps.cache(PLATFORM_REF, ns).getByName(ns, name) as OntoPlatform | undefined;
    } catch (err) {
      // Before the platforms are cached, their first list enqueues every one of them anyway.
      if (err instanceof CacheNotSyncedError) return [];
      throw err;
    }
    const phase = platform?.status?.upgrade?.phase;
    return phase && ACTIVE.has(phase) ? [`${ns}/${name}`] : [];
  };

  decide(platform: OntoPlatform, spec: ResolvedSpec): UpgradeDecision | undefined {
    const scene: Scene = {
      platform,
      spec,
      status: platform.status ?? {},
      now: this.now(),
      enabled: enabledComponents(spec),
      images: imageSource(spec),
    };
    const record = scene.status.upgrade;
    if (record && ACTIVE.has(record.phase)) return this.advance(scene, record);
    return this.idle(scene, record);
  }

  // ------------------------------------------------------------------ no upgrade in flight

  /** Starts an upgrade when spec.version asks for one and the guard rails allow it; else holds. */
  private idle(scene: Scene, record: UpgradeStatus | undefined): UpgradeDecision | undefined {
    const { spec, status, platform } = scene;
    const target = spec.version;
    const running = status.version;
    // Never ran fully: nothing to upgrade from, the reconciler installs spec.version.
    if (!running) return undefined;
    const annotations = platform.metadata.annotations ?? {};
    const retry = annotations[RETRY_ANNOTATION];
    const retryAsked = retry !== undefined && retry !== record?.retryRequest;
    if (record?.phase === "Failed" && record.to === target && !retryAsked) {
      // No retry loop: a failed upgrade waits for a new spec.version or the retry annotation.
      return { step: this.pinned(scene, record) };
    }
    if (record?.phase === "ForwardFix" && record.to === target && !retryAsked) {
      // Past a point of no return: everything stays where the failure left it until a fix arrives.
      this.metrics.forwardFix(platform, true);
      return { step: this.stepOf(scene, record) };
    }
    this.metrics.forwardFix(platform, false);
    const current = this.currentVersions(scene, record);
    const plan = planUpgrade(scene.enabled, current, target, this.releases, scene.images);
    if (plan.length === 0) {
      if (running === target || !record || ACTIVE.has(record.phase) || record.to === target) return undefined;
      return {
        condition: {
          status: "False",
          reason: REASON.UpToDate,
          message: `every component already runs the image of ${target}`,
        },
      };
    }
    const hold = (): UpgradeStep => {
      const step: Record<string, ComponentRollout> = {};
      for (const c of scene.enabled) step[c.name] = { version: current.get(c.name) ?? running };
      return step;
    };
    // A version change that would undo a point of no return is refused, forced or not.
    const undo = refusedRollback(this.releases, running, target, record, scene.enabled);
    if (undo) {
      return { step: this.holdAt(scene, record, hold), condition: { status: "False", ...undo } };
    }
    const forced = spec.upgradeStrategy.force || annotations[FORCE_ANNOTATION] === "true";
    const forceHint = `set spec.upgradeStrategy.force or annotate ${FORCE_ANNOTATION}=true to do it anyway`;
    const path = pathFor(this.releases, running, target);
    if (path.path === "Refused" || (path.path === "ForceRequired" && !forced)) {
      const message =
        path.path === "Refused"
          ? `upgrade ${path.message ?? ""}: refused by the upgrade graph of release ${target} (force does not override it)`
          : `upgrade ${path.message ?? ""}: needs force; ${forceHint}`;
      return {
        step: this.holdAt(scene, record, hold),
        condition: { status: "False", reason: REASON.UpgradeRefused, message },
      };
    }
    // A platform waiting for a forward fix is Degraded by that very failure: the fix may start.
    const fixing = record?.phase === "ForwardFix";
    const degraded = status.conditions?.find((c) => c.type === CONDITION.Degraded && c.status === "True");
    if (!forced && !fixing && (status.phase === "Degraded" || status.phase === "Error" || degraded)) {
      return {
        step: hold(),
        condition: {
          status: "False",
          reason: REASON.UpgradeBlocked,
          message: `not starting ${running} -> ${target} while the platform is ${status.phase ?? "Degraded"}${degraded ? ` (${degraded.reason}: ${degraded.message})` : ""}; ${forceHint}`,
        },
        requeueAfterMs: BLOCKED_RECHECK_MS,
      };
    }
    // A version upgrade restarts pods: with maintenance windows it starts only inside one.
    const windows = windowState(spec.maintenance.windows, scene.now);
    if (!windows.unrestricted && !windows.open && annotations[APPROVE_RESTARTS_ANNOTATION] !== "true") {
      return {
        step: hold(),
        condition: {
          status: "False",
          reason: REASON.WaitingForMaintenanceWindow,
          message: `upgrade ${running} -> ${target} waits for a maintenance window${
            windows.next
              ? `: the next opens at ${windows.next.toISOString()}`
              : ": none of spec.maintenance.windows can open"
          }; annotate ${APPROVE_RESTARTS_ANNOTATION}=true to start now`,
        },
        requeueAfterMs: windows.next
          ? Math.max(1000, windows.next.getTime() - scene.now.getTime())
          : BLOCKED_RECHECK_MS,
      };
    }
    // And only while fewer platforms than the operator's fleet limit restart pods (the slot taken
    // here is kept while the upgrade is in flight: controllers/platform/disruption.ts).
    const waitingSince = status.conditions?.find(
      (c) => c.type === CONDITION.Upgrading && c.reason === REASON.WaitingForFleetLimit,
    )?.lastTransitionTime;
    const fleet = this.deps.fleet?.request(`${platform.metadata.namespace}/${platform.metadata.name}`, {
      wants: true,
      rolling: false,
      since: waitingSince ? new Date(waitingSince) : scene.now,
    });
    const first = componentByName(plan[0] ?? "");
    if (!first) return undefined;
    if (fleet && !fleet.admitted) {
      const message = `upgrade ${running} -> ${target} waits for the fleet limit: ${fleetWaitText(fleet)}`;
      return {
        step: hold(),
        condition: { status: "False", reason: REASON.WaitingForFleetLimit, message },
        // One Event when it starts waiting, not one per look.
        ...(waitingSince
          ? {}
          : { notes: [{ reason: REASON.WaitingForFleetLimit, message, target: workloadRef(first) }] }),
        requeueAfterMs: FLEET_RECHECK_MS,
      };
    }
    const started: UpgradeStatus = {
      from: running,
      to: target,
      phase: "InProgress",
      startedAt: metaTime(scene.now),
      completedComponents: [],
      planned: Object.fromEntries(plan.map((name) => [name, current.get(name) ?? running])),
      progress: `0/${plan.length}`,
      ...(retry !== undefined ? { retryRequest: retry } : {}),
      // Still past the point an earlier attempt passed: a failure of this one must not roll back across it.
      ...(record?.pointOfNoReturn && (record.phase === "ForwardFix" || record.phase === "Superseded")
        ? { pointOfNoReturn: record.pointOfNoReturn }
        : {}),
      ...this.stepFields(scene, first),
    };
    const passing = this.passing(scene, started, first);
    const notes: Note[] = [
      {
        reason: "UpgradeStarted",
        message: `upgrade ${running} -> ${target} started${retryAsked && record?.to === target ? " again (retry requested)" : ""}: ${plan.length} component(s) in order: ${plan.join(", ")}`,
        target: workloadRef(first),
      },
      this.stepNote(scene, started, first),
      ...passing.notes,
    ];
    return {
      upgrade: passing.record,
      condition: this.progressCondition(passing.record),
      step: this.stepOf(scene, passing.record),
      notes,
      requeueAfterMs: POLL_MS,
    };
  }

  /** What to render while an upgrade is refused: a forward-fix state stays frozen, else the versions running. */
  private holdAt(scene: Scene, record: UpgradeStatus | undefined, hold: () => UpgradeStep): UpgradeStep {
    return record?.phase === "ForwardFix" ? this.stepOf(scene, record) : hold();
  }

  /** `record` with the point of no return its current step passes (if any), and the note saying so. */
  private passing(
    scene: Scene,
    record: UpgradeStatus,
    c: ComponentInfo,
  ): { record: UpgradeStatus; notes: Note[] } {
    const point = passedPoint(this.releases, record, c.name, metaTime(scene.now));
    if (!point) return { record, notes: [] };
    return {
      record: { ...record, pointOfNoReturn: point },
      notes: [
        {
          reason: "PointOfNoReturn",
          message: `${c.name} ${point.step} of ${point.version} cannot be undone (${point.reason}); from here on a failure stops the upgrade for a forward fix instead of rolling back`,
          target: workloadRef(c),
          warning: true,
        },
      ],
    };
  }

  /**
   * The version each component runs: from the last upgrade record for the components it planned
   * (written before anything was applied, so it is never behind the cluster), else from the
   * workload's version label, else the version the platform fully runs.
   */
  private currentVersions(scene: Scene, record: UpgradeStatus | undefined): Map<string, string> {
    const out = new Map<string, string>();
    const ns = scene.platform.metadata.namespace;
    for (const c of scene.enabled) {
      const planned = record?.planned?.[c.name];
      if (record && planned !== undefined) {
        out.set(c.name, record.completedComponents.includes(c.name) ? record.to : planned);
        continue;
      }
      const label = this.workload(ns, c)?.metadata?.labels?.[VERSION_LABEL];
      const known = label !== undefined && this.releases.versions.includes(label) ? label : undefined;
      out.set(c.name, known ?? record?.to ?? scene.status.version ?? scene.spec.version);
    }
    return out;
  }

  // ------------------------------------------------------------------ an upgrade in flight

  private advance(scene: Scene, record: UpgradeStatus): UpgradeDecision {
    const component = componentByName(record.component ?? "");
    if (!component || record.planned?.[component.name] === undefined) {
      // A record this code did not write: end it rather than guess.
      return this.finish(scene, record, "failed", {
        ...record,
        phase: "Failed",
        failure: {
          component: record.component ?? "?",
          reason: "InvalidUpgradeState",
          message: "status.upgrade names no planned component; set spec.version again to start over",
        },
      });
    }
    const enabled = scene.enabled.some((c) => c.name === component.name);
    if (record.phase === "RollingBack") return this.rollingBack(scene, record, component, enabled);
    // Disabled in the spec while it was in flight: nothing left to upgrade there.
    if (!enabled) return this.completed(scene, record, component);
    const health =
      record.step === "Canary"
        ? this.canaryHealth(scene, record, component)
        : this.rolloutHealth(scene, record, component);
    if (health.state === "failed") return this.fail(scene, record, component, health.fault);
    if (health.state === "waiting") {
      const timeoutMs = scene.spec.upgradeStrategy.healthTimeoutSeconds * 1000;
      // The stamp is truncated to the second: count from its end, so the step never fails early.
      const since = Date.parse(record.stepStartedAt ?? record.startedAt) + 1000;
      const left = since + timeoutMs - scene.now.getTime();
      if (left <= 0) {
        const what = record.step === "Canary" ? "canary" : "rollout";
        return this.fail(scene, record, component, {
          reason: record.step === "Canary" ? "CanaryNotReady" : "RolloutTimeout",
          message: `${what} of ${component.name} not healthy after ${scene.spec.upgradeStrategy.healthTimeoutSeconds} s: ${health.why}`,
        });
      }
      return {
        step: this.stepOf(scene, record),
        requeueAfterMs: Math.max(50, Math.min(health.inMs ?? POLL_MS, left + 50)),
      };
    }
    if (record.step === "Canary") return this.promote(scene, record, component);
    return this.completed(scene, record, component);
  }

  private promote(scene: Scene, record: UpgradeStatus, c: ComponentInfo): UpgradeDecision {
    const passing = this.passing(
      scene,
      { ...record, step: "Rollout", stepStartedAt: metaTime(scene.now) },
      c,
    );
    const next = passing.record;
    const soak = scene.spec.upgradeStrategy.soakSeconds;
    return {
      upgrade: next,
      condition: this.progressCondition(next),
      step: this.stepOf(scene, next),
      notes: [
        {
          reason: "CanaryHealthy",
          message: `canary of ${c.name} (${record.to}) stayed Ready for ${soak} s without restarts`,
          target: workloadRef(c),
        },
        {
          reason: "Promoted",
          message:
            c.kind === "Deployment"
              ? `promoted ${c.name} to ${record.to}: rolling every replica (maxUnavailable 0), removing the canary`
              : `promoted ${c.name} to ${record.to}: partition 0, the remaining ordinals roll`,
          target: workloadRef(c),
        },
        ...passing.notes,
      ],
      requeueAfterMs: POLL_MS,
    };
  }

  private completed(scene: Scene, record: UpgradeStatus, c: ComponentInfo): UpgradeDecision {
    const done = [...record.completedComponents, c.name];
    const planned = this.plannedOrder(record);
    const progress = `${done.length}/${planned.length}`;
    const doneNote: Note = {
      reason: "ComponentUpgraded",
      message: `${c.name} runs ${record.to} on every replica (${progress} components)`,
      target: workloadRef(c),
    };
    const base = { ...record, completedComponents: done, progress };
    const { group: _g, component: _c, step: _s, stepStartedAt: _t, ...closed } = base;

    if (scene.spec.version !== record.to) {
      // A new spec.version arrived during the upgrade: this component finished under the old
      // target; re-plan from the versions actually running.
      const superseded: UpgradeStatus = { ...closed, phase: "Superseded", finishedAt: metaTime(scene.now) };
      const note: Note = {
        reason: "UpgradeSuperseded",
        message: `upgrade ${record.from} -> ${record.to} superseded by spec.version ${scene.spec.version} after ${progress} components; planning again from the versions running`,
        target: workloadRef(c),
      };
      const after = this.idle(scene, superseded);
      const finished = this.finish(scene, record, "superseded", superseded);
      return {
        ...after,
        upgrade: after?.upgrade ?? superseded,
        // No new plan (refused, blocked, nothing to change): after says what to render.
        step: after?.step,
        notes: [doneNote, note, ...(after?.notes ?? [])],
        committed: () => {
          finished.committed?.();
          after?.committed?.();
        },
      };
    }

    const next = planned.find((name) => !done.includes(name) && scene.enabled.some((e) => e.name === name));
    const nextInfo = next ? componentByName(next) : undefined;
    if (nextInfo) {
      const passing = this.passing(scene, { ...base, ...this.stepFields(scene, nextInfo) }, nextInfo);
      const moved = passing.record;
      return {
        upgrade: moved,
        condition: this.progressCondition(moved),
        step: this.stepOf(scene, moved),
        notes: [doneNote, this.stepNote(scene, moved, nextInfo), ...passing.notes],
        requeueAfterMs: POLL_MS,
      };
    }
    const seconds = (scene.now.getTime() - Date.parse(record.startedAt)) / 1000;
    const succeeded: UpgradeStatus = { ...closed, phase: "Succeeded", finishedAt: metaTime(scene.now) };
    return {
      ...this.finish(scene, record, "succeeded", succeeded),
      condition: {
        status: "False",
        reason: REASON.UpgradeSucceeded,
        message: `upgraded ${record.from} -> ${record.to} (${planned.length} components) in ${Math.round(seconds)} s`,
      },
      notes: [
        doneNote,
        {
          reason: "UpgradeSucceeded",
          message: `upgrade ${record.from} -> ${record.to} finished: ${planned.length} component(s) in ${Math.round(seconds)} s`,
          target: workloadRef(c),
        },
      ],
    };
  }

  /** The step failed: record why, then roll the component back to the version it ran. */
  private fail(scene: Scene, record: UpgradeStatus, c: ComponentInfo, fault: Fault): UpgradeDecision {
    if (record.pointOfNoReturn) {
      const fix = forwardFixFor(record, c.name, fault, metaTime(scene.now), RETRY_ANNOTATION);
      const finished = this.finish(scene, record, "forward-fix", fix.record);
      this.metrics.forwardFix(scene.platform, true);
      return {
        ...finished,
        step: this.stepOf(scene, fix.record),
        condition: { status: "False", reason: REASON.ForwardFixRequired, message: fix.message },
        notes: [
          { reason: "ForwardFixRequired", message: fix.message, target: workloadRef(c), warning: true },
        ],
      };
    }
    const back: UpgradeStatus = {
      ...record,
      phase: "RollingBack",
      step: "Rollback",
      stepStartedAt: metaTime(scene.now),
      failure: { component: c.name, reason: fault.reason, message: fault.message.slice(0, 4000) },
    };
    return {
      upgrade: back,
      condition: this.progressCondition(back),
      step: this.stepOf(scene, back),
      notes: [
        {
          reason: "UpgradeFailed",
          message: `${record.step === "Canary" ? "canary" : "rollout"} of ${c.name} ${record.to} failed: ${fault.reason}: ${fault.message}; rolling back to ${record.planned?.[c.name] ?? record.from}`,
          target: workloadRef(c),
          warning: true,
        },
      ],
      requeueAfterMs: POLL_MS,
    };
  }

  private rollingBack(
    scene: Scene,
    record: UpgradeStatus,
    c: ComponentInfo,
    enabled: boolean,
  ): UpgradeDecision {
    const previous = record.planned?.[c.name] ?? record.from;
    const image = imageAt(this.releases, c.name, previous, scene.images);
    const ns = scene.platform.metadata.namespace;
    const workload = this.workload(ns, c);
    const pods = this.pods(ns, scene.platform.metadata.name, c);
    let back: boolean;
    let deletePods: UpgradeDecision["deletePods"] = [];
    if (!enabled) {
      back = true; // disabled meanwhile: the reconciler prunes it, there is nothing to roll back
    } else if (c.kind === "Deployment") {
      back = deploymentRolledOut(workload, image) && !this.canary(ns, c);
    } else {
      back = statefulSetRolledOut(workload, image, pods);
      deletePods = stuckStatefulSetPods(workload, image, pods).map((p) => ({
        name: p.metadata?.name ?? "",
        reason: "RollbackStuckPod",
        message: `deleted pod ${p.metadata?.name ?? "?"} of ${c.name}: not Ready on the failed revision, a StatefulSet does not replace it by itself`,
      }));
    }
    if (!back) return { step: this.stepOf(scene, record), deletePods, requeueAfterMs: POLL_MS };

    const rolledBack: Note = {
      reason: "RolledBack",
      message: `${c.name} is back on ${previous} with every replica Ready`,
      target: workloadRef(c),
    };
    const undo = record.completedComponents;
    if (scene.spec.upgradeStrategy.rollbackScope === "Platform" && undo.length > 0) {
      const nextName = undo[undo.length - 1] ?? "";
      const nextInfo = componentByName(nextName);
      if (nextInfo) {
        const moved: UpgradeStatus = {
          ...record,
          completedComponents: undo.slice(0, -1),
          progress: `${undo.length - 1}/${this.plannedOrder(record).length}`,
          group: nextInfo.plane,
          component: nextInfo.name,
          step: "Rollback",
          stepStartedAt: metaTime(scene.now),
        };
        return {
          upgrade: moved,
          condition: this.progressCondition(moved),
          step: this.stepOf(scene, moved),
          notes: [
            rolledBack,
            {
              reason: "RollingBack",
              message: `rollbackScope Platform: rolling ${nextInfo.name} back to ${record.planned?.[nextInfo.name] ?? record.from}`,
              target: workloadRef(nextInfo),
            },
          ],
          requeueAfterMs: POLL_MS,
        };
      }
    }
    const failure = record.failure ?? { component: c.name, reason: "Unknown", message: "" };
    const { step: _s, stepStartedAt: _t, ...rest } = record;
    const failed: UpgradeStatus = {
      ...rest,
      phase: "Failed",
      component: failure.component,
      finishedAt: metaTime(scene.now),
    };
    const message = `upgrade ${record.from} -> ${record.to} failed at ${failure.component}: ${failure.reason}: ${failure.message}; rolled back (rollbackScope ${scene.spec.upgradeStrategy.rollbackScope}); set spec.version to another version, or annotate ${RETRY_ANNOTATION} to try again`;
    return {
      ...this.finish(scene, record, "failed", failed),
      condition: { status: "False", reason: REASON.UpgradeFailed, message: message.slice(0, 4000) },
      notes: [rolledBack, { reason: "UpgradeFailed", message, target: workloadRef(c), warning: true }],
    };
  }

  /** A terminal record: written, pinned, and counted once the write succeeded. */
  private finish(
    scene: Scene,
    record: UpgradeStatus,
    result: UpgradeResult,
    terminal: UpgradeStatus,
  ): UpgradeDecision {
    const seconds = (scene.now.getTime() - Date.parse(record.startedAt)) / 1000;
    return {
      upgrade: terminal,
      step: result === "succeeded" ? undefined : this.pinned(scene, terminal),
      committed: () => this.metrics.finished(result, seconds),
    };
  }

  // ------------------------------------------------------------------ health of a step

  private canaryHealth(scene: Scene, record: UpgradeStatus, c: ComponentInfo): Health {
    const ns = scene.platform.metadata.namespace;
    const image = imageAt(this.releases, c.name, record.to, scene.images);
    const pods = this.pods(ns, scene.platform.metadata.name, c);
    let pod: PodView | undefined;
    if (c.kind === "Deployment") {
      const canaries = pods.filter(
        (p) => p.metadata?.labels?.[TRACK_LABEL] === "canary" && runsImage(p, image),
      );
      const faulty = canaries.find((p) => podFault(p));
      if (faulty) return { state: "failed", fault: podFault(faulty) as Fault };
      pod = canaries[0];
      if (!pod) return { state: "waiting", why: `canary pod of ${canaryName(c.name)} not created yet` };
    } else {
      const sts = this.workload(ns, c);
      const replicas = componentSpec(scene.spec, c).replicas;
      if (!sts || !templateRuns(sts, image)) return { state: "waiting", why: `${c.name} not updated yet` };
      pod = statefulSetPods(sts, pods, replicas)[replicas - 1];
      if (!pod || !runsImage(pod, image)) {
        return { state: "waiting", why: `pod ${c.name}-${replicas - 1} not yet recreated on ${record.to}` };
      }
      const fault = podFault(pod);
      if (fault) return { state: "failed", fault };
    }
    const since = readySince(pod);
    if (since === undefined) return { state: "waiting", why: notReadyText(pod) };
    // lastTransitionTime is truncated to the second: count the soak from the end of that second.
    const left = since + 1000 + scene.spec.upgradeStrategy.soakSeconds * 1000 - scene.now.getTime();
    if (left > 0)
      return { state: "waiting", why: `canary soaking, ${Math.ceil(left / 1000)} s left`, inMs: left + 50 };
    return { state: "done" };
  }

  private rolloutHealth(scene: Scene, record: UpgradeStatus, c: ComponentInfo): Health {
    const ns = scene.platform.metadata.namespace;
    const image = imageAt(this.releases, c.name, record.to, scene.images);
    const pods = this.pods(ns, scene.platform.metadata.name, c).filter((p) => runsImage(p, image));
    for (const pod of pods) {
      const fault = podFault(pod);
      if (fault) return { state: "failed", fault };
    }
    const workload = this.workload(ns, c);
    const done =
      c.kind === "Deployment"
        ? deploymentRolledOut(workload, image) && !this.canary(ns, c)
        : statefulSetRolledOut(workload, image, this.pods(ns, scene.platform.metadata.name, c));
    if (done) return { state: "done" };
    const notReady = pods.find((p) => readySince(p) === undefined);
    const s = workload?.status ?? {};
    return {
      state: "waiting",
      why: `${c.name} rolling out (${s.updatedReplicas ?? 0} updated, ${s.readyReplicas ?? 0} ready of ${workload?.spec?.replicas ?? "?"})${notReady ? `; ${notReadyText(notReady)}` : ""}`,
    };
  }

  // ------------------------------------------------------------------ what to render

  /**
   * The version of every component for a record: done ones at the target, planned ones at the
   * version they ran, the one in flight per its step, and components the upgrade does not change
   * (same image) at the target.
   */
  private stepOf(scene: Scene, record: UpgradeStatus): UpgradeStep {
    const step = this.pinned(scene, record);
    const c = componentByName(record.component ?? "");
    if (!c || !(ACTIVE.has(record.phase) || record.phase === "ForwardFix")) return step;
    const previous = record.planned?.[c.name] ?? record.from;
    let rollout: ComponentRollout;
    if (record.phase === "RollingBack") rollout = { version: previous };
    else if (record.step === "Canary" && c.kind === "Deployment")
      rollout = { version: previous, canaryVersion: record.to };
    else if (record.step === "Canary")
      rollout = { version: record.to, partition: Math.max(0, componentSpec(scene.spec, c).replicas - 1) };
    else rollout = { version: record.to };
    return { ...step, [c.name]: rollout };
  }

  /** Every enabled component pinned where the record leaves it (no step in flight). */
  private pinned(scene: Scene, record: UpgradeStatus): UpgradeStep {
    const step: Record<string, ComponentRollout> = {};
    for (const c of scene.enabled) {
      const previous = record.planned?.[c.name];
      step[c.name] = {
        version: previous === undefined || record.completedComponents.includes(c.name) ? record.to : previous,
      };
    }
    return step;
  }

  private plannedOrder(record: UpgradeStatus): string[] {
    // COMPONENTS is in upgrade order (planes, then order within the plane).
    const planned = record.planned ?? {};
    return COMPONENTS.filter((c) => planned[c.name] !== undefined).map((c) => c.name);
  }

  private stepFields(
    scene: Scene,
    c: ComponentInfo,
  ): Pick<UpgradeStatus, "group" | "component" | "step" | "stepStartedAt"> {
    return {
      group: c.plane,
      component: c.name,
      step: scene.spec.upgradeStrategy.canary ? "Canary" : "Rollout",
      stepStartedAt: metaTime(scene.now),
    };
  }

  private stepNote(scene: Scene, record: UpgradeStatus, c: ComponentInfo): Note {
    if (record.step === "Rollout") {
      return {
        reason: "RolloutStarted",
        message: `rolling ${c.name} to ${record.to} without a canary (upgradeStrategy.canary is false)`,
        target: workloadRef(c),
      };
    }
    const replicas = componentSpec(scene.spec, c).replicas;
    return c.kind === "Deployment"
      ? {
          reason: "CanaryCreated",
          message: `canary ${canaryName(c.name)} (1 replica of ${record.to}) beside ${c.name} ${record.planned?.[c.name] ?? record.from}`,
          target: { apiVersion: "apps/v1", kind: "Deployment", name: canaryName(c.name) },
        }
      : {
          reason: "CanaryCreated",
          message: `partition ${Math.max(0, replicas - 1)}: pod ${c.name}-${Math.max(0, replicas - 1)} takes ${record.to} first`,
          target: workloadRef(c),
        };
  }

  private progressCondition(record: UpgradeStatus): NonNullable<UpgradeDecision["condition"]> {
    const where = `${record.component ?? "?"} ${record.step ?? ""}`.trim();
    if (record.phase === "RollingBack") {
      const f = record.failure;
      return {
        status: "True",
        reason: REASON.RollingBack,
        message:
          `rolling back ${record.component ?? "?"} to ${record.planned?.[record.component ?? ""] ?? record.from}${f ? ` after ${f.component} failed: ${f.reason}: ${f.message}` : ""}`.slice(
            0,
            4000,
          ),
      };
    }
    return {
      status: "True",
      reason: REASON.Upgrading,
      message: `upgrading ${record.from} -> ${record.to}: ${where}, ${record.progress ?? "0/0"} components done`,
    };
  }

  // ------------------------------------------------------------------ cache reads

  private workload(ns: string, c: ComponentInfo): WorkloadView | undefined {
    return this.deps.cache(c.kind === "Deployment" ? DEPLOYMENT : STATEFULSET, ns).getByName(ns, c.name);
  }

  private canary(ns: string, c: ComponentInfo): WorkloadView | undefined {
    return this.deps.cache(DEPLOYMENT, ns).getByName(ns, canaryName(c.name));
  }

  /** The live (not terminating) pods of a component of this platform. */
  private pods(ns: string, platform: string, c: ComponentInfo): PodView[] {
    return (this.deps.cache(POD, ns).byNamespace(ns) as PodView[]).filter(
      (p) =>
        p.metadata?.labels?.[INSTANCE_LABEL] === platform &&
        p.metadata.labels[NAME_LABEL] === c.name &&
        !isTerminating(p),
    );
  }
}

/**
 * A pod the upgrade in flight is judging: any canary, and every pod of the component being
 * upgraded or rolled back. Failures there are the upgrade's to handle (rollback), so other parts
 * of the operator (the healer) should leave such pods alone: raising memory after a canary's
 * OOM kill would restart the stable pods of a version that is about to be rolled back to.
 */
export function podUnderUpgrade(platform: OntoPlatform, pod: KubeObject): boolean {
  const labels = pod.metadata?.labels ?? {};
  if (labels[INSTANCE_LABEL] !== platform.metadata.name) return false;
  if (labels[TRACK_LABEL] === "canary") return true;
  const record = platform.status?.upgrade;
  return Boolean(record && ACTIVE.has(record.phase) && record.component === labels[NAME_LABEL]);
}
