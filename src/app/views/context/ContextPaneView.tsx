// One context pane: a prefix of the selected target as whole messages of readable text, its diff
// against the live prefix coloured per glyph, in a list virtualised by @tanstack/react-virtual.
// Items are a block's heading or one line of its text cut to the pane's width (from the font's
// measured glyph width), so only the visible lines' glyphs exist as elements; each is measured as it
// renders (a line that still wraps, e.g. a wide character the width missed, keeps its true height).
// Hovering a glyph or a heading puts its ids in the store's one hover; the pane scrolls to the store's reveal.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import {
  blockHeading,
  GLYPH,
  glyphColumns,
  glyphIds,
  lineOfId,
  messagesOf,
  nextDifferenceRow,
  paneLines,
  paneText,
  targetLabel,
  type ContextPane,
  type PaneRow,
} from '../../core/contextModel';
import { matchAt, type Matches } from '../../core/contextFind';
import { PREFIX_STATE } from '../../core/prefixStates';
import type { ViewData } from '../../core/viewData';
import { useWorkbench } from '../../store';
import type { IdSpan } from '../../store/types';
import { measureFrame } from '../common/perf';

const STATE_CLASS: Record<number, string> = {
  [PREFIX_STATE.missing]: 'missing',
  [PREFIX_STATE.stale]: 'stale',
  [PREFIX_STATE.future]: 'future',
};
const KIND_CLASS: Record<number, string> = { [GLYPH.mark]: 'mark', [GLYPH.special]: 'special', [GLYPH.invalid]: 'invalid' };

export interface PaneInfo {
  title: string;
  subtitle: string;
}

interface Props {
  view: ViewData;
  pane: ContextPane;
  info: PaneInfo;
  matches: Matches;
  current: IdSpan | null;
  showIds: boolean;
}

const LINE_H = 18;
const ID_LINE_H = 34;
/** A line's horizontal padding and border (.pane-row), plus a little slack for rounding. */
const ROW_INSET = 25 + 3;
/** A chip with ids (.with-ids .g): its least width, frame (padding and margin) and the px per digit of its id. */
const CHIP_MIN = 22;
const CHIP_FRAME = 6;
const ID_DIGIT_W = 6;

/** Width of one character in the pane's monospace font (canvas text metrics: no layout). */
function monoCharWidth(el: HTMLElement): number {
  const ctx = document.createElement('canvas').getContext('2d');
  if (!ctx) return 7.3;
  const style = getComputedStyle(el);
  ctx.font = `${style.fontSize} ${style.fontFamily}`;
  const w = ctx.measureText('0'.repeat(64)).width / 64;
  return w > 0 ? w : 7.3;
}

/** Ids [first, end) of a row's glyphs, for hover tests (contiguous only within a run; min..max suffices to test overlap). */
function rowSpanIds(pane: ContextPane, row: PaneRow): IdSpan | null {
  if (row.kind === 'head') {
    const b = pane.blocks[row.block];
    let lo = Infinity;
    let hi = -Infinity;
    for (let e = b.e0; e < b.e1; e++) {
      lo = Math.min(lo, pane.ids[e]);
      hi = Math.max(hi, pane.ids[e]);
    }
    return { first: lo, end: hi + 1 };
  }
  if (row.kind === 'target') return { first: pane.target, end: pane.target + 1 };
  if (row.g1 <= row.g0) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (let g = row.g0; g < row.g1; g++) {
    const { first, end } = glyphIds(pane, g);
    lo = Math.min(lo, first);
    hi = Math.max(hi, end);
  }
  return { first: lo, end: hi };
}

/** The glyph under the pointer in a span holding glyphs data-g .. data-g + data-n - 1 (the character the caret lands on). */
function glyphAtPoint(pane: ContextPane, el: HTMLElement, x: number, y: number): number {
  const g0 = Number(el.dataset.g);
  const n = Number(el.dataset.n ?? 1);
  const node = el.firstChild;
  if (n <= 1 || !node || node.nodeType !== Node.TEXT_NODE) return g0;
  // The caret offset under the point, then the glyph at it or just before it (whichever holds the point).
  const doc = document as Document & { caretPositionFromPoint?(x: number, y: number): { offsetNode: Node; offset: number } | null };
  const pos = doc.caretPositionFromPoint?.(x, y);
  const caret = pos
    ? { node: pos.offsetNode, offset: pos.offset }
    : (() => {
        const r = document.caretRangeFromPoint?.(x, y);
        return r ? { node: r.startContainer, offset: r.startOffset } : null;
      })();
  if (!caret || caret.node !== node) return g0;
  const range = document.createRange();
  let start = 0;
  for (let g = g0; g < g0 + n; g++) {
    const len = pane.glyphs[g].shown.length;
    if (caret.offset <= start + len) {
      for (const [k, a] of [
        [g, start],
        [g + 1, start + len],
        [g - 1, start - (pane.glyphs[g - 1]?.shown.length ?? 0)],
      ] as const) {
        if (k < g0 || k >= g0 + n) continue;
        range.setStart(node, a);
        range.setEnd(node, a + pane.glyphs[k].shown.length);
        for (const r of range.getClientRects()) if (x >= r.left && x < r.right && y >= r.top && y < r.bottom) return k;
      }
      return g;
    }
    start += len;
  }
  return g0 + n - 1;
}

