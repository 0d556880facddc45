// The drift (docs/metrics.md) of every replay method from each method's scores of the same rollouts: logdiff
// and μ against the rollouts' own logprobs, conditioning drift against the exact live-prefix score
// (logit-tree's), the sign split and histograms of the signed differences on one shared range, and
// verl's `rollout_corr/*` mismatch figures of the same scores against the rollouts' logprobs.
// Shared by `mw drift` and `mw experiment matrix`; pure (the scores come from the GPU's evaluate()).

import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { driftHistogram, pairDifferences, rolloutLogprobs, signedDifferences, summarizeDrift, type Histogram } from './drift';
import { createMismatchAccumulator, tokenPairs, type MismatchFigures } from './mismatch';

/** One target as a method scored it (src/gpu/score.ts returns these). */
export interface ScoredTarget {
  id: number;
  logprob: number;
  /** With `rows: true`: the V log-probabilities at the target's position (its predictor row's log softmax). */
  row?: Float32Array;
}

/** Per method, every scored target (by rollout, by physical id). */
export type RolloutScores = Record<SequenceMethod, Map<number, ScoredTarget>[]>;

/** Per method, every scored target's log-probability (by rollout, by physical id). */
export type Evaluation = Record<SequenceMethod, Map<number, number>[]>;

/** A difference counts for the sign split beyond this: float32 round-off between layouts stays below it. */
export const SIGN_EPSILON = 1e-4;
export const DEFAULT_BINS = 20;

/** The exact live-prefix score every conditioning drift is measured against (docs/metrics.md). */
export const LIVE: SequenceMethod = 'logit-tree';

/** The log-probabilities of scored targets (what driftReport reads). */
export function logprobsOf(scores: RolloutScores): Evaluation {
  const out = {} as Evaluation;
  for (const [method, perRollout] of Object.entries(scores) as [SequenceMethod, Map<number, ScoredTarget>[]][]) {
    out[method] = perRollout.map((targets) => new Map([...targets].map(([id, t]) => [id, t.logprob])));
  }
  return out;
}

export interface SignSplit {
  /** Targets whose |difference| exceeds SIGN_EPSILON. */
  diverging: number;
  /** Of those, the share with a negative difference (null when none). */
  negativeShare: number | null;
}

export interface MethodDrift {
  /** Targets the method scores. */
  scored: number;
  /** Of those, targets with a rollout logprob: what logdiff and μ average over. */
  n: number;
  logdiff: number | null;
  mu: number | null;
  /** mean |ℓ_m − ℓ_live| and mean (ℓ_m − ℓ_live) over every scored target. */
  conditioningDrift: number | null;
  conditioningMu: number | null;
  sign: { rollout: SignSplit; conditioning: SignSplit };
  /**
   * verl's train–rollout mismatch figures (`rollout_corr/<name>`: kl, k3_kl, log_ppl_diff, ppl_ratio,
   * chi2_token, chi2_seq, rollout_is_eff_sample_size, ...), one sequence per rollout, over the same
   * targets as logdiff; null when none has a rollout logprob.
   */
  rollout_corr: MismatchFigures | null;
  /** Signed differences; every method's histogram of one kind shares its edges. */
  histogram: { rollout: Histogram; conditioning: Histogram };
}

export interface DriftReport {
  rollouts: number;
  targets: number;
  /** Targets with a rollout logprob. */
  withLogprobs: number;
  signEpsilon: number;
  methods: Record<SequenceMethod, MethodDrift>;
}

/** Of `differences`, how many exceed SIGN_EPSILON and the share of those below zero. */
export function signSplit(differences: ArrayLike<number> & Iterable<number>): SignSplit {
  let diverging = 0;
  for (const d of differences) if (Math.abs(d) > SIGN_EPSILON) diverging++;
  return { diverging, negativeShare: diverging ? summarizeDrift(differences, SIGN_EPSILON).negativeShare : null };
}

function maxAbs(values: Iterable<Float64Array>): number | undefined {
  let m = 0;
  for (const v of values) for (const d of v) m = Math.max(m, Math.abs(d));
  return m > 0 ? m : undefined;
}

/** The drift of every method, from each method's log-probability of every target it scores. */
export function driftReport(rollouts: readonly Rollout[], scores: Evaluation, bins = DEFAULT_BINS): DriftReport {
  const drift = createDriftAccumulator();
  rollouts.forEach((rollout, r) =>
    drift.add(rollout, Object.fromEntries(SEQUENCE_METHODS.map((m) => [m, scores[m][r]])) as Record<SequenceMethod, Map<number, number>>),
  );
  return drift.report(bins);
}

function concat(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The drift report built one rollout at a time (mw drift streams a data set): each rollout leaves
 * only its signed differences behind (8 bytes per scored target and method), in rollout order, so
 * the report equals driftReport's over the same rollouts.
 */
export function createDriftAccumulator() {
  // Per method: the signed differences from the rollouts' logprobs and from the live scores, rollout by rollout.
  const perMethod = SEQUENCE_METHODS.map((method) => ({
    method,
    vsRollout: [] as Float64Array[],
    vsLive: [] as Float64Array[],
    scored: 0,
    mismatch: createMismatchAccumulator(),
  }));
  let rollouts = 0;
  let targets = 0;
  let withLogprobs = 0;
  return {
    /** One rollout and its scores under every scoring method (target id → log-probability). */
    add(rollout: Rollout, scores: Record<SequenceMethod, Map<number, number>>) {
      const reference = rolloutLogprobs(rollout);
      for (const m of perMethod) {
        const pairs = tokenPairs(scores[m.method], reference);
        m.vsRollout.push(pairDifferences(pairs));
        m.vsLive.push(signedDifferences(scores[m.method], scores[LIVE]));
        m.scored += scores[m.method].size;
        m.mismatch.add(pairs.train, pairs.rollout);
      }
      rollouts++;
      targets += rollout.targets.length;
      withLogprobs += reference.size;
    },
    report(bins = DEFAULT_BINS): DriftReport {
      const all = perMethod.map((m) => ({ ...m, d: concat(m.vsRollout), c: concat(m.vsLive) }));
      const rolloutRange = maxAbs(all.map((m) => m.d));
      const liveRange = maxAbs(all.map((m) => m.c));
      const methods = {} as Record<SequenceMethod, MethodDrift>;
      for (const { method, scored, mismatch, d, c } of all) {
        const drift = summarizeDrift(d);
        const conditioning = summarizeDrift(c);
        methods[method] = {
          scored,
          n: drift.n,
          logdiff: drift.n ? drift.logdiff : null,
          mu: drift.n ? drift.mu : null,
          conditioningDrift: conditioning.n ? conditioning.logdiff : null,
          conditioningMu: conditioning.n ? conditioning.mu : null,
          sign: { rollout: signSplit(d), conditioning: signSplit(c) },
          histogram: { rollout: driftHistogram(d, bins, rolloutRange), conditioning: driftHistogram(c, bins, liveRange) },
          rollout_corr: mismatch.figures(),
        };
      }
      return { rollouts, targets, withLogprobs, signEpsilon: SIGN_EPSILON, methods };
    },
  };
}
