// Token objectives at scored targets (docs/objectives.md), float64: SFT (negative log-likelihood) and RL
// (PPO-clipped policy gradient with an optional k3 KL to a frozen reference). Each target j has a
// log-probability ℓ_j = log softmax(z_row)[token], a loss contribution f_j(ℓ_j) and dℓ_j = f_j'(ℓ_j);
// the model backward starts from dLogits (N, V), row r = Σ_{j at r} dℓ_j · (onehot(token_j) − softmax(z_r)).
// tokenObjective (src/gpu/kernels/loss-grad/loss-grad.reference.ts) applies them over logits in float64, the oracle of
// loss-grad.wgsl, which computes the same in fp32.

import type { BatchTarget } from '../plan/batch';
import type { Rollout } from '../rollout/rollout';

/** What a run trains for (docs/objectives.md): supervised NLL or PPO-clipped RL with GRPO advantages. */
export type Objective = 'sft' | 'rl';

/** One scored target, ready for an objective: `weight` already holds the 1/T of a mean. */
export interface ObjectiveTarget {
  row: number; // predictor: the logits row that scores the token
  token: number; // in [0, V)
  weight: number; // multiplies the target's loss; 1/T for a mean over T targets
  rolloutLogprob?: number; // ℓ_rollout from the record (PPO)
  advantage?: number; // A, e.g. grpoAdvantages of the target's rollout (PPO)
  refLogprob?: number; // ℓ_ref under the frozen reference model (PPO with klCoef ≠ 0)
}

/**
 * `sft`: loss_j = −w·ℓ_j.
 * `ppo`: r = exp(ℓ − ℓ_rollout), loss_j = −w·min(r·A, clip(r, 1−ε, 1+ε)·A) + w·β·k3, with
 * k3 = exp(ℓ_ref − ℓ) − (ℓ_ref − ℓ) − 1 (Schulman's estimator of KL(π_θ ‖ π_ref) at the sampled
 * token, GRPO's choice: it needs only the reference's logprob of each target, not its full row).
 */
export type TokenObjective = { kind: 'sft' } | { kind: 'ppo'; epsilon?: number; klCoef?: number };

export const DEFAULT_PPO_EPSILON = 0.2;

/**
 * The per-target term of an objective, as a function of the target's log-probability: its
 * (weighted) loss contribution, d loss / d ℓ and the ratio π_θ / π_rollout (1 for sft).
 * PPO's gradient flows through the unclipped branch whenever it is the minimum (ties included:
 * inside the clip range both branches are equal and both have derivative r·A); it is 0 where the
 * clipped, constant branch is the minimum (r > 1+ε with A > 0, r < 1−ε with A < 0).
 */
export function targetTerm(objective: TokenObjective, target: ObjectiveTarget, logprob: number) {
  const w = target.weight;
  if (objective.kind === 'sft') return { loss: -w * logprob, dLogprob: -w, ratio: 1 };
  const epsilon = objective.epsilon ?? DEFAULT_PPO_EPSILON;
  const beta = objective.klCoef ?? 0;
  const A = target.advantage!;
  const ratio = Math.exp(logprob - target.rolloutLogprob!);
  const clipped = Math.min(Math.max(ratio, 1 - epsilon), 1 + epsilon);
  const unclippedObj = ratio * A;
  const clippedObj = clipped * A;
  let loss = -w * Math.min(unclippedObj, clippedObj);
  let dLogprob = unclippedObj <= clippedObj ? -w * ratio * A : 0;
  if (beta !== 0) {
    loss += w * beta * k3(logprob, target.refLogprob!);
    dLogprob += w * beta * (1 - Math.exp(target.refLogprob! - logprob));
  }
  return { loss, dLogprob, ratio };
}

/** k3 = exp(ℓ_ref − ℓ) − (ℓ_ref − ℓ) − 1 ≥ 0, the per-target KL estimate the `ppo` objective adds. */
export function k3(logprob: number, refLogprob: number): number {
  const d = refLogprob - logprob;
  return Math.exp(d) - d - 1;
}

