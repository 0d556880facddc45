// The signed drift a sampler should expect, computed exactly instead of estimated from one sample
// per target. For a target generated from its live view, p = π(· | live view) is the model's
// distribution there and s the distribution the sampler drew from (p itself at temperature 1; a
// sharper one with temperature < 1, top-k, top-p). A replay method m scores the target under its own
// prefix, with distribution q_m. The rollout's μ_m averages ℓ_m − ℓ_rollout = log q_m(t) − log p(t)
// over the tokens t that were sampled; its expectation at that target is
//
//     E_m = Σ_a s(a) · (log q_m(a) − log p(a)),
//
// which at temperature 1 (s = p) is −KL(p ‖ q_m) ≤ 0 for every method and every target: sampled
// exactly from p, every replay's drift is negative in expectation, naive-full's included. Only a
// sampler sharper than p can make it positive, on targets where q_m is surer than p of p's likely
// tokens. p is read from the exact live-prefix scores (logit-tree's), so E is 0 for the exact methods
// up to round-off.

import { logSoftmax, samplingDistribution, type SamplingOptions } from '../harness/policies/model';
import type { SequenceMethod } from '../plan/types';
import { LIVE, SIGN_EPSILON, signSplit, type RolloutScores, type SignSplit } from './drift-report';

export interface MethodExpectedDrift {
  /** Targets the method scores. */
  n: number;
  /** Mean over them of E_m (null when the method scores none). */
  mu: number | null;
  /** Targets with |E_m| > SIGN_EPSILON, and the share of them below zero. */
  sign: SignSplit;
}

export interface ExpectedDriftReport {
  sampling: Required<SamplingOptions>;
  signEpsilon: number;
  methods: Partial<Record<SequenceMethod, MethodExpectedDrift>>;
}

/**
 * E = Σ_a s(a)(lq(a) − lp(a)) for one target, in float64, from its live row and its method row:
 * logits or log-probabilities (any shift of a row gives the same distribution).
 */
export function expectedTargetDrift(live: ArrayLike<number>, replay: ArrayLike<number>, sampling: SamplingOptions): number {
  if (live.length !== replay.length) throw new Error(`expectedTargetDrift: rows of ${live.length} and ${replay.length} entries`);
  const s = samplingDistribution(live, sampling);
  const lp = logSoftmax(live);
  const lq = logSoftmax(replay);
  let e = 0;
  for (let a = 0; a < s.length; a++) if (s[a] > 0) e += s[a] * (lq[a] - lp[a]);
  return e;
}

/** Pools targets' expected drifts: their mean and the sign split beyond SIGN_EPSILON. */
export function poolExpected(drifts: Iterable<number>): MethodExpectedDrift {
  const values = Array.from(drifts);
  let sum = 0;
  for (const e of values) sum += e;
  return { n: values.length, mu: values.length ? sum / values.length : null, sign: signSplit(values) };
}

/**
 * Per method, the expected signed drift of each target under `sampling`, in rollout then target
 * order; `scores` must hold rows (scoreRollouts with `rows`) and include logit-tree.
 */
export function expectedTargetDrifts(scores: RolloutScores, sampling: Required<SamplingOptions>): Partial<Record<SequenceMethod, number[]>> {
  const live = scores[LIVE];
  if (!live) throw new Error(`expectedDrift: the scores lack ${LIVE} (the live rows)`);
  const out: Partial<Record<SequenceMethod, number[]>> = {};
  for (const [method, perRollout] of Object.entries(scores) as [SequenceMethod, RolloutScores[SequenceMethod]][]) {
    out[method] = perRollout.flatMap((targets, r) =>
      [...targets].map(([id, target]) => {
        const liveRow = live[r].get(id)?.row;
        if (!liveRow || !target.row) throw new Error(`expectedDrift: target ${id} of rollout ${r} has no row under ${liveRow ? method : LIVE}`);
        return expectedTargetDrift(liveRow, target.row, sampling);
      }),
    );
  }
  return out;
}

/** Per method, the expected signed drift of its targets under `sampling`, pooled (see expectedTargetDrifts). */
export function expectedDrift(scores: RolloutScores, sampling: Required<SamplingOptions>): ExpectedDriftReport {
  return expectedDriftReport(expectedTargetDrifts(scores, sampling), sampling);
}

/** The report of per-target expected drifts gathered by expectedTargetDrifts (mw drift adds them up rollout by rollout). */
export function expectedDriftReport(drifts: Partial<Record<SequenceMethod, number[]>>, sampling: Required<SamplingOptions>): ExpectedDriftReport {
  const methods: ExpectedDriftReport['methods'] = {};
  for (const [method, values] of Object.entries(drifts) as [SequenceMethod, number[]][]) methods[method] = poolExpected(values);
  return { sampling: { ...sampling }, signEpsilon: SIGN_EPSILON, methods };
}
