// Crash-loop decisions of a pass: every crash-looping platform pod (OOM kills excepted: they have
// their own remedy), and every pod the kubelet cannot start for a missing Secret or ConfigMap, is
// diagnosed (crashloop.ts), one diagnosis per component, into the CrashLoop condition, with an
// Event when a diagnosis is new or changed. Nothing is restarted.
import { CONDITION, NAME_LABEL, REASON, componentByName, isEnabled } from "../../api/index.js";
import { isTerminating, type PodView } from "../shared/kube-views.js";
import {
  crashLooping,
  diagnoseCrashLoop,
  diagnoseNotStarting,
  notStarting,
  type CrashDiagnosis,
  type DiagnosisLookups,
} from "./crashloop.js";
import { oomTermination } from "./oom.js";
import { PENDING_RECHECK_MS, type HealingView, type Pass } from "./pass.js";

/** undefined when `component`'s workload has all its pods ready; else what is missing. */
function dependencyProblem(pass: Pass, view: HealingView, component: string): string | undefined {
  const info = componentByName(component);
  if (!info) return undefined;
  if (!isEnabled(pass.spec, info)) return "not enabled in the spec";
  const workload = view.workload(info);
  if (!workload) return `${info.kind} ${info.name} does not exist`;
  const desired = workload.spec?.replicas ?? 1;
  const ready = workload.status?.readyReplicas ?? 0;
  return ready >= desired && desired > 0 ? undefined : `${ready}/${desired} pods ready`;
}

/** What the diagnosis looks up, answered from the pass's caches. */
export function diagnosisLookups(pass: Pass, view: HealingView): DiagnosisLookups {
  const ns = pass.namespace;
  return {
    secretExists: (n) => view.secrets.getByName(ns, n) !== undefined,
    configMapExists: (n) => view.configMaps.getByName(ns, n) !== undefined,
    configMapKeys: (n) =>
      Object.keys(
        (view.configMaps.getByName(ns, n) as { data?: Record<string, string> } | undefined)?.data ?? {},
      ),
    dependencyProblem: (component) => dependencyProblem(pass, view, component),
  };
}

export function diagnoseCrashLoops(pass: Pass, pods: readonly PodView[], lookups: DiagnosisLookups): void {
  const found = new Map<string, CrashDiagnosis>();
  for (const pod of pods) {
    const component = pod.metadata?.labels?.[NAME_LABEL];
    if (!component || isTerminating(pod) || found.has(component)) continue;
    // OOM kills have their own remedy; the crash loop they cause is not diagnosed twice.
    const first = crashLooping(pod).filter((s) => !oomTermination(s))[0];
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
  const previous = pass.conditions.find((c) => c.type === CONDITION.CrashLoop);
  if (found.size === 0) {
    pass.condition(
      CONDITION.CrashLoop,
      false,
      REASON.NoCrashLoop,
      "no platform pod is in CrashLoopBackOff or waits on a missing Secret or ConfigMap",
    );
    return;
  }
  const diagnoses = [...found.entries()].sort(([a], [b]) => a.localeCompare(b));
  const message = diagnoses.map(([component, d]) => `${component}: ${d.message}`).join("; ");
  const reason = diagnoses[0]?.[1].reason ?? REASON.ContainerExited;
  pass.condition(CONDITION.CrashLoop, true, reason, message);
  pass.requeue(PENDING_RECHECK_MS);
  // An Event when the diagnosis is new or changed, not on every pass.
  if (previous?.status === "True" && previous.message === message) return;
  for (const [component, d] of diagnoses) {
    if (previous?.status === "True" && previous.message.includes(`${component}: ${d.message}`)) continue;
    pass.afterWrite.push({
      action: "diagnose",
      reason: d.reason,
      verb: "status",
      target: pass.platformRef(),
      message: `${component}: ${d.message}`,
      warning: true,
    });
  }
}