const overlaps = (a: IdSpan | null, b: IdSpan | null) => !!a && !!b && a.first < b.end && b.first < a.end;

export function ContextPaneView({ view, pane, info, matches, current, showIds }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const hover = useWorkbench((s) => s.hover);
  const reveal = useWorkbench((s) => s.reveal);
  const setHover = useWorkbench((s) => s.setHover);
  // 0 until measured: lines are cut once the width is known (the first scroll to the end needs the final lines).
  const [width, setWidth] = useState(0);
  const [charW, setCharW] = useState(7.3);
  const [copied, setCopied] = useState(false);

  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    setWidth(el.clientWidth);
    setCharW(monoCharWidth(el));
    return () => observer.disconnect();
  }, []);

  // Lines cut to the width; a cut never splits a find match when another place will do.
  const split = useMemo(() => {
    if (width <= 0) return { lines: [], firstLine: new Int32Array(pane.rows.length) };
    const capacity = Math.max(8 * charW, width - ROW_INSET);
    const width1 = showIds
      ? (g: number) => {
          const cols = glyphColumns(pane.glyphs[g]) * charW;
          const id = pane.ids[pane.glyphEntry[g]];
          // A glyph of the previous glyph's token continues its chip; any other opens a chip.
          const opens = g === 0 || pane.ids[pane.glyphEntry[g - 1]] !== id || pane.glyphEnd[g] - pane.glyphEntry[g] > 1;
          return opens ? Math.max(CHIP_MIN, cols, String(id).length * ID_DIGIT_W) + CHIP_FRAME : cols;
        }
      : (g: number) => glyphColumns(pane.glyphs[g]) * charW;
    const joined = matches.count
      ? (g: number) => {
          const m = matchAt(matches, glyphIds(pane, g).first);
          return m >= 0 && m === matchAt(matches, glyphIds(pane, g - 1).first);
        }
      : undefined;
    return paneLines(pane, capacity, width1, joined);
  }, [pane, width, charW, showIds, matches]);
  const lines = split.lines;
  // A heading's ids span its whole block: computed once per block.
  const headIds = useMemo(() => new Map<number, IdSpan | null>(), [pane]);
  const idsOf = (line: PaneRow) => {
    if (line.kind !== 'head') return rowSpanIds(pane, line);
    if (!headIds.has(line.block)) headIds.set(line.block, rowSpanIds(pane, line));
    return headIds.get(line.block) ?? null;
  };

  // Items keep the virtualiser's keys by index: a new view's panes reuse the elements and sizes of the
  // last (keys per line remounted every line on each load: 100–300 ms tasks at N_packed 22,500).
  const estimateSize = useCallback(
    (i: number) => {
      const kind = lines[i].kind;
      if (kind !== 'line') return kind === 'head' ? 26 : 30;
      return showIds ? ID_LINE_H : LINE_H;
    },
    [lines, showIds],
  );
  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scrollRef.current,
    estimateSize,
    // A row's size is read only from the ResizeObserver's entry (after the browser's own layout), never
    // from the element as it mounts: offsetHeight there forced the whole page's layout inside React's
    // commit (30–60 ms of each load's longest task at N_packed 2M). Lines have their estimated height
    // exactly; a heading that wraps is corrected when its observation arrives.
    measureElement: (element, entry, instance) => {
      const box = entry?.borderBoxSize?.[0];
      return box ? Math.round(box.blockSize) : instance.options.estimateSize(instance.indexFromElement(element));
    },
    overscan: 4,
    // Scrolling moves rows by writing their transforms directly; React renders only when the range
    // of rows changes (and not synchronously inside the scroll event).
    directDomUpdates: true,
    // `top`, not a transform per row: per-row compositor layers make every frame re-layerize the page.
    directDomUpdatesMode: 'position',
    useFlushSync: false,
  });

  // A new target scrolls to its end (where the target is); a jump scrolls to what it reveals.
  const handled = useRef<{ pane: ContextPane | null; nonce: number }>({ pane: null, nonce: -1 });
  useEffect(() => {
    const h = handled.current;
    if (!lines.length) return;
    if (reveal && reveal.nonce !== h.nonce) {
      h.nonce = reveal.nonce;
      h.pane = pane;
      virtualizer.scrollToIndex(lineOfId(pane, split, reveal.first), { align: 'center' });
    } else if (h.pane !== pane) {
      h.pane = pane;
      virtualizer.scrollToIndex(lines.length - 1, { align: 'end' });
    }
  }, [pane, split, lines, reveal, virtualizer]);

  // Benchmark hook: React's work per render of the pane.
  const renderStart = performance.now();
  useLayoutEffect(() => measureFrame('context', renderStart));

  // While the text scrolls under a still pointer, the browser's synthetic moves (same position) are
  // not a person pointing: hover clears on scroll and waits for the pointer to move.
  const pointer = useRef({ x: NaN, y: NaN, scrolled: false });
  const onScroll = () => {
    pointer.current.scrolled = true;
    setHover(null);
  };
  const onMove = (e: React.MouseEvent) => {
    const p = pointer.current;
    if (p.scrolled && e.clientX === p.x && e.clientY === p.y) return;
    Object.assign(p, { x: e.clientX, y: e.clientY, scrolled: false });
    const el = (e.target as HTMLElement).closest<HTMLElement>('[data-g],[data-row]');
    if (!el) return setHover(null);
    if (el.dataset.g !== undefined) return setHover(glyphIds(pane, glyphAtPoint(pane, el, e.clientX, e.clientY)));
    const line = lines[Number(el.dataset.row)];
    setHover(line ? idsOf(line) : null);
  };

  const copy = async () => {
    const text = paneText(view, pane, info.title);
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard permission (e.g. a page not focused): select the text in a textarea instead.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    window.setTimeout(() => setCopied(false), 1500);
  };

  const nextDiff = () => {
    const items = virtualizer.getVirtualItems();
    const from = items.length ? lines[items[Math.floor(items.length / 2)].index].row : 0;
    const r = nextDifferenceRow(pane, from);
    if (r >= 0) virtualizer.scrollToIndex(split.firstLine[r], { align: 'start' });
  };

  const diff = [pane.missing && `${pane.missing} missing`, pane.stale && `${pane.stale} stale`, pane.future && `${pane.future} written later`]
    .filter(Boolean)
    .join(' · ');
  const items = virtualizer.getVirtualItems();
  return (
    <section className={`context-pane pane-${pane.kind}`} data-testid={`pane-${pane.kind}`} data-tokens={pane.tokens} aria-label={info.title}>
      <header>
        <PaneTitle info={info} />
        <div className="pane-facts">
          <span data-testid={`pane-tokens-${pane.kind}`}>{pane.scored ? pane.tokens : 0}</span>
          <span className="muted">{(pane.scored ? pane.tokens : 0) === 1 ? ' token' : ' tokens'}</span>
          {pane.kind !== 'live' && (
            <span className={diff ? 'pane-diff' : 'pane-diff exact'} data-testid={`pane-diff-${pane.kind}`}>
              {!pane.scored ? 'not scored: target dropped from the final walk' : diff || 'same as live'}
            </span>
          )}
        </div>
        <div className="pane-buttons">
          {pane.kind !== 'live' && (
            <button type="button" onClick={nextDiff} disabled={!diff} title="Scroll to the next place this replay differs from the live prefix">
              next difference
            </button>
          )}
          <button
            type="button"
            onClick={copy}
            data-testid={`pane-copy-${pane.kind}`}
            title="Copy this pane as plain text (the diff in [-missing-] {+added+} marks)"
          >
            {copied ? 'copied' : 'copy'}
          </button>
        </div>
      </header>
      <div className={`pane-scroll${showIds ? ' with-ids' : ''}`} ref={scrollRef} onMouseMove={onMove} onMouseLeave={() => setHover(null)} onScroll={onScroll}>
        <div ref={virtualizer.containerRef} style={{ position: 'relative' }}>
          {items.map((item) => {
            const row = lines[item.index];
            const ids = idsOf(row);
            return (
              <div key={item.key} data-index={item.index} ref={virtualizer.measureElement} className="pane-row-wrap">
                <Row
                  view={view}
                  pane={pane}
                  row={row}
                  index={item.index}
                  hover={overlaps(hover, ids) ? hover : null}
                  current={overlaps(current, ids) ? current : null}
                  matches={matches}
                  showIds={showIds}
                />
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}

/** A pane's title and what it shows (also the staged pane's empty frame, ContextPanel.tsx). */
export function PaneTitle({ info }: { info: PaneInfo }) {
  return (
    <div className="pane-title">
      <strong>{info.title}</strong>
      <span className="muted">{info.subtitle}</span>
    </div>
  );
}

interface RowProps {
  view: ViewData;
  pane: ContextPane;
  row: PaneRow;
  index: number;
  hover: IdSpan | null;
  current: IdSpan | null;
  matches: Matches;
  showIds: boolean;
}

const Row = memo(function Row({ view, pane, row, index, hover, current, matches, showIds }: RowProps) {
  if (row.kind === 'target') {
    const hovered = hover && hover.first <= pane.target && pane.target < hover.end;
    return (
      <div className={`pane-row target-row${hovered ? ' hovered' : ''}`} data-row={index}>
        <span className="target-arrow">then the policy produced</span>
        <span className="target-chip">{targetLabel(view, pane.target)}</span>
      </div>
    );
  }
  const block = pane.blocks[row.block];
  const role = messagesOf(view).list[block.message];
  const roleClass = role.edit ? 'inserted' : role.role;
  const blockState = STATE_CLASS[block.state] ?? '';
  if (row.kind === 'head') {
    const h = blockHeading(view, pane, block);
    const hovered = hover !== null;
    return (
      <div className={`pane-row block-head role-${roleClass} ${blockState}${hovered ? ' hovered' : ''}`} data-row={index}>
        <span className="role-badge">{h.role}</span>
        {h.origin && <span className="origin">{h.origin}</span>}
        <span className="ids">{h.ids}</span>
        {h.note && <span className={`note ${blockState}`}>{h.note}</span>}
      </div>
    );
  }
  // Glyphs of one look share a span (a long context stays a few hundred elements); with ids shown,
  // each token is a chip of its own (a GPT-2 word piece's characters in one chip, under its id).
  const spans: ReactElement[] = [];
  let runStart = row.g0;
  let runClass = '';
  let runText = '';
  let chipId = -1;
  let chipMerges = false;
  const close = (end: number) => {
    if (end > runStart) {
      spans.push(
        showIds ? (
          <span key={runStart} className={runClass} data-g={runStart} data-n={end - runStart} data-id={chipId}>
            <b>{runText}</b>
            <i>{chipId}</i>
          </span>
        ) : (
          <span key={runStart} className={runClass} data-g={runStart} data-n={end - runStart} data-id={glyphIds(pane, runStart).first}>
            {runText}
          </span>
        ),
      );
    }
  };
  for (let g = row.g0; g < row.g1; g++) {
    const glyph = pane.glyphs[g];
    const { first, end } = glyphIds(pane, g);
    let cls = 'g';
    const state = STATE_CLASS[pane.glyphState[g]];
    if (state) cls += ` ${state}`;
    const kind = KIND_CLASS[glyph.kind];
    if (kind) cls += ` ${kind}`;
    if (hover && first < hover.end && hover.first < end) cls += ' hovered';
    if (matches.count && matchAt(matches, first) >= 0) cls += current && first < current.end && current.first < end ? ' match current' : ' match';
    if (showIds) {
      // A chip holds the glyphs of one token; a character split over several tokens is a chip of its own, under its first id.
      const single = end - first === 1;
      if (g === row.g0 || !single || !chipMerges || first !== chipId || cls !== runClass) {
        close(g);
        runStart = g;
        runClass = cls;
        runText = '';
        chipId = first;
        chipMerges = single;
      }
      runText += glyph.shown;
      continue;
    }
    // Special tokens are chips: never merged with their neighbours.
    if (cls !== runClass || glyph.kind === GLYPH.special || pane.glyphs[g - 1]?.kind === GLYPH.special) {
      close(g);
      runStart = g;
      runClass = cls;
      runText = '';
    }
    runText += glyph.shown;
  }
  close(row.g1);
  return (
    <div className={`pane-row line role-${roleClass} ${blockState}`} data-row={index}>
      {spans}
    </div>
  );
});
