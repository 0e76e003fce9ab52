// OOM healing (seed 5.1): a component whose main container was OOMKilled gets its memory limit
// raised by selfHealing.oomMemoryFactor, rounded up to whole mebibytes, capped at
// selfHealing.maxMemory. The raise lives in status.healing.memoryOverrides (never in the user's
// spec); render puts it on the pod template, so the pods roll with the new limit.
//
// Pure: the healer passes in what it read from the caches and the clock, and applies the answer.
import { Quantity, type MemoryOverride } from "../../api/index.js";
import { metaTime } from "../../runtime/index.js";
import type { ContainerStatus, PodView } from "../shared/kube-views.js";

export const OOM_KILLED = "OOMKilled";

/** The termination that made `status` an OOM kill, if its last (or current) one was. */
export function oomTermination(status: ContainerStatus): boolean {
  return (
    status.lastState?.terminated?.reason === OOM_KILLED || status.state?.terminated?.reason === OOM_KILLED
  );
}

/** The pod's OOM-killed main container (the one named after the component), if any. */
export function oomKilledMain(
  pod: PodView,
  component: string,
): { limit?: string; request?: string } | undefined {
  const status = pod.status?.containerStatuses?.find((s) => s.name === component);
  if (!status || !oomTermination(status)) return undefined;
  const container = pod.spec?.containers?.find((c) => c.name === component);
  const limit = container?.resources?.limits?.memory;
  const request = container?.resources?.requests?.memory;
  return { ...(limit ? { limit } : {}), ...(request ? { request } : {}) };
}

export interface OomPolicy {
  oomMemoryFactor: number;
  maxMemory: string;
  cooldownSeconds: number;
}

export interface OomInput {
  component: string;
  /** Memory limit of the container that was OOMKilled (what the pod ran with). */
  podLimit: string;
  /** Its memory request. */
  podRequest?: string | undefined;
  /** The override in status now, if any. */
  override?: MemoryOverride | undefined;
  /** spec ... resources.limits.memory, if the user set one. */
  specLimit?: string | undefined;
  /** spec ... resources.requests.memory (resolved). */
  specRequest?: string | undefined;
  policy: OomPolicy;
  now: Date;
}

export type OomDecision =
  /** The pod ran with an older, lower limit than the one now in force: its template is rolling away. */
  | { kind: "stale"; reason: string }
  /** Raised less than cooldownSeconds ago: wait (retryAfterMs) before raising again. */
  | { kind: "cooldown"; retryAfterMs: number }
  /** The limit is at selfHealing.maxMemory already: no raise; the component is degraded. */
  | { kind: "atCap"; limit: string; cap: string }
  | { kind: "raise"; from: string; override: MemoryOverride };

function q(text: string): Quantity {
  return Quantity.parse(text);
}

function max(a: string, b: string | undefined): string {
  return b !== undefined && q(b).compareTo(q(a)) > 0 ? b : a;
}

/**
 * What to do about one OOM kill. Old pods of a template that is rolling away still carry the old
 * limit: comparing the pod's own limit with the limit in force (override, else spec) keeps a
 * burst of OOM kills from raising more than once per raise, even without a cooldown.
 */
export function planMemoryRaise(input: OomInput): OomDecision {
  const { podLimit, override, policy, now } = input;
  const inForce = override ? max(override.memoryLimit, input.specLimit) : input.specLimit;
  if (inForce !== undefined && q(podLimit).compareTo(q(inForce)) < 0) {
    return {
      kind: "stale",
      reason: `pod ran with ${podLimit}; ${inForce} is in force and rolling out`,
    };
  }
  const cap = q(policy.maxMemory);
  if (q(podLimit).compareTo(cap) >= 0) return { kind: "atCap", limit: podLimit, cap: policy.maxMemory };
  if (override) {
    const since = now.getTime() - Date.parse(override.raisedAt);
    const cooldownMs = policy.cooldownSeconds * 1000;
    if (Number.isFinite(since) && since < cooldownMs)
      return { kind: "cooldown", retryAfterMs: cooldownMs - since };
  }
  let raised = q(podLimit).times(policy.oomMemoryFactor).toBinaryString();
  const atCap = q(raised).compareTo(cap) >= 0;
  if (atCap) raised = policy.maxMemory;
  // The request follows only when it would otherwise exceed the new limit.
  const request = input.override?.memoryRequest ?? input.specRequest ?? input.podRequest;
  const memoryRequest = request !== undefined && q(request).compareTo(q(raised)) > 0 ? raised : undefined;
  return {
    kind: "raise",
    from: podLimit,
    override: {
      memoryLimit: raised,
      ...(memoryRequest ? { memoryRequest } : {}),
      raisedAt: metaTime(now),
      raises: (override?.raises ?? 0) + 1,
      atCap,
    },
  };
}

/**
 * The documented rule for a spec change: an override no higher than the limit the user now sets
 * is dropped (the user's limit already gives what healing gave, or more). A higher override stays:
 * the OOM kills that caused it happened above the user's new limit.
 */
export function overrideSuperseded(override: MemoryOverride, specLimit: string | undefined): boolean {
  return specLimit !== undefined && q(override.memoryLimit).compareTo(q(specLimit)) <= 0;
}

/** Whether two memory quantities are equal in value ("1024Mi" equals "1Gi"). */
export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return q(a).compareTo(q(b)) === 0;
}

/**
 * Whether an OOM-killed StatefulSet pod must be deleted for the raised limit to reach it. A
 * StatefulSet with the default OrderedReady policy never replaces a pod that is not Ready, so a
 * pod OOM-killed on every start keeps its old revision (and its old limit) for good once the
 * template carries the raise: Kubernetes' documented remedy is to delete that pod, which the
 * StatefulSet then recreates from the new template. True only when the template already carries a
 * higher limit than the pod, the pod is of another revision than the StatefulSet's update
 * revision, and it is not Ready. (A Deployment replaces such pods by itself.)
 */
export function stuckOnOldLimit(input: {
  podLimit: string;
  templateLimit: string | undefined;
  podRevision: string | undefined;
  updateRevision: string | undefined;
  ready: boolean;
}): boolean {
  const { podLimit, templateLimit, podRevision, updateRevision, ready } = input;
  if (ready || templateLimit === undefined || !podRevision || !updateRevision) return false;
  return podRevision !== updateRevision && q(templateLimit).compareTo(q(podLimit)) > 0;
}
