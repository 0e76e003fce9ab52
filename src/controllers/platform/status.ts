// The platform's status, computed from what the cluster holds: per-component readiness from the
// workloads, per-plane summaries, the phase, and conditions with reasons a person can act on.
// A pure function of its inputs (the clock is an argument), so it is unit-tested without a cluster.
import {
  PLANES,
  enabledComponents,
  componentSpec,
  COMPONENTS,
  CONDITION,
  REASON,
  VERSION_LABEL,
  boundedList,
  boundedText,
  type ComponentState,
  type Condition,
  type ConditionType,
  type OntoPlatformStatus,
  type Plane,
  type PlaneState,
  type PlatformPhase,
  type Reason,
  type ResolvedSpec,
} from "../../api/index.js";
import { setCondition } from "../../runtime/index.js";
import {
  statefulSetOnUpdateRevision,
  type StatefulSetUpdateStrategy,
  type WorkloadStatus,
} from "../shared/kube-views.js";
import type { ForeignField } from "./foreign.js";

/** What the status reads of a component's Deployment or StatefulSet. */
export interface ComponentWorkload {
  kind: "Deployment" | "StatefulSet";
  generation?: number;
  labels?: Record<string, string>;
  spec?: { replicas?: number; updateStrategy?: StatefulSetUpdateStrategy };
  status?: WorkloadStatus;
  /** Why one of its pods cannot be scheduled (the scheduler's message), if one cannot. */
  unschedulable?: string;
}

/** Something the spec asks for that the operator cannot realise, named by its field. */
export interface SpecProblem {
  field: string;
  reason: Reason;
  message: string;
}

export interface StatusInput {
  spec: ResolvedSpec;
  generation: number;
  previous: OntoPlatformStatus | undefined;
  /** Workloads by component name (absent: not created yet). */
  workloads: ReadonlyMap<string, ComponentWorkload>;
  /** Apply or prune failures of this reconcile, one line each. */
  applyErrors: string[];
  problems: SpecProblem[];
  /** Objects applied (created, changed, drift reverted) or pruned by this reconcile. */
  changed: number;
  paused: boolean;
  /** Items other field managers hold in the operator's objects (reported, never fought over). */
  foreign?: readonly ForeignField[];
  now: Date;
}

/** The workload's controller has seen its latest spec. */
function observedByController(workload: ComponentWorkload): boolean {
  return (workload.status?.observedGeneration ?? 0) >= (workload.generation ?? 0);
}

function componentState(
  name: string,
  desiredFromSpec: number,
  workload: ComponentWorkload | undefined,
): ComponentState {
  if (!workload) return { ready: 0, desired: desiredFromSpec, phase: "Pending", message: "not created yet" };
  const desired = workload.spec?.replicas ?? desiredFromSpec;
  const s = workload.status ?? {};
  const ready = s.readyReplicas ?? 0;
  const updated = s.updatedReplicas ?? 0;
  const observed = observedByController(workload);
  const version = workload.labels?.[VERSION_LABEL];
  const base = { ready, desired, ...(version ? { version } : {}) };
  const rolledOut =
    workload.kind === "StatefulSet"
      ? statefulSetOnUpdateRevision(workload)
      : updated >= desired && (s.replicas ?? 0) <= desired;
  if (observed && ready >= desired && rolledOut) return { ...base, phase: "Ready" };
  const what = !observed
    ? `${name}: change not yet observed by its controller`
    : !rolledOut
      ? `${name}: rolling out (${updated}/${desired} updated, ${ready} ready)`
      : `${name}: ${ready}/${desired} pods ready`;
  // The scheduler's reason says what a person must change (capacity, node pool, GPUs); a count alone does not.
  if (workload.unschedulable)
    return {
      ...base,
      phase: "Progressing",
      message: boundedText(`${what}; a pod cannot be scheduled: ${workload.unschedulable}`),
    };
  return { ...base, phase: "Progressing", message: what };
}

