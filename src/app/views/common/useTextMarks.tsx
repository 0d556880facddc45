// What the staircase and the tree draw for the context panes: the store's one hover, find's
// matches and the current match, read through small selectors (a view redraws when they change).
import { useMemo } from 'react';
import { findMatches } from '../../core/contextFind';
import { useWorkbench } from '../../store';
import type { IdSpan, WorkbenchState } from '../../store/types';

export interface TextMarkState {
  marks: { hover: IdSpan | null; current: IdSpan | null; matches: Int32Array };
  setHover(span: IdSpan | null): void;
}

/** The marks of a store state (for views that draw outside React: the staircase's canvas). */
export function textMarksOf(s: WorkbenchState): TextMarkState['marks'] {
  const matches = s.view ? findMatches(s.view, s.findQuery) : null;
  const index = s.findView === s.view ? s.findIndex : -1;
  const current = matches && index >= 0 && index < matches.count ? { first: matches.ranges[index * 2], end: matches.ranges[index * 2 + 1] } : null;
  return { hover: s.hover, current, matches: matches?.ranges ?? new Int32Array(0) };
}

export function textMarksChanged(s: WorkbenchState, prev: WorkbenchState): boolean {
  return s.hover !== prev.hover || s.findQuery !== prev.findQuery || s.findIndex !== prev.findIndex || s.findView !== prev.findView || s.view !== prev.view;
}

export function useTextMarks(): TextMarkState {
  const view = useWorkbench((s) => s.view);
  const hover = useWorkbench((s) => s.hover);
  const query = useWorkbench((s) => s.findQuery);
  const index = useWorkbench((s) => (s.findView === s.view ? s.findIndex : -1));
  const setHover = useWorkbench((s) => s.setHover);
  const marks = useMemo(() => {
    const matches = view ? findMatches(view, query) : null;
    const current = matches && index >= 0 && index < matches.count ? { first: matches.ranges[index * 2], end: matches.ranges[index * 2 + 1] } : null;
    return { hover, current, matches: matches?.ranges ?? new Int32Array(0) };
  }, [view, hover, query, index]);
  return { marks, setHover };
}
