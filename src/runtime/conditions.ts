// status.conditions as the Kubernetes API conventions define them: one entry per type;
// lastTransitionTime moves only when the status changes; reason is a CamelCase word a program
// can match; observedGeneration says which spec the condition speaks about.

export type ConditionStatus = "True" | "False" | "Unknown";

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionUpdate = Omit<Condition, "lastTransitionTime" | "message"> & { message?: string };

const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_MESSAGE = 32_768;

/** metav1.Time: RFC 3339 with second precision. */
export function metaTime(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Returns `conditions` with `update` set: a new entry gets `now` as lastTransitionTime; an entry
 * whose status does not change keeps its lastTransitionTime (reason, message, observedGeneration
 * still update). The input array is not modified.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date,
): Condition[] {
  if (!update.type) throw new Error("condition: type must not be empty");
  if (!REASON.test(update.reason)) {
    throw new Error(
      `condition ${update.type}: reason "${update.reason}" must be a CamelCase word (${REASON.source})`,
    );
  }
  const message = (update.message ?? "").slice(0, MAX_MESSAGE);
  const list = [...(conditions ?? [])];
  const at = list.findIndex((c) => c.type === update.type);
  const existing = at >= 0 ? list[at] : undefined;
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message,
    lastTransitionTime:
      existing && existing.status === update.status ? existing.lastTransitionTime : metaTime(now),
    ...(update.observedGeneration !== undefined ? { observedGeneration: update.observedGeneration } : {}),
  };
  if (at >= 0) list[at] = next;
  else list.push(next);
  return list;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** Same entries (order ignored): lets a reconcile skip a status write that would change nothing. */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((c) => {
    const other = findCondition(right, c.type);
    return (
      other !== undefined &&
      other.status === c.status &&
      other.reason === c.reason &&
      other.message === c.message &&
      other.lastTransitionTime === c.lastTransitionTime &&
      other.observedGeneration === c.observedGeneration
    );
  });
}
