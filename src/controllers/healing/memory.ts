// OOM healing decisions of a pass (the arithmetic is oom.ts's): overrides the spec has caught up
// with are dropped, an OOMKilled component gets its limit raised (within the hourly budget, the
// cooldown and selfHealing.maxMemory), and a component at the cap is reported. Status-only: the
// platform reconciler renders the overrides; `needsRender` says when to ask it to.
import {
  CONDITION,
  NAME_LABEL,
  REASON,
  componentByName,
  componentSpec,
  enabledComponents,
  isEnabled,
} from "../../api/index.js";
import type { PodView, WorkloadView } from "../shared/kube-views.js";
import { oomKilledMain, overrideSuperseded, planMemoryRaise, sameQuantity } from "./oom.js";
import type { HealingView, Pass } from "./pass.js";

/** The documented rule: an override at or below the spec's new limit is dropped. */
export function reconsiderOverrides(pass: Pass): void {
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
      target: pass.platformRef(),
      message: enabled
        ? `dropped the healed memory limit ${override.memoryLimit} of ${component}: the spec now sets ${specLimit ?? "?"}`
        : `dropped the healed memory limit of ${component}: the component is no longer enabled`,
    });
  }
}

/** Raises the memory of components whose main container was OOMKilled in one of `pods`. */
export function healOom(pass: Pass, pods: readonly PodView[]): void {
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
        target: pass.workloadRef(info),
        message,
        warning: true,
      });
      pass.condition(CONDITION.MemoryRaised, true, REASON.OOMKilled, message);
      break;
    }
  }
  pass.condition(
    CONDITION.MemoryAtCap,
    atCap.length > 0,
    atCap.length > 0 ? REASON.MemoryAtCap : REASON.BelowCap,
    atCap.length > 0 ? atCap.join("; ") : "no component is OOMKilled at selfHealing.maxMemory",
  );
  if (Object.keys(pass.overrides).length === 0)
    pass.condition(CONDITION.MemoryRaised, false, REASON.NoOverride, "no memory limit raised by healing");
}

/** Whether status carries an override a workload does not show yet (the reconciler must render it). */
export function needsRender(pass: Pass, view: Pick<HealingView, "workload">): boolean {
  return Object.entries(pass.platform.status?.healing?.memoryOverrides ?? {}).some(([component, o]) => {
    const info = componentByName(component);
    if (!info) return false;
    const workload: WorkloadView | undefined = view.workload(info);
    const main = workload?.spec?.template?.spec?.containers?.find((c) => c.name === info.name);
    return main !== undefined && !sameQuantity(main.resources?.limits?.memory, o.memoryLimit);
  });
}
