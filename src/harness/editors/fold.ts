// `fold`: model-triggered folding (AgentFold, MemexRL). An action `fold <summary>\n` makes the
// harness replace everything between the prompt and the last `keepTurns` complete turns, earlier
// summaries and the fold action itself included, by `<summary>` + the policy's own summary tokens
// + cue. With no complete turn to fold the harness answers with an observation instead.

import { BYTE_FRAMING, FOLD_PREFIX, type Framing } from '../framing';
import { keepAll, keepWithoutCue, splitTurns } from '../live';
import type { Editor, FoldSpec } from './types';

export { FOLD_PREFIX };
export const FOLD_REFUSED = 'fold refused: nothing to fold.';

/** Whether a byte-tokenizer action is a fold (`fold ` and at least its stop token). */
export function isFoldAction(tokens: readonly number[]): boolean {
  return BYTE_FRAMING.foldSummary(tokens) !== null;
}

export function createFoldEditor(spec: FoldSpec, framing: Framing = BYTE_FRAMING): Editor {
  return {
    spec,
    beforeDecode: () => null,
    onAct(view, act) {
      const summary = framing.foldSummary(act.tokens);
      if (!summary) return null;
      const { head, turns } = splitTurns(view);
      const complete = turns.slice(0, -1); // the last turn is the fold action alone
      if (complete.length <= spec.keepTurns) return { obs: FOLD_REFUSED };
      const cut = complete.length - spec.keepTurns;
      const notes = [...head.slice(1), ...complete.slice(0, cut).flat()].flatMap((b) => b.notes);
      return {
        edit: [keepWithoutCue(head[0]), { insert: { role: 'summary', tokens: framing.summary(summary), notes } }, ...keepAll(complete.slice(cut).flat())],
      };
    },
  };
}
