// Histograms of per-target drift for the drift panel: a readable axis chosen from the values a method
// actually moves (a few outliers of −50 nats must not squash the rest into one bar), the tails beyond
// it counted in two labelled overflow bins, and the bin a pointer is over described in words.

/** Values moved by less than this count as unmoved when the axis is chosen (fp32 round-off is ~1e-6). */
export const MOVED = 1e-4;

/** Odd, so that 0 is the centre of a bin: the exact methods' round-off stays in one bar. */
export const DRIFT_BINS = 21;

export interface Bins {
  /** The axis: [lo, hi]; values outside it are counted in `below` / `above`. */
  lo: number;
  hi: number;
  /** Bin edges, bins + 1 of them, from lo to hi. */
  edges: number[];
  counts: number[];
  below: number;
  above: number;
  total: number;
}

/** A readable bound: 1, 2 or 5 times a power of ten at or above x, at least 1e-3. */
export function niceRange(x: number): number {
  if (!(x > 1e-3)) return 1e-3;
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x * (1 - 1e-12))!;
}

/**
 * The half-width of an axis that holds all but the outer `1 − quantile` of the moved values
 * (|v| ≥ MOVED), rounded up by niceRange; 1e-3 when nothing moved.
 */
export function tailRange(values: Iterable<ArrayLike<number>>, quantile = 0.98): number {
  const moved: number[] = [];
  for (const list of values) for (let i = 0; i < list.length; i++) if (Math.abs(list[i]) >= MOVED) moved.push(Math.abs(list[i]));
  if (!moved.length) return niceRange(0);
  moved.sort((a, b) => a - b);
  return niceRange(moved[Math.min(moved.length - 1, Math.ceil(quantile * moved.length) - 1)]);
}

/** Counts `values` in `bins` equal bins over [lo, hi]; a value on an inner edge goes to the bin above it, hi itself to the last bin. */
export function binValues(values: ArrayLike<number>, lo: number, hi: number, bins = DRIFT_BINS): Bins {
  if (!(hi > lo) || bins < 1) throw new Error(`binValues: empty axis [${lo}, ${hi}] or ${bins} bins`);
  const edges = Array.from({ length: bins + 1 }, (_, i) => lo + ((hi - lo) * i) / bins);
  const counts = new Array<number>(bins).fill(0);
  let below = 0;
  let above = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v < lo) below++;
    else if (v > hi) above++;
    else counts[Math.min(bins - 1, Math.floor(((v - lo) / (hi - lo)) * bins))]++;
  }
  return { lo, hi, edges, counts, below, above, total: values.length };
}

/** Signed drift over the symmetric axis [−range, range]. */
export function driftBins(values: ArrayLike<number>, range: number, bins = DRIFT_BINS): Bins {
  return binValues(values, -range, range, bins);
}

/** Which part of a histogram a pointer is over: bin i, or an overflow bin. */
export type BinRef = { kind: 'bin'; index: number } | { kind: 'below' } | { kind: 'above' };

/** "12 targets between −0.25 and −0.20 nats" (or below / above the axis). */
export function describeBin(bins: Bins, ref: BinRef, format: (x: number) => string, unit = 'nats'): string {
  const n = ref.kind === 'bin' ? bins.counts[ref.index] : ref.kind === 'below' ? bins.below : bins.above;
  const what = `${n} target${n === 1 ? '' : 's'}`;
  if (ref.kind === 'below') return `${what} below ${format(bins.lo)} ${unit}`;
  if (ref.kind === 'above') return `${what} above ${format(bins.hi)} ${unit}`;
  return `${what} between ${format(bins.edges[ref.index])} and ${format(bins.edges[ref.index + 1])} ${unit}`;
}
