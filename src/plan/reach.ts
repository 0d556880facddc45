// A scoring plan within the model's reach (docs/methods.md, "Long sessions"): a target is in reach when its
// sequence up to it, its context and itself, fits the model's P positions (its position id < P); the plan keeps
// exactly the rows those targets see, so each is scored as the plan of a rollout cut there would score it.
// With a window of N positions, a target beyond N is scored instead on the last N − 1 tokens of its own
// context and itself, at positions 0 .. N − 1: the same cut for every method, each on its own context.

import { visibleKeys } from './visibility';
import type { PlanSequence, PlanTarget, SequencePlan } from './types';

export interface Reach {
  /** The model's positions P: learned position embeddings, or a family model's max_position_embeddings. */
  positions: number;
  /** With a window: every target's context cut to its last window − 1 tokens (2 ≤ window ≤ positions). */
  window?: number;
}

export interface ReachedPlan {
  plan: SequencePlan;
  /** Ids of the targets the plan scores that need more than P positions (none with a window). */
  outOfReach: number[];
  /** Ids of the targets scored on a window of their context (their sequence needs more than `window` positions). */
  windowed: number[];
}

/** Why a window cannot be used with a model of `positions`, or null. */
export function windowProblem(window: number, positions: number): string | null {
  if (!Number.isInteger(window) || window < 2)
    return `the window must be an integer of at least 2 positions (a token of context and the target), got ${window}`;
  if (window > positions) return `the window of ${window} positions exceeds the model's ${positions}`;
  return null;
}

/**
 * The rows of `sequence` whose position is below `limit`, with `end` renumbered, scoring those of `targets`
 * (rows a kept row sees all have smaller positions, so they are kept too). Null when no target is left.
 */
function cutSequence(sequence: PlanSequence, targets: readonly PlanTarget[], limit: number): PlanSequence | null {
  if (!targets.length) return null;
  const n = sequence.ids.length;
  const index = new Int32Array(n).fill(-1);
  const keptBefore = new Uint32Array(n + 1); // keptBefore[i]: kept rows among 0 .. i-1
  let kept = 0;
  for (let i = 0; i < n; i++) {
    keptBefore[i] = kept;
    if (sequence.positions[i] < limit) index[i] = kept++;
  }
  keptBefore[n] = kept;
  const rows = new Int32Array(kept);
  for (let i = 0; i < n; i++) if (index[i] >= 0) rows[index[i]] = i;
  return {
    ids: rows.map((i) => sequence.ids[i]),
    tokens: rows.map((i) => sequence.tokens[i]),
    positions: rows.map((i) => sequence.positions[i]),
    end: Uint32Array.from(rows, (i) => keptBefore[sequence.end[i]]),
    targets: targets.map((t) => ({ ...t, index: index[t.index], predictor: index[t.predictor] })),
  };
}

/** One causal sequence: the last window − 1 rows of `target`'s context and the target, at positions 0 .. window − 1. */
function windowSequence(sequence: PlanSequence, target: PlanTarget, window: number): PlanSequence {
  // The predictor row and every row it sees: a causal sequence's rows before the target, the trie's ancestors.
  const context = visibleKeys(sequence.end, target.predictor).slice(-(window - 1));
  const rows = Int32Array.from([...context, target.index]);
  const n = rows.length;
  return {
    ids: rows.map((i) => sequence.ids[i]),
    tokens: rows.map((i) => sequence.tokens[i]),
    positions: Int32Array.from({ length: n }, (_, i) => i),
    end: new Uint32Array(n).fill(n),
    targets: [{ ...target, index: n - 1, predictor: n - 2 }],
  };
}

/**
 * `plan` within `reach`: each sequence cut to the rows of positions below P (without a window) or below the
 * window, scoring the targets there; the targets beyond are counted (out of reach) or, with a window, each
 * scored on a sequence of its own: the last window − 1 tokens of its context, then itself.
 */
export function reachPlan(plan: SequencePlan, reach: Reach): ReachedPlan {
  const limit = reach.window ?? reach.positions;
  const sequences: PlanSequence[] = [];
  const windowedSequences: PlanSequence[] = [];
  const outOfReach: number[] = [];
  const windowed: number[] = [];
  for (const s of plan.sequences) {
    const fits = s.targets.filter((t) => s.positions[t.index] < limit);
    const beyond = s.targets.filter((t) => s.positions[t.index] >= limit);
    if (!beyond.length) {
      sequences.push(s);
      continue;
    }
    const cut = cutSequence(s, fits, limit);
    if (cut) sequences.push(cut);
    for (const t of beyond) {
      if (reach.window === undefined) outOfReach.push(t.id);
      else {
        windowed.push(t.id);
        windowedSequences.push(windowSequence(s, t, reach.window));
      }
    }
  }
  return { plan: { method: plan.method, sequences: [...sequences, ...windowedSequences] }, outOfReach, windowed };
}
