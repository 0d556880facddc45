// What a plan asks of the model: the sequences it runs, the positions they use, the rows its
// forward passes hold and the targets its loss averages over. One rule for every caller that
// checks a rollout against a model (mw train, mw experiment, the browser's runs, the score worker),
// and the rollouts of a batch that fit it, with why the others do not.

import type { Rollout } from '../rollout/rollout';
import type { ConditioningTree } from '../tree/types';
import { buildPlan } from './build';
import { planCache, type PlanCache } from './step';
import type { Method, Plan, PlanOptions, PlanSequence } from './types';

export interface PlanNeeds {
  /** Every sequence the plan runs: a sequence plan's, or SDCC's student then its teachers. */
  sequences: PlanSequence[];
  /** Positions the model must have: the largest position id + 1 (learned embeddings stop at P). */
  positions: number;
  /** Rows of the forward passes (SDCC's packed teacher shares the student's rows). */
  rows: number;
  /** Targets the loss averages over (SDCC: the student's; its teachers add the KL pairs). */
  targets: number;
}

export function planNeeds(plan: Plan): PlanNeeds {
  const sequences = plan.method === 'sdcc' ? [plan.student, ...plan.teachers] : plan.sequences;
  let positions = 0;
  let rows = 0;
  for (const s of sequences) {
    rows += s.ids.length;
    for (const p of s.positions) positions = Math.max(positions, p + 1);
  }
  if (plan.method === 'sdcc') rows -= plan.sharedRows;
  const targets = plan.method === 'sdcc' ? plan.student.targets.length : plan.sequences.reduce((n, s) => n + s.targets.length, 0);
  return { sequences, positions, rows, targets };
}

/** The needs of `method`'s plan of `tree`. */
export function methodNeeds(tree: ConditioningTree, method: Method, options?: PlanOptions): PlanNeeds {
  return planNeeds(buildPlan(tree, method, options));
}

/** Why a built plan cannot train on a model of `nPositions`, or null when it can. */
function unfitReason(plan: Plan, nPositions: number): string | null {
  const needs = planNeeds(plan);
  if (needs.positions > nPositions) return `${plan.method} needs ${needs.positions} positions, the model has ${nPositions}`;
  if (needs.targets === 0) return `${plan.method} scores no target`;
  return null;
}

/** The rollouts of a batch that fit, their trees, and those left out with why. */
export interface FittedBatch {
  trained: Rollout[];
  trees: ConditioningTree[];
  leftOut: { id: string; reason: string }[];
  /** The plans the check built, over `trees` (the fitted ones), for the step's assembly to reuse. */
  plans: PlanCache;
}

/**
 * The rollouts of `batch` every one of `methods` can train on within `nPositions`, and why the others
 * cannot (the first method's reason that fails). Each plan is built once, and kept for the step.
 */
export function fitRollouts(
  batch: { rollouts: readonly Rollout[]; trees: readonly ConditioningTree[] },
  methods: readonly Method[],
  nPositions: number,
  options: PlanOptions = {},
): FittedBatch {
  const plans = planCache(batch.trees, options);
  const reasons = batch.trees.map((_, r) => methods.map((m) => unfitReason(plans(r, m), nPositions)).find((why) => why !== null));
  const fit = batch.rollouts.flatMap((_, i) => (reasons[i] ? [] : [i]));
  return {
    trained: fit.map((i) => batch.rollouts[i]),
    trees: fit.map((i) => batch.trees[i]),
    leftOut: batch.rollouts.flatMap((r, i) => (reasons[i] ? [{ id: r.id, reason: reasons[i] }] : [])),
    plans: (r, method) => plans(fit[r], method),
  };
}
