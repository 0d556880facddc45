// What the context panes point at, drawn over the staircase: the ids under the pointer (in any
// view) as a column band, find's matches as ticks on the id axis and the current match as a band.
// Columns, because an id's cells are one column of the staircase in every row that holds it.
import type { Painter } from '../../export/painter';
import { geometry, MARGIN, type StaircaseFrame } from './draw';

export interface TextMarks {
  hover: { first: number; end: number } | null;
  current: { first: number; end: number } | null;
  /** Sorted match ranges [first, end) flattened. */
  matches: Int32Array;
}

const HOVER = '#ffffff';
const MATCH = '#f7e07e';
const CURRENT = '#f2a541';

export function drawTextMarks(p: Painter, frame: StaircaseFrame, marks: TextMarks): void {
  const { model, width, height, zoom } = frame;
  const g = geometry(model, width, height);
  const colPx = zoom.k * g.cw;
  const ox = MARGIN.left;
  const oy = MARGIN.top;
  const sx = (id: number) => ox + zoom.x + id * colPx;
  const lo = Math.max(0, Math.floor(-zoom.x / colPx));
  const hi = Math.min(model.length, Math.ceil((g.plotW - zoom.x) / colPx));
  const band = (span: { first: number; end: number }, color: string, alpha: number) => {
    const a = Math.max(span.first, lo);
    const b = Math.min(span.end, hi);
    if (b <= a) return;
    const x = sx(a);
    const w = Math.max(sx(b) - x, 2);
    p.fillRect(color, x, oy, w, g.plotH, alpha);
    p.fillRect(color, x, oy - 6, w, 5, 1);
  };
  p.pushClip(ox, oy - 8, g.plotW, g.plotH + 8);
  // Match ticks on the axis, from the first range that ends inside the window.
  const m = marks.matches;
  let i = 0;
  let hiIdx = m.length / 2;
  while (i < hiIdx) {
    const mid = (i + hiIdx) >> 1;
    if (m[mid * 2 + 1] <= lo) i = mid + 1;
    else hiIdx = mid;
  }
  for (; i * 2 < m.length && m[i * 2] < hi; i++) {
    const x = sx(m[i * 2]);
    p.fillRect(MATCH, x, oy - 5, Math.max(sx(m[i * 2 + 1]) - x, 1.5), 4);
  }
  if (marks.current) band(marks.current, CURRENT, 0.22);
  if (marks.hover) band(marks.hover, HOVER, 0.2);
  p.flush();
  p.popClip();
}
