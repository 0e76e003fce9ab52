// What `onto status` prints: the platform as a tree (planes, then components with ready/desired),
// the upgrade in flight with a progress bar, the pod restarts that wait (disruption control), the
// conditions and the recent Events. Pure: the
// clock and the colours are arguments, so the layout is unit-tested without a terminal.
import {
  COMPONENTS,
  CONDITION,
  PLANES,
  readableBytes,
  type Condition,
  type OntoPlatform,
  type OntoPlatformStatus,
  type Plane,
  type UpgradeStatus,
} from "../api/index.js";
import { changedComponents } from "../release/index.js";
import type { Palette } from "./output.js";

/** The fields of an events.k8s.io/v1 Event that status shows. */
export interface EventView {
  type?: string;
  reason?: string;
  action?: string;
  note?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  deprecatedLastTimestamp?: string;
  metadata?: { creationTimestamp?: string };
}

export interface StatusSnapshot {
  platform: OntoPlatform;
  /** Events regarding the platform, any order; the newest `maxEvents` are shown. */
  events: EventView[];
}

export interface StatusViewOptions {
  now: Date;
  colors: Palette;
  /** How many recent Events to show (default 10). */
  maxEvents?: number;
}

const PLANE_TITLES: Record<Plane, string> = {
  infrastructure: "infrastructure",
  controlPlane: "control plane",
  dataPlane: "data plane",
  intelligencePlane: "intelligence plane",
  gateway: "gateway",
};