/** Throws naming the first target the objective cannot score (the GPU binding runs the same check). */
export function validateTargets(targets: readonly ObjectiveTarget[], N: number, V: number, objective: TokenObjective): void {
  if (objective.kind === 'ppo') {
    const epsilon = objective.epsilon ?? DEFAULT_PPO_EPSILON;
    if (!(epsilon >= 0 && epsilon < 1)) throw new Error(`ppo: clip epsilon must be in [0, 1), got ${epsilon}`);
    const beta = objective.klCoef ?? 0;
    if (!(beta >= 0 && Number.isFinite(beta))) throw new Error(`ppo: klCoef must be a finite number ≥ 0, got ${beta}`);
  }
  targets.forEach((t, j) => {
    if (!Number.isInteger(t.row) || t.row < 0 || t.row >= N) throw new Error(`target ${j}: row ${t.row} outside [0, ${N})`);
    if (!Number.isInteger(t.token) || t.token < 0 || t.token >= V) throw new Error(`target ${j}: token ${t.token} outside [0, ${V})`);
    if (!Number.isFinite(t.weight)) throw new Error(`target ${j}: weight ${t.weight} is not finite`);
    if (objective.kind !== 'ppo') return;
    if (!(Number.isFinite(t.rolloutLogprob) && t.rolloutLogprob! <= 0)) {
      throw new Error(`target ${j}: ppo needs the rollout's logprob (a finite number ≤ 0), got ${t.rolloutLogprob}`);
    }
    if (!Number.isFinite(t.advantage)) throw new Error(`target ${j}: ppo needs a finite advantage, got ${t.advantage}`);
    if ((objective.klCoef ?? 0) !== 0 && !(Number.isFinite(t.refLogprob) && t.refLogprob! <= 0)) {
      throw new Error(`target ${j}: a KL to the reference needs the reference's logprob (a finite number ≤ 0), got ${t.refLogprob}`);
    }
  });
}

/** A scored target: the token and the logits row that predicts it (docs/methods.md). */
export interface ScoredTarget {
  row: number;
  token: number;
}

/** SFT (docs/objectives.md): mean NLL over the targets, so every weight is 1/T. */
export function sftTargets(scored: readonly ScoredTarget[]): ObjectiveTarget[] {
  const weight = 1 / scored.length;
  return scored.map(({ row, token }) => ({ row, token, weight }));
}

export interface RlScoredTarget extends ScoredTarget {
  rolloutLogprob: number;
  advantage: number;
  refLogprob?: number;
}

/** RL (docs/objectives.md): the token-level PPO objective, a mean over all targets of the batch (weights 1/T). */
export function rlTargets(scored: readonly RlScoredTarget[]): ObjectiveTarget[] {
  const weight = 1 / scored.length;
  return scored.map((t) => ({ ...t, weight }));
}

/**
 * The targets of one step's batch as the objective takes them: each weighted 1/T (a mean over the
 * batch); RL (given each rollout's group-relative advantage, grpoAdvantages) adds its rollout's
 * advantage and its rollout-time logprob, which it needs.
 */
export function stepTargets(
  targets: readonly BatchTarget[],
  targetRollout: readonly number[],
  rollouts: readonly Pick<Rollout, 'id'>[],
  advantages: ArrayLike<number> | null,
): ObjectiveTarget[] {
  const T = targets.length;
  return targets.map((t, j) => {
    const target: ObjectiveTarget = { row: t.predictor, token: t.token, weight: 1 / T };
    if (advantages) {
      const r = targetRollout[j];
      if (t.rolloutLogprob === undefined || !Number.isFinite(t.rolloutLogprob)) {
        throw new Error(`RL needs rollout logprobs: rollout ${rollouts[r].id}, target ${t.id} has none`);
      }
      target.rolloutLogprob = t.rolloutLogprob;
      target.advantage = advantages[r];
    }
    return target;
  });
}
