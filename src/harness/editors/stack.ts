// `stack`: TC-RAG's memory stack. Before a decode, while the view is over budget, the oldest
// tool-result envelope (an observation not yet popped, outside the last `keepTurns` turns) is
// popped: replaced by an editor-written summary of it, or by its cue alone. The agent's actions
// always stay. An envelope whose summary would not be shorter is left alone.

import { BYTE_FRAMING, type Framing } from '../framing';
import type { Block, PlanPiece } from '../live';
import { splitTurns } from '../live';
import type { Editor, StackSpec } from './types';

export function createStackEditor(spec: StackSpec, framing: Framing = BYTE_FRAMING): Editor {
  return {
    spec,
    beforeDecode(view, summarize) {
      if (view.length <= spec.budget) return null;
      const { turns } = splitTurns(view);
      const popped = new Map<Block, PlanPiece>();
      let length = view.length;
      for (const turn of turns.slice(0, Math.max(0, turns.length - spec.keepTurns))) {
        for (const b of turn) {
          if (length <= spec.budget) break;
          const cue = Math.max(1, b.cueLength);
          if (b.role !== 'obs' || b.tokens.length <= cue) continue; // a popped envelope is a summary or a lone cue
          const replacement: PlanPiece = spec.summarize
            ? { insert: { role: 'summary', tokens: framing.summary(summarize(b.notes)), notes: b.notes } }
            : { keep: b, from: b.tokens.length - cue };
          const size = 'insert' in replacement ? replacement.insert.tokens.length : cue;
          if (size >= b.tokens.length) continue;
          popped.set(b, replacement);
          length -= b.tokens.length - size;
        }
      }
      if (popped.size === 0) return null;
      return view.blocks.map((b) => popped.get(b) ?? { keep: b });
    },
    onAct: () => null,
  };
}
