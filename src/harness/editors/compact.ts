// `compact`: auto-compaction. Before a decode, once the view is over budget, everything between
// the prompt and the last `keepTurns` turns (an earlier summary included) is replaced by one
// summary the editor writes from the removed blocks' notes; the summary carries the cue that the
// prompt loses. It does not fire when nothing but the kept turns follows the head.

import { BYTE_FRAMING, type Framing } from '../framing';
import { keepAll, keepWithoutCue, splitTurns } from '../live';
import type { CompactSpec, Editor } from './types';

export function createCompactEditor(spec: CompactSpec, framing: Framing = BYTE_FRAMING): Editor {
  return {
    spec,
    beforeDecode(view, summarize) {
      if (view.length <= spec.budget) return null;
      const { head, turns } = splitTurns(view);
      if (turns.length <= spec.keepTurns) return null;
      const cut = turns.length - spec.keepTurns;
      const notes = [...head.slice(1), ...turns.slice(0, cut).flat()].flatMap((b) => b.notes);
      return [keepWithoutCue(head[0]), { insert: { role: 'summary', tokens: framing.summary(summarize(notes)), notes } }, ...keepAll(turns.slice(cut).flat())];
    },
    onAct: () => null,
  };
}
