// Drift of each scoring method (docs/metrics.md), from the model's scores of every target: against the
// exact live-prefix score (conditioning drift; LogitTree's scores, which Theorem 1 (docs/methods.md) makes
// the packed 4D mask's too) and against the rollout's own logprobs where the file has them.
import type { SamplingOptions } from '../../harness/policies/model';
import { driftHistogram, signedDifferences, summarizeDrift, type DriftSummary, type Histogram } from '../../metrics/drift';
import { expectedTargetDrift, poolExpected, type MethodExpectedDrift } from '../../metrics/expected-drift';
import type { MethodScores, ScoredMethod } from '../protocol/score';
import type { ViewData } from './viewData';

export interface MethodDrift {
  method: ScoredMethod;
  /** Why the method could not score this rollout, or null. */
  error: string | null;
  /** ℓ_m(t) by target id. */
  logprob: Map<number, number>;
  /** ℓ_m(t) − ℓ_live(t) by target id. */
  delta: Map<number, number>;
  /** The V log-probabilities at each target's position, by target id. */
  rows: Map<number, Float32Array>;
  vsLive: DriftSummary;
  vsRollout: DriftSummary | null;
  histogram: Histogram;
}

export interface DriftData {
  rolloutId: string;
  /** ℓ_live(t): the exact live-prefix score. */
  live: Map<number, number>;
  /** The live-prefix log-probability rows of each target, by id (the distribution the policy sampled from). */
  liveRows: Map<number, Float32Array>;
  methods: MethodDrift[];
  /** Half-width of the histograms' common range (and of the colour scale). */
  range: number;
}

export const HISTOGRAM_BINS = 30;

export function driftOf(view: ViewData, scores: MethodScores[]): DriftData {
  const exact = scores.find((s) => s.method === 'logit-tree');
  if (!exact || 'error' in exact) {
    throw new Error(`cannot score ${view.rollout.id} under its live prefixes: ${exact && 'error' in exact ? `LogitTree ${exact.error}` : 'LogitTree was not scored'}`);
  }
  const live = new Map<number, number>();
  exact.ids.forEach((id, i) => live.set(id, exact.logprobs[i]));
  const rollout = new Map<number, number>();
  for (const t of view.rollout.targets) if (!Number.isNaN(view.rollout.logprobs[t])) rollout.set(t, view.rollout.logprobs[t]);

  const partial = scores.map((s) => {
    const logprob = new Map<number, number>();
    const rows = new Map<number, Float32Array>();
    if (!('error' in s)) {
      const V = s.ids.length ? s.rows.length / s.ids.length : 0;
      s.ids.forEach((id, i) => {
        logprob.set(id, s.logprobs[i]);
        rows.set(id, s.rows.subarray(i * V, (i + 1) * V));
      });
    }
    const diffs = signedDifferences(logprob, live);
    const delta = new Map<number, number>();
    let i = 0;
    for (const id of logprob.keys()) if (live.has(id)) delta.set(id, diffs[i++]);
    return { s, logprob, rows, delta, diffs };
  });
  let range = 0;
  for (const p of partial) for (const d of p.diffs) range = Math.max(range, Math.abs(d));
  range = niceRange(range);
  return {
    rolloutId: view.rollout.id,
    live,
    liveRows: partial.find((p) => p.s === exact)!.rows,
    range,
    methods: partial.map(({ s, logprob, rows, delta, diffs }) => ({
      method: s.method,
      error: 'error' in s ? s.error : null,
      logprob,
      delta,
      rows,
      vsLive: summarizeDrift(diffs),
      vsRollout: rollout.size ? summarizeDrift(signedDifferences(logprob, rollout)) : null,
      histogram: driftHistogram(diffs, HISTOGRAM_BINS, range),
    })),
  };
}

/**
 * Per method, the signed drift a sampler should expect at the targets it scores (exact, from the live
 * and the method's log-probability rows; src/metrics/expected-drift.ts); null for a method that could not score.
 */
export function expectedOf(drift: DriftData, sampling: SamplingOptions): Map<ScoredMethod, MethodExpectedDrift | null> {
  const out = new Map<ScoredMethod, MethodExpectedDrift | null>();
  for (const m of drift.methods) {
    if (m.error) {
      out.set(m.method, null);
      continue;
    }
    const drifts: number[] = [];
    for (const [id, row] of m.rows) {
      const live = drift.liveRows.get(id);
      if (live) drifts.push(expectedTargetDrift(live, row, sampling));
    }
    out.set(m.method, poolExpected(drifts));
  }
  return out;
}

/** A readable half-width for the shared axis: 1, 2 or 5 times a power of ten, at least 1e-3. */
export function niceRange(x: number): number {
  if (!(x > 1e-3)) return 1e-3;
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x - 1e-12)!;
}
