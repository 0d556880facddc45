// `window`: a sliding window over turns. Before a decode, while the view is over budget, the
// oldest turn (an action and the observation after it) is dropped; the prompt is always kept
// (with its cue, which now cues the oldest kept action) and so are the last `keepTurns` turns.

import { keepAll, splitTurns } from '../live';
import type { Editor, WindowSpec } from './types';

export function createWindowEditor(spec: WindowSpec): Editor {
  return {
    spec,
    beforeDecode(view) {
      if (view.length <= spec.budget) return null;
      const { head, turns } = splitTurns(view);
      let length = view.length;
      let drop = 0;
      while (length > spec.budget && turns.length - drop > spec.keepTurns) {
        for (const b of turns[drop]) length -= b.tokens.length;
        drop++;
      }
      if (drop === 0) return null;
      return [...keepAll(head), ...keepAll(turns.slice(drop).flat())];
    },
    onAct: () => null,
  };
}
