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

export function targetRow(tree: TargetFacts, id: number): TargetRow {
  const dropped = tree.dropped[id] === 1;
  return {
    id,
    segment: tree.rollout.segments[id],
    livePrefix: tree.ownPosition[id],
    finalPrefix: dropped ? null : tree.finalPosition[id],
    evictionMass: dropped ? null : tree.evictionMass[id],
    diverging: tree.diverging[id] === 1,
  };
}

/** Branch k's live view as half-open ranges `[first, end)` of physical ids, in live order. */
export function branchView(tree: TargetFacts, k: number): [number, number][] {
  const { starts, lengths } = tree.branches[k];
  return starts.map((s, r) => [s, s + lengths[r]]);
}
