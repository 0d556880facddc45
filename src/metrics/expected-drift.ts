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

/** The live side of E for one target: the sampler's distribution s and the live log-probabilities lp. */
interface LiveSide {
  s: Float64Array;
  lp: Float64Array;
}

function liveSide(live: ArrayLike<number>, sampling: SamplingOptions): LiveSide {
  return { s: samplingDistribution(live, sampling), lp: logSoftmax(live) };
}

function driftAgainst({ s, lp }: LiveSide, replay: ArrayLike<number>): number {
  if (lp.length !== replay.length) throw new Error(`expectedTargetDrift: rows of ${lp.length} and ${replay.length} entries`);
  const lq = logSoftmax(replay);
  let e = 0;
  for (let a = 0; a < s.length; a++) if (s[a] > 0) e += s[a] * (lq[a] - lp[a]);
  return e;
}

/**
 * E = Σ_a s(a)(lq(a) − lp(a)) for one target, in float64, from its live row and its method row:
 * logits or log-probabilities (any shift of a row gives the same distribution).
 */
export function expectedTargetDrift(live: ArrayLike<number>, replay: ArrayLike<number>, sampling: SamplingOptions): number {
  if (live.length !== replay.length) throw new Error(`expectedTargetDrift: rows of ${live.length} and ${replay.length} entries`);
  return driftAgainst(liveSide(live, sampling), replay);
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
  const methods = Object.entries(scores) as [SequenceMethod, RolloutScores[SequenceMethod]][];
  const out: Partial<Record<SequenceMethod, number[]>> = Object.fromEntries(methods.map(([method]) => [method, []]));
  // Target by target, so each live row's side (a vocabulary-wide distribution and log-softmax) is computed once for
  // every method, and one at a time; each method's list keeps its own rollout then target order.
  for (let r = 0; r < live.length; r++) {
    const slots = methods.map(([method, perRollout]) => {
      const list = out[method]!;
      const at = new Map<number, number>();
      for (const id of (perRollout[r] ?? new Map()).keys()) at.set(id, list.push(Number.NaN) - 1);
      return { method, targets: perRollout[r] ?? new Map(), list, at };
    });
    const ids = new Set(slots.flatMap(({ targets }) => [...targets.keys()]));
    for (const id of ids) {
      const liveRow = live[r].get(id)?.row;
      let side: LiveSide | undefined;
      for (const { method, targets, list, at } of slots) {
        if (!targets.has(id)) continue;
        const row = targets.get(id)!.row;
        if (!liveRow || !row) throw new Error(`expectedDrift: target ${id} of rollout ${r} has no row under ${liveRow ? method : LIVE}`);
        side ??= liveSide(liveRow, sampling);
        list[at.get(id)!] = driftAgainst(side, row);
      }
    }
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
