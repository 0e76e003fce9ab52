// The hourly budget of automatic actions (selfHealing.maxActionsPerHour), shared by the healer and
// Postgres HA's failovers. The healer's actions of the last hour live in status.healing.recentActions,
// the failovers in status.postgres.recentFailovers, so an operator restart does not reset the count.
export interface RecentAction {
  at: string;
  component: string;
  action: string;
}

export const RATE_WINDOW_MS = 60 * 60_000;
/** The schema's maxItems for recentActions. */
const MAX_KEPT = 100;

/** The actions within the last hour at `now`, oldest first, at most MAX_KEPT. */
export function withinWindow(actions: readonly RecentAction[] | undefined, now: Date): RecentAction[] {
  const from = now.getTime() - RATE_WINDOW_MS;
  return (actions ?? [])
    .filter((a) => {
      const at = Date.parse(a.at);
      return Number.isFinite(at) && at > from;
    })
    .slice(-MAX_KEPT);
}

/**
 * The healer's actions and Postgres HA's automatic failovers (status.postgres.recentFailovers) of
 * the last hour, oldest first: one budget, selfHealing.maxActionsPerHour, covers both.
 */
export function budgetSpentBy(
  actions: readonly RecentAction[] | undefined,
  failovers: readonly string[] | undefined,
  now: Date,
): RecentAction[] {
  const promotions = (failovers ?? []).map((at): RecentAction => ({
    at,
    component: "postgres",
    action: "failover",
  }));
  return withinWindow(
    [...(actions ?? []), ...promotions].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)),
    now,
  );
}

/** Whether one more action would exceed `maxPerHour`. */
export function rateLimited(recent: readonly RecentAction[], maxPerHour: number): boolean {
  return recent.length >= maxPerHour;
}

/** When the oldest action leaves the window (ms from `now`): the earliest a limited action may run. */
export function rateLimitRetryMs(recent: readonly RecentAction[], now: Date): number {
  const oldest = recent[0];
  if (!oldest) return 0;
  return Math.max(1_000, Date.parse(oldest.at) + RATE_WINDOW_MS - now.getTime());
}