/**
 * The workload's only change in flight is its replica count, with at least the wanted pods Ready:
 * spec.replicas moved and its controller has not caught up yet, or surplus pods of the current
 * template are still going after a scale-down. A template change leaves spec.replicas alone, and
 * the old pods at a rollout's end are not of the current template, so neither counts.
 */
function onlyScaling(workload: ComponentWorkload | undefined): boolean {
  const desired = workload?.spec?.replicas;
  if (!workload || desired === undefined) return false;
  const s = workload.status ?? {};
  if ((s.readyReplicas ?? 0) < desired) return false;
  const observed = observedByController(workload);
  if (!observed) return (s.replicas ?? 0) !== desired;
  if (workload.kind === "StatefulSet") return statefulSetOnUpdateRevision(workload);
  // Surplus pods all of the current template: a scale-down. Surplus of an older one: a rollout's tail.
  return (s.updatedReplicas ?? 0) >= Math.max(desired, s.replicas ?? 0);
}

function planeState(states: ComponentState[]): PlaneState {
  if (states.length === 0) return "Disabled";
  return states.every((s) => s.phase === "Ready") ? "Ready" : "NotReady";
}

function condition(
  type: ConditionType,
  status: "True" | "False",
  reason: Reason,
  message: string,
): { type: ConditionType; status: "True" | "False"; reason: Reason; message: string } {
  return { type, status, reason, message };
}