/** kubectl-style age: 42s, 5m, 3h, 2d. */
export function age(from: string | undefined, now: Date): string {
  if (!from) return "?";
  const ms = now.getTime() - new Date(from).getTime();
  if (!Number.isFinite(ms)) return "?";
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** `[######------] 5/12` with `width` cells; a zero total reads as complete. */
export function progressBar(done: number, total: number, width = 24): string {
  const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`;
}

/**
 * The components an upgrade rolls: the orchestrator's plan (status.upgrade.planned) when it wrote
 * one, else the components whose image the version change touches that the platform runs.
 */
export function upgradeTotal(upgrade: UpgradeStatus, enabled: string[]): string[] {
  if (upgrade.planned && Object.keys(upgrade.planned).length > 0) return Object.keys(upgrade.planned);
  try {
    const changed = changedComponents(upgrade.from, upgrade.to, "registry");
    const relevant = enabled.length > 0 ? changed.filter((c) => enabled.includes(c)) : changed;
    return relevant.length > 0 ? relevant : enabled;
  } catch {
    // A version the catalog does not know: count every component.
    return enabled;
  }
}

/** One line for the upgrade: versions, state, progress bar, current component and step. */
export function upgradeLine(
  upgrade: UpgradeStatus,
  enabled: string[],
  now: Date,
  colors: Palette,
  barWidth = 24,
): string {
  const total = upgradeTotal(upgrade, enabled);
  const done = upgrade.completedComponents.filter((c) => total.includes(c)).length;
  const phase =
    upgrade.phase === "Failed" || upgrade.phase === "RollingBack" || upgrade.phase === "ForwardFix"
      ? colors.red(upgrade.phase)
      : upgrade.phase === "Succeeded"
        ? colors.green(upgrade.phase)
        : colors.yellow(upgrade.phase);
  const where = [upgrade.group, upgrade.component].filter(Boolean).join("/");
  const step = upgrade.step
    ? ` ${upgrade.step}${upgrade.stepStartedAt ? ` for ${age(upgrade.stepStartedAt, now)}` : ""}`
    : "";
  const current = upgrade.phase === "InProgress" || upgrade.phase === "RollingBack";
  return `${upgrade.from} -> ${upgrade.to}  ${phase}  ${progressBar(done, total.length, barWidth)}${
    current && where ? `  ${where}${step}` : ""
  }`;
}

/**
 * Disruption control (status.disruption): the pod restarts that wait (workload, what holds it,
 * why its pods would restart, for how long), the maintenance window open now or the next one, and
 * the workloads replacing pods now. Empty when the status has none of it. Also what `onto
 * approve-restarts` shows before it lets the waiting restarts go.
 */
export function disruptionLines(
  disruption: OntoPlatformStatus["disruption"],
  now: Date,
  colors: Palette,
): string[] {
  if (!disruption) return [];
  const lines: string[] = [];
  const waiting = disruption.waiting ?? [];
  if (waiting.length > 0)
    lines.push(
      `  ${colors.yellow(`${waiting.length} workload(s) wait to restart their pods`)}`,
      ...table(
        [
          ["WORKLOAD", "HELD BY", "RESTARTS FOR", "WAITING"].map((h) => colors.dim(h)),
          ...waiting.map((w) => [
            w.workload,
            w.cause,
            w.reasons.join(", "),
            `${age(w.since, now)} (since ${w.since})`,
          ]),
        ],
        "    ",
      ),
    );
  const inFuture = (at: string) => age(now.toISOString(), new Date(at));
  if (disruption.windowOpenUntil)
    lines.push(
      `  maintenance window open until ${disruption.windowOpenUntil} (${inFuture(disruption.windowOpenUntil)} left)`,
    );
  if (disruption.nextWindow)
    lines.push(`  next maintenance window ${disruption.nextWindow} (in ${inFuture(disruption.nextWindow)})`);
  if ((disruption.restarting ?? []).length > 0)
    lines.push(`  restarting pods now: ${(disruption.restarting ?? []).join(", ")}`);
  return lines;
}

function phaseColor(phase: string | undefined, colors: Palette): string {
  const text = phase ?? "Unknown";
  switch (phase) {
    case "Running":
    case "Ready":
      return colors.green(text);
    case "Error":
    case "Degraded":
      return colors.red(text);
    case "Disabled":
      return colors.dim(text);
    default:
      return colors.yellow(text);
  }
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(rows: string[][], indent = "  "): string[] {
  // eslint-disable-next-line no-control-regex -- ANSI colour codes take no width on screen
  const visible = (s: string): number => s.replace(/\x1b\[[0-9;]*m/g, "").length;
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visible(cell))));
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visible(cell))))
        .join("  ")
        .trimEnd(),
  );
}

function eventTime(e: EventView): string | undefined {
  return (
    e.series?.lastObservedTime ?? e.eventTime ?? e.deprecatedLastTimestamp ?? e.metadata?.creationTimestamp
  );
}

/** The whole status view, one string ending in a newline. */
export function formatStatus(snapshot: StatusSnapshot, opts: StatusViewOptions): string {
  const { platform } = snapshot;
  const { now, colors } = opts;
  const status = platform.status ?? {};
  const lines: string[] = [];
  const generation = platform.metadata.generation ?? 0;
  const observed = status.observedGeneration;
  const stale = observed === undefined || observed < generation;
  lines.push(
    `${colors.bold(`OntoPlatform ${platform.metadata.namespace}/${platform.metadata.name}`)}  ${phaseColor(status.phase, colors)}` +
      `  version ${status.version ?? "-"}${platform.spec.version !== status.version ? ` (spec ${platform.spec.version})` : ""}` +
      `  ready ${status.ready ?? "-"}` +
      `  generation ${generation}, observed ${observed ?? "-"}${stale ? colors.yellow(" (not yet reconciled)") : ""}` +
      (platform.spec.paused ? `  ${colors.yellow("PAUSED")}` : ""),
  );

  const statuses = status.componentStatuses ?? {};
  const planes = PLANES.filter(
    (p) => status.components?.[p] !== undefined || COMPONENTS.some((c) => c.plane === p && statuses[c.name]),
  );
  // One table for every component, so the columns line up across planes; plane rows interleaved.
  const rows: { plane?: string; cells?: string[] }[] = [];
  planes.forEach((plane, pi) => {
    const lastPlane = pi === planes.length - 1;
    rows.push({
      plane: `${lastPlane ? "└─" : "├─"} ${PLANE_TITLES[plane]}  ${phaseColor(status.components?.[plane], colors)}`,
    });
    const members = COMPONENTS.filter((c) => c.plane === plane && statuses[c.name]);
    members.forEach((c, ci) => {
      const s = statuses[c.name];
      const branch = `${lastPlane ? "   " : "│  "}${ci === members.length - 1 ? "└─" : "├─"}`;
      rows.push({
        cells: [
          `${branch} ${c.name}`,
          `${s?.ready ?? 0}/${s?.desired ?? 0}`,
          phaseColor(s?.phase, colors),
          s?.version ?? "",
          s?.phase !== "Ready" && s?.message ? colors.dim(s.message) : "",
        ],
      });
    });
  });
  const componentLines = table(
    rows.flatMap((r) => (r.cells ? [r.cells] : [])),
    "",
  );
  let next = 0;
  for (const row of rows) lines.push(row.plane ?? componentLines[next++] ?? "");
  if (planes.length === 0) lines.push(colors.dim("  (no component status yet)"));

  if (status.upgrade) {
    lines.push("", colors.bold("Upgrade"));
    lines.push(`  ${upgradeLine(status.upgrade, Object.keys(statuses), now, colors)}`);
    if (status.upgrade.failure) {
      const f = status.upgrade.failure;
      lines.push(`  ${colors.red(`failed at ${f.component}: ${f.reason}`)}: ${f.message}`);
    }
    const point = status.upgrade.pointOfNoReturn;
    if (status.upgrade.phase === "ForwardFix" && point)
      lines.push(
        `  ${colors.red("not rolled back, waiting for a forward fix")}: ${point.component} ${point.step} of ${point.version} cannot be undone (${point.reason})`,
      );
    else if (point)
      lines.push(
        `  ${colors.yellow("past a point of no return")}: ${point.component} ${point.step} of ${point.version} (${point.reason}); a failure from here on is not rolled back`,
      );
  }

  const disruption = disruptionLines(status.disruption, now, colors);
  if (disruption.length > 0) lines.push("", colors.bold("Disruption control"), ...disruption);

  const pg = status.postgres;
  if (pg?.members && pg.members.length > 0) {
    lines.push(
      "",
      colors.bold(
        `Postgres: primary ${pg.currentPrimary ?? "?"}${pg.timeline ? `, timeline ${pg.timeline}` : ""}`,
      ),
    );
    lines.push(
      ...table(
        pg.members.map((m) => [
          m.name,
          m.role === "primary" ? colors.green(m.role) : m.role === "standby" ? m.role : colors.yellow(m.role),
          m.role === "primary" ? "" : m.lagBytes !== undefined ? `lag ${lagText(m.lagBytes)}` : "lag unknown",
          m.receivedLsn ? colors.dim(m.receivedLsn) : "",
        ]),
      ),
    );
    if (pg.targetPrimary && pg.targetPrimary !== pg.currentPrimary)
      lines.push(`  ${colors.yellow(`promoting ${pg.targetPrimary}`)}`);
    if (pg.failoverWithheld) lines.push(`  ${colors.red("failover held back")}: ${pg.failoverWithheld}`);
    if (pg.lastFailover)
      lines.push(
        `  last promotion ${age(pg.lastFailover.at, now)} ago: ${pg.lastFailover.from} -> ${pg.lastFailover.to} (${pg.lastFailover.reason})`,
      );
    if (pg.switchover?.outcome === "Refused")
      lines.push(`  ${colors.red("switchover refused")}: ${pg.switchover.message}`);
  }

  const overrides = Object.entries(status.healing?.memoryOverrides ?? {});
  if (overrides.length > 0) {
    lines.push("", colors.bold("Healing: memory raised after OOM kills"));
    lines.push(
      ...table(
        overrides.map(([component, o]) => [
          component,
          `limit ${o.memoryLimit}${o.memoryRequest ? `, request ${o.memoryRequest}` : ""}`,
          `${o.raises} raise(s), last ${age(o.raisedAt, now)} ago`,
          o.atCap ? colors.red("at the cap (selfHealing.maxMemory)") : "",
        ]),
      ),
    );
  }

  const vertical = Object.entries(status.verticalScaling ?? {});
  if (vertical.length > 0) {
    const amounts = (a: { cpu?: string; memory?: string } | undefined): string =>
      [a?.cpu ? `cpu ${a.cpu}` : "", a?.memory ? `memory ${readableBytes(a.memory)}` : ""]
        .filter(Boolean)
        .join(", ") || "-";
    lines.push("", colors.bold("Vertical scaling: VerticalPodAutoscaler recommendations"));
    lines.push(
      ...table([
        ["COMPONENT", "MODE", "RECOMMENDED", "REQUESTS", "APPLIED"].map((h) => colors.dim(h)),
        ...vertical.map(([component, v]) => [
          component,
          v.mode,
          amounts(v.target),
          v.withinRange === undefined
            ? colors.dim("-")
            : v.withinRange
              ? "within range"
              : colors.yellow("outside range"),
          v.applied ? `${amounts(v.applied)}, ${age(v.appliedAt, now)} ago` : colors.dim("-"),
        ]),
      ]),
    );
  }

  const conditions: Condition[] = status.conditions ?? [];
  lines.push("", colors.bold("Conditions"));
  if (conditions.length === 0) lines.push(colors.dim("  (none)"));
  else
    lines.push(
      ...table([
        ["TYPE", "STATUS", "REASON", "AGE", "MESSAGE"].map((h) => colors.dim(h)),
        ...conditions.map((c) => [
          c.type,
          conditionStatus(c, colors),
          c.reason,
          age(c.lastTransitionTime, now),
          c.message,
        ]),
      ]),
    );

  const recent = [...snapshot.events]
    .sort((a, b) => (eventTime(a) ?? "").localeCompare(eventTime(b) ?? ""))
    .slice(-(opts.maxEvents ?? 10));
  lines.push("", colors.bold(`Events (last ${opts.maxEvents ?? 10})`));
  if (recent.length === 0) lines.push(colors.dim("  (none)"));
  else
    lines.push(
      ...table([
        ["AGE", "TYPE", "REASON", "NOTE"].map((h) => colors.dim(h)),
        ...recent.map((e) => [
          age(eventTime(e), now),
          e.type === "Warning" ? colors.red(e.type) : (e.type ?? ""),
          e.reason ?? "",
          `${e.note ?? ""}${(e.series?.count ?? 1) > 1 ? colors.dim(` (x${e.series?.count})`) : ""}`,
        ]),
      ]),
    );
  return `${lines.join("\n")}\n`;
}

/** WAL lag in bytes, in the unit a person reads. */
export function lagText(bytes: number): string {
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** Good news is green: Degraded=False is fine, Available=False is not. */
function conditionStatus(c: Condition, colors: Palette): string {
  const goodWhenTrue = c.type !== CONDITION.Degraded && c.type !== CONDITION.Progressing;
  if (c.status === "Unknown") return colors.yellow(c.status);
  if (c.type === CONDITION.Progressing) return c.status === "True" ? colors.yellow(c.status) : c.status;
  const good = (c.status === "True") === goodWhenTrue;
  return good ? colors.green(c.status) : colors.red(c.status);
}
