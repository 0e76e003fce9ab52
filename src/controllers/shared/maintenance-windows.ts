// Maintenance windows (spec.maintenance.windows): whether one is open at a given instant, until
// when, and when the next opens. Cron expressions and time zones are a solved problem: croner
// (no dependencies, zones through the runtime's Intl, so daylight-saving jumps follow the IANA
// data Node ships) evaluates the start; this file only adds the duration. The instant is always an
// argument: the caller passes the runtime clock.
import { Cron } from "croner";

/** Platform annotation: "true" lets held pod restarts (and a waiting upgrade) go ahead now, outside a window. */
export const APPROVE_RESTARTS_ANNOTATION = "onto.paas/approve-restarts";

export interface MaintenanceWindow {
  start: string;
  duration: string;
  timeZone: string;
}

export interface WindowState {
  /** No window is configured: nothing waits for one. */
  unrestricted: boolean;
  open: boolean;
  /** When the open window closes (the latest end of the windows open now). */
  openUntil?: Date;
  /** When the next window opens (after now). */
  next?: Date;
  /** Windows that cannot be evaluated, each naming its field; they never open. */
  problems: string[];
}

/** Milliseconds of a duration such as 4h, 1h30m, 90s (the schema's pattern); undefined if malformed. */
export function durationMs(text: string): number | undefined {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m || text === "") return undefined;
  const [h, min, s] = [m[1], m[2], m[3]].map((v) => Number(v ?? 0)) as [number, number, number];
  return ((h * 60 + min) * 60 + s) * 1000;
}

/** A week: longer windows would make "the start before now" search meaningless. */
const MAX_DURATION_MS = 7 * 24 * 3600_000;

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The state of `windows` at `now`. */
export function windowState(windows: readonly MaintenanceWindow[], now: Date): WindowState {
  const state: WindowState = { unrestricted: windows.length === 0, open: false, problems: [] };
  windows.forEach((w, i) => {
    const field = `spec.maintenance.windows[${i}]`;
    const length = durationMs(w.duration);
    if (length === undefined || length <= 0 || length > MAX_DURATION_MS) {
      state.problems.push(
        `${field}.duration: "${w.duration}" is not a duration between 1s and 7 days (e.g. 4h, 90m)`,
      );
      return;
    }
    if (!validZone(w.timeZone)) {
      state.problems.push(`${field}.timeZone: "${w.timeZone}" is not an IANA time zone`);
      return;
    }
    let cron: Cron;
    try {
      cron = new Cron(w.start, { timezone: w.timeZone });
    } catch (err) {
      state.problems.push(`${field}.start: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const last = cron.previousRuns(1, now)[0];
    if (last && now.getTime() < last.getTime() + length) {
      state.open = true;
      const end = new Date(last.getTime() + length);
      if (!state.openUntil || end > state.openUntil) state.openUntil = end;
    }
    const next = cron.nextRun(now);
    if (next && (!state.next || next < state.next)) state.next = next;
  });
  return state;
}
