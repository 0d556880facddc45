// Train–rollout mismatch figures as the RL frameworks log them, so a user can set a replay method's
// drift beside their own runs: verl's `rollout_corr/*` diagnostics (KL and k3 KL estimators,
// log-perplexity difference and ratio, χ² of the importance weights per token and per sequence, the
// effective sample size of the weights) and slime's `train_rollout_logprob_abs_diff` (= logdiff).
// A sequence is one rollout's scored targets; "train" is the replay method's log-probability.

/** exp() argument bound for the importance weights, as verl clamps them (SAFETY_BOUND). */
export const LOG_RATIO_BOUND = 20;

/** One rollout's targets that both the method and the rollout score, in any order. */
export interface TokenPairs {
  train: ArrayLike<number>;
  rollout: ArrayLike<number>;
}

/** Named as verl (`rollout_corr/<name>`) and slime log them. */
export interface MismatchFigures {
  /** Sequences (rollouts with at least one pair) and tokens (pairs) the figures average over. */
  sequences: number;
  tokens: number;
  /** Mean over sequences of exp(−mean ℓ_train) and of −mean ℓ_train. */
  training_ppl: number;
  training_log_ppl: number;
  rollout_ppl: number;
  rollout_log_ppl: number;
  /** Token mean of ℓ_rollout − ℓ_train: the direct estimator of KL(π_rollout ‖ π_train). */
  kl: number;
  /** Token mean of ρ − log ρ − 1, ρ = π_train / π_rollout: the k3 estimator (≥ 0 per token). */
  k3_kl: number;
  /** Per sequence mean ℓ_rollout − mean ℓ_train: its mean, mean |·|, max and min over sequences. */
  log_ppl_diff: number;
  log_ppl_abs_diff: number;
  log_ppl_diff_max: number;
  log_ppl_diff_min: number;
  /** Mean over sequences of exp(log_ppl_diff): the ratio of training to rollout perplexity. */
  ppl_ratio: number;
  /** Token mean of ρ² − 1, and sequence mean of (Π ρ)² − 1 (log-ratios clamped to ±20). */
  chi2_token: number;
  chi2_seq: number;
  /** 1 / mean((ρ / mean ρ)²) over tokens: 1 when every weight is equal, smaller as they spread. */
  rollout_is_eff_sample_size: number;
  /** slime's name for the token mean of |ℓ_train − ℓ_rollout| (the workbench's logdiff). */
  train_rollout_logprob_abs_diff: number;
}

/** The figures' names, in verl's order of importance (what exports and tables list). */
export const MISMATCH_NAMES = [
  'kl',
  'k3_kl',
  'log_ppl_diff',
  'log_ppl_abs_diff',
  'log_ppl_diff_max',
  'log_ppl_diff_min',
  'ppl_ratio',
  'chi2_token',
  'chi2_seq',
  'rollout_is_eff_sample_size',
  'training_ppl',
  'training_log_ppl',
  'rollout_ppl',
  'rollout_log_ppl',
  'train_rollout_logprob_abs_diff',
] as const satisfies readonly (keyof MismatchFigures)[];

const clampLog = (x: number) => Math.min(LOG_RATIO_BOUND, Math.max(-LOG_RATIO_BOUND, x));

/** The figures over every sequence with at least one pair; null when there is none. */
export function mismatchFigures(sequences: readonly TokenPairs[]): MismatchFigures | null {
  const acc = createMismatchAccumulator();
  for (const s of sequences) acc.add(s.train, s.rollout);
  return acc.figures();
}

/** The rollout's targets that both the method and the rollout score, in the method's order. */
export function tokenPairs(method: ReadonlyMap<number, number>, rollout: ReadonlyMap<number, number>): TokenPairs {
  const train: number[] = [];
  const reference: number[] = [];
  for (const [id, logprob] of method) {
    const r = rollout.get(id);
    if (r === undefined) continue;
    train.push(logprob);
    reference.push(r);
  }
  return { train, rollout: reference };
}

/**
 * The figures built one sequence at a time (mw drift streams a data set; a training step adds its
 * batch): each sequence leaves a few sums behind, so the figures equal mismatchFigures' over the same
 * sequences. A sequence without pairs is skipped.
 */
export function createMismatchAccumulator() {
  let S = 0;
  let tokens = 0;
  let kl = 0;
  let k3 = 0;
  let absDiff = 0;
  let rhoSum = 0;
  let rhoSquares = 0;
  let trainingPpl = 0;
  let trainingLogPpl = 0;
  let rolloutPpl = 0;
  let rolloutLogPpl = 0;
  let chi2Seq = 0;
  let diffSum = 0;
  let diffAbsSum = 0;
  let diffMax = -Infinity;
  let diffMin = Infinity;
  let ratioSum = 0;
  return {
    add(train: ArrayLike<number>, rollout: ArrayLike<number>) {
      const n = train.length;
      if (n !== rollout.length) throw new Error('mismatchFigures: train and rollout lengths differ');
      if (n === 0) return;
      let trainMean = 0;
      let rolloutMean = 0;
      let logRatioSum = 0;
      for (let i = 0; i < n; i++) {
        const r = train[i] - rollout[i]; // log ρ
        const rho = Math.exp(clampLog(r));
        kl += -r;
        k3 += Math.expm1(r) - r; // exp(r) - r - 1 without cancellation near 0
        absDiff += Math.abs(r);
        rhoSum += rho;
        rhoSquares += rho * rho;
        trainMean += train[i] / n;
        rolloutMean += rollout[i] / n;
        logRatioSum += r;
      }
      S++;
      tokens += n;
      trainingPpl += Math.exp(-trainMean);
      trainingLogPpl += -trainMean;
      rolloutPpl += Math.exp(-rolloutMean);
      rolloutLogPpl += -rolloutMean;
      const d = rolloutMean - trainMean;
      diffSum += d;
      diffAbsSum += Math.abs(d);
      diffMax = Math.max(diffMax, d);
      diffMin = Math.min(diffMin, d);
      ratioSum += Math.exp(d);
      chi2Seq += Math.exp(2 * clampLog(logRatioSum));
    },
    figures(): MismatchFigures | null {
      if (S === 0) return null;
      const rhoMean = rhoSum / tokens;
      return {
        sequences: S,
        tokens,
        training_ppl: trainingPpl / S,
        training_log_ppl: trainingLogPpl / S,
        rollout_ppl: rolloutPpl / S,
        rollout_log_ppl: rolloutLogPpl / S,
        kl: kl / tokens,
        k3_kl: k3 / tokens,
        log_ppl_diff: diffSum / S,
        log_ppl_abs_diff: diffAbsSum / S,
        log_ppl_diff_max: diffMax,
        log_ppl_diff_min: diffMin,
        ppl_ratio: ratioSum / S,
        chi2_token: rhoSquares / tokens - 1,
        chi2_seq: chi2Seq / S - 1,
        rollout_is_eff_sample_size: (rhoMean * rhoMean) / (rhoSquares / tokens),
        train_rollout_logprob_abs_diff: absDiff / tokens,
      };
    },
  };
}
