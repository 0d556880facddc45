// Drift metrics of docs/metrics.md: how far a replay method's log-probabilities are from a reference
// (the rollout's own logprobs, or the exact live-prefix score), over the targets both score.

import type { Rollout } from '../rollout/rollout';
import { tokenPairs, type TokenPairs } from './mismatch';

export interface DriftSummary {
  /** Targets compared (scored by the method and present in the reference). */
  n: number;
  /** mean |ℓ_m − ℓ_ref| */
  logdiff: number;
  /** signed drift μ = mean(ℓ_m − ℓ_ref) */
  mu: number;
  /** Of the targets whose difference is non-zero beyond `epsilon`, the share below zero. */
  negativeShare: number;
}

/** Differences ℓ_m(t) − ℓ_ref(t) for targets present in both maps, in the method's order. */
export function signedDifferences(method: ReadonlyMap<number, number>, reference: ReadonlyMap<number, number>): Float64Array {
  return pairDifferences(tokenPairs(method, reference));
}

/** ℓ_m − ℓ_ref of each joined pair, in the pairs' order (a caller that also needs the pairs joins once). */
export function pairDifferences(pairs: TokenPairs): Float64Array {
  return Float64Array.from(pairs.train, (logprob, k) => logprob - pairs.rollout[k]);
}

/** The rollout's own log-probability of each target that has one: the reference of logdiff and μ. */
export function rolloutLogprobs(rollout: Rollout): Map<number, number> {
  const m = new Map<number, number>();
  for (const id of rollout.targets) if (Number.isFinite(rollout.logprobs[id])) m.set(id, rollout.logprobs[id]);
  return m;
}

/** Differences of every rollout's scores from its reference, rollout after rollout. */
export function batchDifferences(scores: readonly ReadonlyMap<number, number>[], reference: readonly ReadonlyMap<number, number>[]): Float64Array {
  return Float64Array.from(scores.flatMap((m, r) => Array.from(signedDifferences(m, reference[r]))));
}

export function summarizeDrift(differences: ArrayLike<number>, epsilon = 1e-6): DriftSummary {
  const n = differences.length;
  let abs = 0;
  let sum = 0;
  let moved = 0;
  let negative = 0;
  for (let i = 0; i < n; i++) {
    const d = differences[i];
    abs += Math.abs(d);
    sum += d;
    if (Math.abs(d) > epsilon) {
      moved++;
      if (d < 0) negative++;
    }
  }
  return { n, logdiff: n ? abs / n : 0, mu: n ? sum / n : 0, negativeShare: moved ? negative / moved : 0 };
}

export interface Histogram {
  /** Bin edges, length bins + 1. */
  edges: number[];
  counts: number[];
}

/** A symmetric histogram of signed differences over [-range, range]; values outside land in the end bins. */
export function driftHistogram(differences: ArrayLike<number>, bins = 40, range?: number): Histogram {
  let extent = range ?? 0;
  if (range === undefined) for (let i = 0; i < differences.length; i++) extent = Math.max(extent, Math.abs(differences[i]));
  if (!(extent > 0)) extent = 1;
  const edges = Array.from({ length: bins + 1 }, (_, i) => -extent + (2 * extent * i) / bins);
  const counts = new Array<number>(bins).fill(0);
  for (let i = 0; i < differences.length; i++) {
    const bin = Math.floor(((differences[i] + extent) / (2 * extent)) * bins);
    counts[Math.min(bins - 1, Math.max(0, bin))]++;
  }
  return { edges, counts };
}
