// The conditioning tree of one rollout (docs/tree.md), as plain data: branches, final walk, per-id
// prefix facts, the packed trie and the figures of `mw tree --json`.

import type { Runs } from '../rollout/live-view';
import type { Rollout } from '../rollout/rollout';
import type { PackedTrie } from './trie';

/** The section-3 figures, keys exactly as `mw tree --json` prints them. */
export interface TreeFigures {
  K: number;
  branches: number;
  physicalLength: number;
  finalWalkLength: number;
  packedLength: number;
  targets: number;
  droppedTargets: number;
  divergingLeaves: number;
  evictionMassTotal: number;
  evictionMassMax: number;
}

/** What edit k did to the live view. */
export interface EditInfo {
  /** 1..K */
  edit: number;
  /** Index of the edit in `rollout.events`. */
  event: number;
  /** Ids live before the edit and not kept, in live order. */
  evicted: Int32Array;
  /** The edit's inserted ids are first .. first + count - 1 (count may be 0). */
  inserted: { first: number; count: number };
}

export interface ConditioningTreeData extends PackedTrie {
  rollout: Rollout;
  K: number;
  figures: TreeFigures;
  /** Branch k = the live view at the end of segment k, as runs of ids (K + 1 of them). */
  branches: Runs[];
  edits: EditInfo[];
  /** Branch K, materialised. */
  finalWalk: Int32Array;
  /** Per id: its index in the final walk, -1 when absent. */
  finalPosition: Int32Array;
  /** Per id: its index in its own segment's branch (the length of its live prefix). */
  ownPosition: Int32Array;
  /** Target ids, ascending (same as rollout.targets). */
  targets: Int32Array;
  /** The per-target facts indexed like `targets` (what `mw tree --per-target` prints). */
  byTarget: TargetColumns;
  /** Per id: 1 for a dropped target (absent from the final walk or first in it). */
  dropped: Uint8Array;
  /** Per id: eviction mass of a non-dropped target, -1 elsewhere. */
  evictionMass: Int32Array;
  /** Per id: 1 for a diverging leaf. */
  diverging: Uint8Array;
  /** Ids of the diverging leaves, ascending. */
  divergingLeaves: Int32Array;
  /** Per id: the packed index that scores it (on its own branch's path), -1 for non-targets. */
  scoringNode: Int32Array;
}

/**
 * A conditioning tree: its data (plain objects and typed arrays, so a worker can derive it and post
 * it to the page) and the prefixes read off that data.
 */
export interface ConditioningTree extends ConditioningTreeData {
  /** Ids of branch k. */
  branchIds(k: number): Int32Array;
  /** Ids before `id` in its own segment's branch: what the policy saw when it produced `id`. */
  livePrefix(id: number): Int32Array;
  /** Ids before `id` in the final walk; null when absent from it or first in it. */
  finalPrefix(id: number): Int32Array | null;
  /** All ids smaller than `id`. */
  fullPrefix(id: number): Int32Array;
}

/**
 * Each target's facts, indexed like `targets` (index i is target targets[i]): a few arrays of the
 * targets' length, however long the tape.
 */
export interface TargetColumns {
  /** Its position in its own segment's branch (the length of its live prefix). */
  ownPosition: Int32Array;
  /** Its index in the final walk, -1 when absent. */
  finalPosition: Int32Array;
  /** 1 for a dropped target (absent from the final walk or first in it). */
  dropped: Uint8Array;
  /** Eviction mass of a non-dropped target, -1 for a dropped one. */
  evictionMass: Int32Array;
  /** 1 for a diverging leaf. */
  diverging: Uint8Array;
}

/** The part of a conditioning tree that per-target rows need (deriveTargetFacts builds it without the trie or per-id arrays). */
export type TargetFacts = Pick<ConditioningTree, 'rollout' | 'K' | 'figures' | 'branches' | 'targets' | 'byTarget'>;
