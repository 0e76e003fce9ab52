// The result of a benchmark run: named figures, each with its unit and which direction is better,
// plus what the run was measured on (cores, load, commit), so two runs can be compared.

export type Better = "lower" | "higher";

export interface Figure {
  value: number;
  unit: string;
  better: Better;
}

export interface BenchResult {
  version: string;
  commit: string;
  cores: number;
  /** Load average (1 min) when the run started and ended. */
  load: { start: number; end: number };
  quick: boolean;
  startedAt: string;
  scenarios: string[];
  figures: Record<string, Figure>;
  /** Scenarios or figures not measured, with the reason. */
  notes: string[];
}

/** Collects figures under a scenario prefix: `fig("converge", "operator.p50", 1234, "ms")`. */
export class FigureSet {
  readonly figures: Record<string, Figure> = {};

  add(scenario: string, name: string, value: number, unit: string, better: Better = "lower"): void {
    this.figures[`${scenario}.${name}`] = { value, unit, better };
  }
}

/** The figures as aligned text rows: name, value, unit. */
export function formatTable(figures: Record<string, Figure>): string {
  const names = Object.keys(figures);
  const width = Math.max(6, ...names.map((n) => n.length));
  const rows = names.map((n) => {
    const f = figures[n] as Figure;
    return `${n.padEnd(width)}  ${formatValue(f.value).padStart(10)}  ${f.unit}`;
  });
  return [`${"figure".padEnd(width)}  ${"value".padStart(10)}  unit`, ...rows].join("\n");
}

export function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 1 ? 1 : 3);
}
