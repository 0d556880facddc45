// Context slice: the one hover shared by the text panes, the staircase and the tree; the find
// query and its current match; and the jumps (match, edit, observation, diverging target), which
// select the target that shows the place and ask the panes to scroll to it.
import { findMatches, jumpsOf, stepJump, stepMatch, type Jump } from '../core/contextFind';
import type { ContextSlice, Slice } from './types';

export const createContextSlice: Slice<ContextSlice> = (set, get) => {
  let nonce = 0;
  const go = (jump: Jump) => {
    get().selectTarget(jump.target);
    set({ reveal: { first: jump.first, end: jump.end, nonce: ++nonce } });
  };
  return {
    hover: null,
    findQuery: '',
    findIndex: -1,
    findView: null,
    reveal: null,
    setHover(span) {
      const h = get().hover;
      if (h === span || (h && span && h.first === span.first && h.end === span.end)) return;
      set({ hover: span });
    },
    setFindQuery(findQuery) {
      set({ findQuery, findIndex: -1, findView: null });
    },
    stepFind(delta) {
      const { view, findQuery, findIndex, findView, selectedTarget } = get();
      if (!view) return;
      const step = stepMatch(view, findMatches(view, findQuery), findView === view ? findIndex : -1, delta, selectedTarget);
      if (!step) return;
      set({ findIndex: step.index, findView: view });
      go(step.jump);
    },
    jump(kind, delta) {
      const { view, selectedTarget } = get();
      if (!view) return;
      const next = stepJump(jumpsOf(view, kind), selectedTarget, delta);
      if (next) go(next);
    },
    revealIds(span) {
      set({ reveal: { ...span, nonce: ++nonce } });
    },
  };
};
