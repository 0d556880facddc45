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

const clampLog = (x: number) => Math.min(LOG_RATIO_BOUND, Math.max(-LOG_RATIO_BOUND, x));

/** The figures over every sequence with at least one pair; null when there is none. */
export function mismatchFigures(sequences: readonly TokenPairs[]): MismatchFigures | null {
  const used = sequences.filter((s) => s.train.length > 0);
  if (used.some((s) => s.train.length !== s.rollout.length)) throw new Error('mismatchFigures: train and rollout lengths differ');
  if (used.length === 0) return null;
  let tokens = 0;
  let kl = 0;
  let k3 = 0;
  let chi2Token = 0;
  let absDiff = 0;
  let rhoSum = 0;
  let rhoSquares = 0;
  let trainingPpl = 0;
  let trainingLogPpl = 0;
  let rolloutPpl = 0;
  let rolloutLogPpl = 0;
  let chi2Seq = 0;
  const logPplDiffs: number[] = [];
  for (const { train, rollout } of used) {
    const n = train.length;
    let trainMean = 0;
    let rolloutMean = 0;
    let logRatioSum = 0;
    for (let i = 0; i < n; i++) {
      const r = train[i] - rollout[i]; // log ρ
      const rho = Math.exp(clampLog(r));
      kl += -r;
      k3 += Math.expm1(r) - r; // exp(r) - r - 1 without cancellation near 0
      chi2Token += rho * rho;
      absDiff += Math.abs(r);
      rhoSum += rho;
      rhoSquares += rho * rho;
      trainMean += train[i] / n;
      rolloutMean += rollout[i] / n;
      logRatioSum += r;
    }
    tokens += n;
    trainingPpl += Math.exp(-trainMean);
    trainingLogPpl += -trainMean;
    rolloutPpl += Math.exp(-rolloutMean);
    rolloutLogPpl += -rolloutMean;
    logPplDiffs.push(rolloutMean - trainMean);
    chi2Seq += Math.exp(2 * clampLog(logRatioSum));
  }
  const S = used.length;
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
    log_ppl_diff: logPplDiffs.reduce((a, b) => a + b, 0) / S,
    log_ppl_abs_diff: logPplDiffs.reduce((a, b) => a + Math.abs(b), 0) / S,
    log_ppl_diff_max: logPplDiffs.reduce((a, b) => Math.max(a, b), -Infinity),
    log_ppl_diff_min: logPplDiffs.reduce((a, b) => Math.min(a, b), Infinity),
    ppl_ratio: logPplDiffs.reduce((a, b) => a + Math.exp(b), 0) / S,
    chi2_token: chi2Token / tokens - 1,
    chi2_seq: chi2Seq / S - 1,
    rollout_is_eff_sample_size: (rhoMean * rhoMean) / (rhoSquares / tokens),
    train_rollout_logprob_abs_diff: absDiff / tokens,
  };
}
