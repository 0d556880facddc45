// A lane's finished step, pure CPU and planned once: the step layout of the rollouts it trains on
// (src/plan/step.ts: rows, teacher rows, SDCC's leaf pairs, the drift batch, from the plans the fit
// check built), their objective targets with GRPO advantages, the KL pairs the gate keeps, and the
// rollouts left out with why. The GPU step (src/gpu/train.ts) only allocates, encodes and reads back.

import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import type { FittedBatch } from '../plan/needs';
import { assembleStep, planCache, type StepLayout, type StepLayoutOptions } from '../plan/step';
import type { Method } from '../plan/types';
import { grpoAdvantages } from './grpo';
import { gatedPairs, type SdccGate } from './sdcc';
import { stepTargets, type Objective, type ObjectiveTarget, type TokenObjective } from './tokens';

export interface StepOptions extends StepLayoutOptions {
  objective: Objective;
  /** SDCC's KL weight λ (docs/methods.md); λ = 0 is naive-compressed. */
  lambda?: number;
  /** Which diverging leaves SDCC's KL is taken at (src/objectives/sdcc.ts): every one (the paper's form, default) or, under RL, those of rollouts with a non-zero advantage. */
  sdccGate?: SdccGate;
  /** PPO clip ε. */
  epsilon?: number;
  /**
   * RL only: weight of the KL to a frozen reference model (k3 estimator, docs/objectives.md), which scores the
   * same plan first (the GPU step takes the reference model: one extra forward and read back).
   */
  klCoef?: number;
}

/** Everything a training step computes from, as data. */
export interface PlannedStep {
  method: Method;
  objective: Objective;
  /** The rollouts trained on, in batch order (a target's rollout indexes them). */
  rollouts: readonly Rollout[];
  /** Rollouts of the batch left out: their method's plan does not fit the model's positions, or scores nothing. */
  leftOut: FittedBatch['leftOut'];
  layout: StepLayout;
  /** One per batch target, in batch order; `weight` holds the 1/T of the mean. */
  targets: ObjectiveTarget[];
  tokenObjective: TokenObjective;
  /** SDCC's KL weight (0 for every other method). */
  lambda: number;
  /** The k3 KL's weight to a reference model (0: none). */
  klCoef: number;
  /** The diverging leaves SDCC's KL is taken at: every pair of the layout, or (gated) those of rollouts the policy gradient moves. */
  klPairs: StepLayout['pairs'];
  /** Wall time of the assembly (layout, targets, pairs; trees and fit check excluded): part of the step's stepMs. */
  planMs: number;
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

const KL_NEEDS_REFERENCE = 'trainStep: a KL to a reference (klCoef) needs objective rl and a reference model';

/**
 * The step of `rollouts` (all trained: no fit check) or of a fitted batch (fitRollouts: its plans are
 * reused, its left-out rollouts recorded). Throws on an empty batch and on a step with no target.
 */
export function planStep(batch: readonly Rollout[] | FittedBatch, options: StepOptions, trees?: readonly ConditioningTree[]): PlannedStep {
  const fitted: FittedBatch = isFitted(batch) ? batch : withPlans(batch, options, trees ?? batch.map(deriveTree));
  const started = now();
  const rollouts = fitted.trained;
  if (rollouts.length === 0) throw new Error('trainStep: an empty batch');
  const layout = assembleStep(fitted.trees, options, fitted.plans);
  const advantages =
    options.objective === 'rl'
      ? grpoAdvantages(
          rollouts.map((r) => r.reward ?? 0),
          rollouts.map((r) => r.group ?? null),
        )
      : null;
  const targets = stepTargets(layout.batch.targets, layout.targetRollout, rollouts, advantages);
  if (targets.length === 0) throw new Error(`trainStep: ${options.method} scores no target in this batch (every target dropped?)`);
  const klCoef = options.klCoef ?? 0;
  if (klCoef !== 0 && options.objective !== 'rl') throw new Error(KL_NEEDS_REFERENCE);
  const klPairs = gatedPairs(layout.pairs, (p) => p.rollout, advantages, options.sdccGate ?? 'leaves');
  return {
    method: options.method,
    objective: options.objective,
    rollouts,
    leftOut: fitted.leftOut,
    layout,
    targets,
    tokenObjective: options.objective === 'rl' ? { kind: 'ppo', epsilon: options.epsilon, klCoef } : { kind: 'sft' },
    lambda: options.method === 'sdcc' ? (options.lambda ?? 0.1) : 0,
    klCoef,
    klPairs,
    planMs: now() - started,
  };
}

function isFitted(batch: readonly Rollout[] | FittedBatch): batch is FittedBatch {
  return !Array.isArray(batch);
}

function withPlans(rollouts: readonly Rollout[], options: StepOptions, trees: readonly ConditioningTree[]): FittedBatch {
  return { trained: [...rollouts], trees: [...trees], leftOut: [], plans: planCache(trees, options) };
}
