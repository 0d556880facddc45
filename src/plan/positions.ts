// How many position ids a method's plan needs (largest position + 1), from the rollout's events
// alone: the live-view length at the end of each segment. A model with fewer learned positions
// refuses the rollout before any tree or plan is built (whose size can be far larger than L).

import type { Rollout } from '../rollout/rollout';
import type { SequenceMethod } from './types';

/** Per segment k: the length of branch k (the live view when edit k+1 fires, or at the end). */
export function branchLengths(rollout: Rollout): Int32Array {
  const lengths = new Int32Array(rollout.K + 1);
  let live = 0;
  let k = 0;
  for (const event of rollout.events) {
    if (event.op === 'append') {
      live += event.count;
      continue;
    }
    lengths[k++] = live;
    live = 0;
    for (const piece of event.view) live += 'keep' in piece ? piece.keep[1] - piece.keep[0] : piece.insert.count;
  }
  lengths[k] = live;
  return lengths;
}

/**
 * The positions of `method`'s plan (as buildPlan lays it out): naive-full the tape L, naive-compressed
 * the final walk, logit-tree the longest branch holding targets of its own segment, packed-4d the
 * deepest trie node, that is the longest branch.
 */
export function positionsNeeded(rollout: Rollout, method: SequenceMethod): number {
  const lengths = branchLengths(rollout);
  switch (method) {
    case 'naive-full':
      return rollout.length;
    case 'naive-compressed':
      return lengths[rollout.K];
    case 'packed-4d':
      return lengths.reduce((a, b) => Math.max(a, b), 0);
    case 'logit-tree': {
      let most = 0;
      for (const t of rollout.targets) most = Math.max(most, lengths[rollout.segments[t]]);
      return most;
    }
  }
}