/** The whole status (keeps `upgrade`, `healing` and `postgres`, which other parts of the operator own). */
export function computeStatus(input: StatusInput): OntoPlatformStatus {
  const { spec, previous, now } = input;
  const componentStatuses: Record<string, ComponentState> = {};
  const byPlane = new Map<Plane, ComponentState[]>(PLANES.map((p) => [p, []]));
  for (const component of enabledComponents(spec)) {
    let state = componentState(
      component.name,
      componentSpec(spec, component).replicas,
      input.workloads.get(component.name),
    );
    // Healing raised memory up to selfHealing.maxMemory and the component is still not Ready:
    // waiting will not help, a person must look (the healer's MemoryAtCap condition says more).
    const override = previous?.healing?.memoryOverrides?.[component.name];
    if (override?.atCap && state.phase !== "Ready") {
      state = {
        ...state,
        phase: "Degraded",
        message: `${component.name}: memory raised to the cap (${override.memoryLimit}) after OOM kills and still not Ready`,
      };
    }
    componentStatuses[component.name] = state;
    byPlane.get(component.plane)?.push(state);
  }
  const components = Object.fromEntries(PLANES.map((p) => [p, planeState(byPlane.get(p) ?? [])])) as Record<
    Plane,
    PlaneState
  >;
  const states = Object.entries(componentStatuses);
  const readyCount = states.filter(([, s]) => s.phase === "Ready").length;
  const notReady = states.filter(([, s]) => s.phase !== "Ready");
  const allReady = notReady.length === 0;
  // A component whose only change is its number of pods (an autoscaler's step) with at least the
  // wanted number Ready has lost nothing a user sees: a platform that was Running stays Running
  // instead of flickering Degraded on every step. A template rollout still counts as not Ready, so
  // Running keeps meaning "rolled out".
  const scaling = notReady.filter(
    ([n, s]) => s.phase === "Progressing" && onlyScaling(input.workloads.get(n)),
  );
  const available = notReady.length === scaling.length;

  let conditions: Condition[] = [...(previous?.conditions ?? [])];
  const set = (c: ReturnType<typeof condition>): void => {
    conditions = setCondition(conditions, { ...c, observedGeneration: input.generation }, now);
  };

  // Each list is bounded as a whole: the CRD refuses a status with a message above MAX_MESSAGE.
  const errorMessage = boundedList(input.applyErrors);
  const problemMessage = boundedList(input.problems.map((p) => `${p.field}: ${p.message}`));
  if (allReady)
    set(
      condition(
        CONDITION.Available,
        "True",
        REASON.AllComponentsReady,
        `${readyCount}/${states.length} components ready`,
      ),
    );
  else if (available)
    set(
      condition(
        CONDITION.Available,
        "True",
        REASON.ComponentsScaling,
        boundedText(
          `${readyCount}/${states.length} components ready; ${notReady.map(([n]) => n).join(", ")} scaling with every wanted pod Ready`,
        ),
      ),
    );
  else
    set(
      condition(
        CONDITION.Available,
        "False",
        REASON.ComponentsNotReady,
        boundedText(
          `${readyCount}/${states.length} components ready; waiting for ${notReady.map(([n]) => n).join(", ")}`,
        ),
      ),
    );

  if (input.paused)
    set(
      condition(
        CONDITION.Progressing,
        "False",
        REASON.Paused,
        "spec.paused is true: the operator changes nothing",
      ),
    );
  else if (input.changed > 0)
    set(
      condition(
        CONDITION.Progressing,
        "True",
        REASON.Applied,
        `applied ${input.changed} change(s) to the cluster`,
      ),
    );
  else if (!allReady)
    set(
      condition(
        CONDITION.Progressing,
        "True",
        REASON.WaitingForComponents,
        boundedList(notReady.map(([, s]) => s.message ?? "").filter(Boolean)),
      ),
    );
  else
    set(condition(CONDITION.Progressing, "False", REASON.ReconcileComplete, "the cluster matches the spec"));

  if (input.applyErrors.length > 0)
    set(condition(CONDITION.Degraded, "True", REASON.ApplyFailed, errorMessage));
  else if (input.problems[0])
    set(condition(CONDITION.Degraded, "True", input.problems[0].reason, problemMessage));
  else set(condition(CONDITION.Degraded, "False", REASON.AsExpected, "no problem found"));

  // Written only once there is something to say, and set back to False when it is gone.
  const foreign = input.foreign ?? [];
  if (foreign.length > 0)
    set(
      condition(
        CONDITION.ForeignChanges,
        "True",
        REASON.OtherManager,
        boundedList(foreign.map((f) => `${f.object} ${f.path}: held by ${f.manager}, left in place`)),
      ),
    );
  else if (conditions.some((c) => c.type === CONDITION.ForeignChanges))
    set(
      condition(
        CONDITION.ForeignChanges,
        "False",
        REASON.NoForeignChanges,
        "no other manager holds items of the operator's objects",
      ),
    );

  const wasRunning =
    previous?.phase === "Running" || previous?.phase === "Degraded" || previous?.phase === "Upgrading";
  // status.upgrade is written by the upgrade orchestrator before this runs (write-ahead).
  const upgrading = previous?.upgrade?.phase === "InProgress" || previous?.upgrade?.phase === "RollingBack";
  // An upgrade stopped past a point of no return is not over: it waits for a forward fix.
  const forwardFix = previous?.upgrade?.phase === "ForwardFix";
  const phase: PlatformPhase =
    input.applyErrors.length > 0
      ? "Error"
      : upgrading
        ? "Upgrading"
        : input.problems.length > 0 || forwardFix
          ? "Degraded"
          : allReady || (wasRunning && available)
            ? "Running"
            : wasRunning
              ? "Degraded"
              : "Provisioning";

  const versions = new Set(states.map(([, s]) => s.version));
  const version =
    allReady && versions.size === 1 && versions.has(spec.version) ? spec.version : previous?.version;

  return {
    ...(previous?.upgrade ? { upgrade: previous.upgrade } : {}),
    ...(previous?.healing ? { healing: previous.healing } : {}),
    ...(previous?.postgres ? { postgres: previous.postgres } : {}),
    ...(previous?.verticalScaling ? { verticalScaling: previous.verticalScaling } : {}),
    phase,
    ...(version ? { version } : {}),
    observedGeneration: input.generation,
    ready: `${readyCount}/${states.length}`,
    readyComponents: readyCount,
    totalComponents: states.length,
    conditions,
    components,
    componentStatuses,
  };
}

/** All component names, for callers that need to look up workloads. */
export const COMPONENT_NAMES: readonly string[] = COMPONENTS.map((c) => c.name);
