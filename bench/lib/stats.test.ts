import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { histogramQuantile, median, percentile } from "./stats.js";

describe("percentile", () => {
  it("takes the nearest rank of the sorted samples", () => {
    const samples = [50, 10, 40, 20, 30];
    expect(percentile(samples, 0)).toBe(10);
    expect(median(samples)).toBe(30);
    expect(percentile(samples, 99)).toBe(50);
    expect(percentile(samples, 100)).toBe(50);
    expect(percentile([7], 99)).toBe(7);
  });

  it("is NaN without samples and refuses p outside 0..100", () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(/0..100/);
  });

  it("is always one of the samples, and grows with p", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { minLength: 1 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (xs, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(xs).toContain(percentile(xs, lo));
          expect(percentile(xs, lo)).toBeLessThanOrEqual(percentile(xs, hi));
        },
      ),
    );
  });
});

describe("histogramQuantile", () => {
  const buckets = [
    { le: 0.1, count: 50 },
    { le: 1, count: 90 },
    { le: 10, count: 100 },
    { le: Number.POSITIVE_INFINITY, count: 100 },
  ];

  it("interpolates within the bucket the rank falls in", () => {
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.1);
    expect(histogramQuantile(0.7, buckets)).toBeCloseTo(0.1 + 0.9 * (20 / 40));
    expect(histogramQuantile(0.99, buckets)).toBeCloseTo(1 + 9 * (9 / 10));
  });

  it("answers the highest finite bound for ranks in +Inf, NaN when empty", () => {
    expect(
      histogramQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Number.POSITIVE_INFINITY, count: 10 },
      ]),
    ).toBe(1);
    expect(histogramQuantile(0.5, [{ le: Number.POSITIVE_INFINITY, count: 0 }])).toBeNaN();
  });
});
