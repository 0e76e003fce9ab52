// Side-by-side comparison of two benchmark results. A figure regressed when it moved in its worse
// direction by more than the tolerance (relative to the older value); figures near zero are
// compared with an absolute slack instead, so 0 -> 1 request is not an infinite regression.
import { formatValue, type BenchResult, type Figure } from "./figures.js";

/** Default relative tolerance: the machine is shared, so timings vary by a third run to run. */
export const DEFAULT_TOLERANCE = 0.3;
/** Below this absolute difference a figure never counts as regressed. */
export const ABSOLUTE_SLACK = 1;

export interface ComparedFigure {
  name: string;
  unit: string;
  older: number;
  newer: number;
  /** newer / older; NaN when older is 0. */
  ratio: number;
  regressed: boolean;
}

export function compareResults(
  older: BenchResult,
  newer: BenchResult,
  tolerance = DEFAULT_TOLERANCE,
): ComparedFigure[] {
  return Object.entries(newer.figures).flatMap(([name, n]) => {
    const o = older.figures[name];
    if (!o || o.unit !== n.unit) return [];
    return [
      {
        name,
        unit: n.unit,
        older: o.value,
        newer: n.value,
        ratio: o.value === 0 ? Number.NaN : n.value / o.value,
        regressed: regressed(o, n, tolerance),
      },
    ];
  });
}

export function regressed(older: Figure, newer: Figure, tolerance: number): boolean {
  if (!Number.isFinite(older.value) || !Number.isFinite(newer.value)) return false;
  const worse = newer.better === "lower" ? newer.value - older.value : older.value - newer.value;
  if (worse <= ABSOLUTE_SLACK) return false;
  return worse > Math.abs(older.value) * tolerance;
}

export function formatComparison(rows: ComparedFigure[], tolerance: number): string {
  const width = Math.max(6, ...rows.map((r) => r.name.length));
  const lines = rows.map(
    (r) =>
      `${r.name.padEnd(width)}  ${formatValue(r.older).padStart(10)}  ${formatValue(r.newer).padStart(10)}  ${(Number.isNaN(r.ratio) ? "-" : `${r.ratio.toFixed(2)}x`).padStart(7)}  ${r.unit}${r.regressed ? "  REGRESSED" : ""}`,
  );
  const bad = rows.filter((r) => r.regressed).length;
  return [
    `${"figure".padEnd(width)}  ${"older".padStart(10)}  ${"newer".padStart(10)}  ${"ratio".padStart(7)}  unit`,
    ...lines,
    `${bad} of ${rows.length} figures regressed beyond ${Math.round(tolerance * 100)}% (absolute slack ${ABSOLUTE_SLACK})`,
  ].join("\n");
}

/** Reads a result: a file holding the JSON object, or a run's output whose last line is it. */
export function parseResult(text: string): BenchResult {
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1] ?? "";
  const parsed = JSON.parse(last.startsWith("{") && lines.length > 1 ? last : text) as BenchResult;
  if (typeof parsed !== "object" || parsed === null || typeof parsed.figures !== "object")
    throw new Error("bench result: expected a JSON object with `figures`");
  return parsed;
}
