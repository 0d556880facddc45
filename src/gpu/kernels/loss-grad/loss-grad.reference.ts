// Float64 reference of loss-grad.wgsl: a token objective (src/objectives/tokens.ts: SFT, or PPO with an optional
// k3 KL) over logits (N, V) at scored targets, with its gradient with respect to every logit: row r gets
// Σ_{j at r} dℓ_j · (onehot(token_j) − softmax(z_r)).

import { type ObjectiveTarget, type TokenObjective, targetTerm, validateTargets } from '../../../objectives/tokens';
import { type Vec, checkLogits, rowLogSumExp } from '../logsoftmax/logsoftmax.reference';

/** The objective over logits (N, V) at `targets`, with its gradient with respect to every logit. */
export function tokenObjective(logits: Vec, N: number, V: number, targets: readonly ObjectiveTarget[], objective: TokenObjective) {
  checkLogits(logits, N, V);
  validateTargets(targets, N, V, objective);
  const T = targets.length;
  const result = {
    loss: 0, // Σ_j loss_j (a mean when the weights are 1/T)
    logprobs: new Float64Array(T), // (T) ℓ_j
    losses: new Float64Array(T), // (T) loss_j
    dLogprobs: new Float64Array(T), // (T) d loss / d ℓ_j
    ratios: new Float64Array(T), // (T) π_θ / π_rollout (1 for sft)
    dLogits: new Float64Array(N * V), // (N, V) d loss / d logits; zero rows where no target is scored
  };
  targets.forEach((target, j) => {
    const { row, token } = target;
    const lse = rowLogSumExp(logits, V, row);
    const logprob = logits[row * V + token] - lse;
    const term = targetTerm(objective, target, logprob);
    result.logprobs[j] = logprob;
    result.losses[j] = term.loss;
    result.dLogprobs[j] = term.dLogprob;
    result.ratios[j] = term.ratio;
    result.loss += term.loss;
    // d ℓ / d z_v = [v == token] − softmax(z)_v
    for (let v = 0; v < V; v++) result.dLogits[row * V + v] -= term.dLogprob * Math.exp(logits[row * V + v] - lse);
    result.dLogits[row * V + token] += term.dLogprob;
  });
  return result;
}
