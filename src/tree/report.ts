// Per-target facts of a tree as plain JSON-ready records (what `mw tree --per-target` prints).

import type { ConditioningTree } from './types';

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
