import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compareResults, formatComparison, parseResult, regressed } from "./compare.js";
import type { BenchResult, Figure } from "./figures.js";

function result(figures: Record<string, Figure>): BenchResult {
  return {
    version: "0.1.0",
    commit: "abc",
    cores: 2,
    load: { start: 1, end: 1 },
    quick: true,
    startedAt: "2026-01-01T00:00:00Z",
    scenarios: [],
    figures,
    notes: [],
  };
}
const ms = (value: number): Figure => ({ value, unit: "ms", better: "lower" });
const rate = (value: number): Figure => ({ value, unit: "objects/s", better: "higher" });

describe("regressed", () => {
  it("counts a worsening beyond the tolerance in the figure's worse direction only", () => {
    expect(regressed(ms(1000), ms(1250), 0.3)).toBe(false);
    expect(regressed(ms(1000), ms(1400), 0.3)).toBe(true);
    expect(regressed(ms(1000), ms(100), 0.3)).toBe(false);
    expect(regressed(rate(100), rate(60), 0.3)).toBe(true);
    expect(regressed(rate(100), rate(200), 0.3)).toBe(false);
  });

  it("ignores a change within the absolute slack (0 -> 1 request is not a regression)", () => {
    expect(
      regressed(
        { value: 0, unit: "requests", better: "lower" },
        { value: 1, unit: "requests", better: "lower" },
        0.3,
      ),
    ).toBe(false);
    expect(
      regressed(
        { value: 0, unit: "requests", better: "lower" },
        { value: 3, unit: "requests", better: "lower" },
        0.3,
      ),
    ).toBe(true);
  });
});

describe("compareResults", () => {
  it("pairs the figures both results hold with the same unit, with their ratio", () => {
    const rows = compareResults(
      result({ a: ms(100), b: ms(10), c: rate(5) }),
      result({ a: ms(200), b: { value: 10, unit: "s", better: "lower" }, d: ms(1) }),
      0.3,
    );
    expect(rows).toEqual([{ name: "a", unit: "ms", older: 100, newer: 200, ratio: 2, regressed: true }]);
    expect(formatComparison(rows, 0.3)).toMatch(/REGRESSED[\s\S]*1 of 1 figures regressed beyond 30%/);
  });
});

describe("parseResult", () => {
  it("reads a result file or the last line of a --json run's output", () => {
    const r = result({ a: ms(1) });
    expect(parseResult(JSON.stringify(r, null, 2)).figures).toEqual(r.figures);
    expect(parseResult(`figure value unit\na 1 ms\n${JSON.stringify(r)}\n`).figures).toEqual(r.figures);
  });

  it("refuses JSON that is not a result", () => {
    expect(() => parseResult('{"x": 1}')).toThrow(/figures/);
  });
});

describe("the committed results", () => {
  it("parse, and a result compared with itself has no regression", () => {
    const r = parseResult(readFileSync("bench/results/0.1.0.json", "utf8"));
    const rows = compareResults(r, r, 0.3);
    expect(rows.length).toBe(Object.keys(r.figures).length);
    expect(rows.filter((row) => row.regressed)).toEqual([]);
  });
});
