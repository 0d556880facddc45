// `fold`: model-triggered folding (AgentFold, MemexRL). An action `fold <summary>\n` makes the
// harness replace everything between the prompt and the last `keepTurns` complete turns, earlier
// summaries and the fold action itself included, by `<summary>` + the policy's own summary tokens
// + cue. With no complete turn to fold the harness answers with an observation instead.

import { byteTokenizer } from '../../rollout/tokenizer';
import { summaryTokens } from '../framing';
import { keepAll, keepWithoutCue, splitTurns } from '../live';
import type { Editor, FoldSpec } from './types';

export const FOLD_PREFIX = 'fold ';
const PREFIX_TOKENS = byteTokenizer.encode(FOLD_PREFIX);
export const FOLD_REFUSED = 'fold refused: nothing to fold.';

export function isFoldAction(tokens: readonly number[]): boolean {
  return tokens.length > PREFIX_TOKENS.length && PREFIX_TOKENS.every((t, i) => tokens[i] === t);
}

export function createFoldEditor(spec: FoldSpec): Editor {
  return {
    spec,
    beforeDecode: () => null,
    onAct(view, act) {
      if (!isFoldAction(act.tokens)) return null;
      const { head, turns } = splitTurns(view);
      const complete = turns.slice(0, -1); // the last turn is the fold action alone
      if (complete.length <= spec.keepTurns) return { obs: FOLD_REFUSED };
      const cut = complete.length - spec.keepTurns;
      const notes = [...head.slice(1), ...complete.slice(0, cut).flat()].flatMap((b) => b.notes);
      const summary = act.tokens.slice(PREFIX_TOKENS.length, act.tokens.length - 1); // without the stop token
      return {
        edit: [keepWithoutCue(head[0]), { insert: { role: 'summary', tokens: summaryTokens(summary), notes } }, ...keepAll(complete.slice(cut).flat())],
      };
    },
  };
}
