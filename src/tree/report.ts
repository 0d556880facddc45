// Per-target facts of a tree as plain JSON-ready records: targetRow is what `mw tree --per-target`
// prints (prefixes as lengths, linear in the rollout); targetReport spells each prefix out as ids (the
// worked example's figures and the context model's tests check it against the tree).

import type { ConditioningTree, TargetFacts } from './types';

export interface TargetReport {
  id: number;
  segment: number;
  livePrefix: number[];
  finalPrefix: number[] | null;
  evictionMass: number | null;
  diverging: boolean;
}

export function targetReport(tree: ConditioningTree, id: number): TargetReport {
  const final = tree.finalPrefix(id);
  return {
    id,
    segment: tree.rollout.segments[id],
    livePrefix: Array.from(tree.livePrefix(id)),
    finalPrefix: final ? Array.from(final) : null,
    evictionMass: tree.dropped[id] ? null : tree.evictionMass[id],
    diverging: tree.diverging[id] === 1,
  };
}

export function perTargetReport(tree: ConditioningTree): TargetReport[] {
  return Array.from(tree.targets, (id) => targetReport(tree, id));
}

/**
 * A target's row in `mw tree --per-target`, linear in the rollout: prefixes are named by their
 * length in a branch that the rollout's `branchViews` spells once. `livePrefix` n: the first n ids of
 * branch `segment` (what the policy saw); `finalPrefix` m: the first m ids of the final walk (branch
 * K); null for a dropped target.
 */
export interface TargetRow {
  id: number;
  segment: number;
  livePrefix: number;
  finalPrefix: number | null;
  evictionMass: number | null;
  diverging: boolean;
}

/** The row of target `targets[i]`. */
export function targetRowAt(tree: TargetFacts, i: number): TargetRow {
  const c = tree.byTarget;
  const dropped = c.dropped[i] === 1;
  const id = tree.targets[i];
  return {
    id,
    segment: tree.rollout.segments[id],
    livePrefix: c.ownPosition[i],
    finalPrefix: dropped ? null : c.finalPosition[i],
    evictionMass: dropped ? null : c.evictionMass[i],
    diverging: c.diverging[i] === 1,
  };
}

/** The row of target `id` (a RangeError for an id that is not a target). */
export function targetRow(tree: TargetFacts, id: number): TargetRow {
  const { targets } = tree;
  let lo = 0;
  let hi = targets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (targets[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  if (targets[lo] !== id) throw new RangeError(`id ${id} is not a target of rollout ${tree.rollout.id}`);
  return targetRowAt(tree, lo);
}

/** Branch k's live view as half-open ranges `[first, end)` of physical ids, in live order. */
export function branchView(tree: TargetFacts, k: number): [number, number][] {
  const { starts, lengths } = tree.branches[k];
  return starts.map((s, r) => [s, s + lengths[r]]);
}
