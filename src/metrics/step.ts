// A training step's figures (docs/metrics.md) from what the GPU step read back: the loss as
// optimised, the KL term, and the drift of the method's scores from the rollouts' own logprobs and
// from the exact live-prefix scores, and the same gap as verl's `rollout_corr/*` figures (mismatch.ts).
// Pure: src/gpu/train.ts reads the numbers, this names them.

import type { Objective } from '../objectives/tokens';
import type { Method } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { batchDifferences, pairDifferences, rolloutLogprobs, summarizeDrift } from './drift';
import { createMismatchAccumulator, tokenPairs, type MismatchFigures } from './mismatch';

export interface StepMetrics {
  step: number;
  method: Method;
  objective: Objective;
  lr: number;
  /** Task loss + λ·KL (SDCC), as optimised. */
  loss: number;
  taskLoss: number;
  /** Mean forward KL at diverging leaves; 0 (and no teacher pass) when the batch has none. */
  klSdcc: number;
  klFired: boolean;
  divergingLeaves: number;
  /** Targets scored by the method (the loss's denominator). */
  targets: number;
  /** Rows the step ran through the model (student + teacher for SDCC). */
  tokens: number;
  nPacked: number;
  nFinal: number;
  /** Against the rollout's logprobs, over targets that have one. */
  logdiff: number | null;
  mu: number | null;
  /** Against the exact live-prefix score (when measured). */
  conditioningDrift: number | null;
  conditioningMu: number | null;
  /**
   * verl's train–rollout mismatch figures of the step's targets against the rollouts' logprobs
   * (logged there as `rollout_corr/<name>`; slime's train_rollout_logprob_abs_diff is logdiff), a
   * sequence per rollout; null when no target has a rollout logprob.
   */
  rollout_corr: MismatchFigures | null;
  gradNorm: number;
  stepMs: number;
  /** The method's log-probability of each scored target, by physical id, per rollout. */
  logprobs: Map<number, number>[];
}

/** A step's figures without the per-target log-probabilities (what records and logs keep). */
export type StepFigures = Omit<StepMetrics, 'logprobs'>;

export function stepFiguresOf(m: StepMetrics): StepFigures {
  const { logprobs: _perTarget, ...figures } = m;
  return figures;
}

/** What the GPU step measured, and what the figures are computed from. */
export type StepReadings = Pick<
  StepMetrics,
  'step' | 'method' | 'objective' | 'lr' | 'taskLoss' | 'divergingLeaves' | 'targets' | 'tokens' | 'nPacked' | 'nFinal' | 'gradNorm' | 'stepMs'
> & {
  lambda: number;
  meanKl: number;
  /** KL pairs of the step (diverging leaves). */
  pairs: number;
  rollouts: readonly Rollout[];
  /** The method's score of every target it trained, per rollout. */
  logprobs: Map<number, number>[];
  /**
   * The exact live-prefix score of every target, per rollout; `exact` when the method's own scores
   * are those (logit-tree, packed-4d: conditioning drift 0 by construction); null when not measured.
   */
  live: readonly Map<number, number>[] | 'exact' | null;
};

export function stepFigures(r: StepReadings): StepMetrics {
  const loss = r.taskLoss + r.lambda * r.meanKl;
  if (!Number.isFinite(loss)) throw new Error(`trainStep: the loss is ${loss}`);
  // One join per rollout of the method's scores with the rollout's logprobs: its differences (logdiff,
  // μ) and its pairs (the mismatch figures).
  const mismatch = createMismatchAccumulator();
  const differences = r.rollouts.map((rollout, i) => {
    const pairs = tokenPairs(r.logprobs[i], rolloutLogprobs(rollout));
    mismatch.add(pairs.train, pairs.rollout);
    return pairDifferences(pairs);
  });
  const vsRollout = summarizeDrift(differences.flatMap((d) => Array.from(d)));
  const vsLive = r.live === null ? null : summarizeDrift(r.live === 'exact' ? [] : batchDifferences(r.logprobs, r.live));
  return {
    step: r.step,
    method: r.method,
    objective: r.objective,
    lr: r.lr,
    loss,
    taskLoss: r.taskLoss,
    klSdcc: r.meanKl,
    klFired: r.pairs > 0 && r.lambda > 0,
    divergingLeaves: r.divergingLeaves,
    targets: r.targets,
    tokens: r.tokens,
    nPacked: r.nPacked,
    nFinal: r.nFinal,
    logdiff: vsRollout.n ? vsRollout.logdiff : null,
    mu: vsRollout.n ? vsRollout.mu : null,
    conditioningDrift: vsLive ? vsLive.logdiff : null,
    conditioningMu: vsLive ? vsLive.mu : null,
    rollout_corr: mismatch.figures(),
    gradNorm: r.gradNorm,
    stepMs: r.stepMs,
    logprobs: r.logprobs,
  };
}
