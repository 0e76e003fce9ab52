// Order statistics of a benchmark's samples: a load-shared machine makes single figures noisy, so
// every scenario reports medians and high percentiles of several rounds, never one measurement.

/** The p-th percentile (0..100) of `samples` by the nearest-rank method; NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile: p must be within 0..100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Rounds to `digits` decimals (figures are printed and stored at a sensible precision). */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * The q-quantile (0..1) of a cumulative histogram as Prometheus' histogram_quantile computes it:
 * linear within the bucket the rank falls in. `buckets` are (upper bound, cumulative count) pairs
 * in increasing bound order, the last one +Inf; NaN when the histogram is empty.
 */
export function histogramQuantile(q: number, buckets: readonly { le: number; count: number }[]): number {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket === 0 ? b.le : prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}
