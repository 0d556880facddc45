// Draws the staircase through a Painter (canvas on the page, SVG for export): cells as merged
// spans, edits as horizontal rules (the steps of the staircase), the physical-id axis on top, and
// the selected target's row with a lens below it holding one lane per replay method: the ids that
// method conditions the target on, on the same physical axis.
import { rgb, scaleLinear } from 'd3';
import { rgbaWord, type Painter } from '../../export/painter';
import type { Method } from '../../../plan/types';
import { INK, METHOD_BY_ID, METHOD_STYLES } from '../../../present/palette';
import { CELL, CELL_COLORS, CELL_LEGEND, type CellClass } from '../../core/cells';
import type { MethodLane } from '../../core/methodViews';
import { rowSpans, type StaircaseModel } from '../../core/staircaseModel';

export const MARGIN = { top: 40, right: 14, bottom: 10, left: 84 };
export const MAX_CELL_W = 40;
export const MAX_ROW_H = 26;
const LANE_GAP = 2;
const BG_WORD = rgbaWord(INK.bg);
const wordCache = new Map<string, number>();
/** Any CSS colour d3 reads ('#rrggbb', 'rgb(...)') as an ImageData word. */
function cssWord(css: string): number {
  let w = wordCache.get(css);
  if (w === undefined) {
    const c = rgb(css);
    w = ((0xff << 24) | (Math.round(c.b) << 16) | (Math.round(c.g) << 8) | Math.round(c.r)) >>> 0;
    if (wordCache.size > 4096) wordCache.clear();
    wordCache.set(css, w);
  }
  return w;
}
const CELL_WORDS = Object.fromEntries(Object.entries(CELL_COLORS).map(([c, hex]) => [c, rgbaWord(hex)])) as unknown as Record<CellClass, number>;
const FONT = 'Inter, system-ui, sans-serif';
const MONO = 'ui-monospace, Menlo, monospace';

/** Plot-relative pan (pixels) and zoom factor. */
export interface ZoomState {
  k: number;
  x: number;
  y: number;
}

export interface StaircaseFrame {
  model: StaircaseModel;
  width: number;
  height: number;
  zoom: ZoomState;
  selected: { id: number; row: number; lanes: MethodLane[] } | null;
  method: Method;
  /** Printable character of a token, for cells large enough to hold one. */
  glyph?: (id: number) => string | null;
  /** Colour of a target cell (drift colouring), or null for the state colour. */
  targetColor?: (id: number) => string | null;
}

export interface Geometry {
  plotW: number;
  plotH: number;
  /** Cell width and row height at zoom 1. */
  cw: number;
  rh: number;
}

export function geometry(model: StaircaseModel, width: number, height: number): Geometry {
  const plotW = Math.max(10, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, height - MARGIN.top - MARGIN.bottom);
  const cw = Math.min(MAX_CELL_W, plotW / Math.max(1, model.length));
  const rh = Math.min(MAX_ROW_H, plotH / Math.max(1, model.rowCount));
  return { plotW, plotH, cw, rh };
}

export function laneHeight(rowPx: number): number {
  return Math.max(4, Math.min(8, rowPx * 0.34));
}

/** Height of the lens under the selected row (the rows after it move down by this much). */
export function lensSpace(rowPx: number, lanes: number): number {
  return lanes * (laneHeight(rowPx) + LANE_GAP) + 4 + 8;
}

/**
 * Vertical placement of rows (plot-relative): rows follow each other at rowPx, and the rows after
 * the selected one move down to make room for its lens.
 */
export interface RowMap {
  rowPx: number;
  selected: number;
  space: number;
  /** Top of row r (also the boundary before it). */
  top(r: number): number;
  /** The row under plot-relative y, -1 in the lens, or out of range. */
  at(y: number): number;
  /** The first row whose bottom is below y (for loops). */
  floor(y: number): number;
}

export function rowMap(zoom: ZoomState, g: Geometry, selected: number, lanes: number): RowMap {
  const rowPx = zoom.k * g.rh;
  const space = selected >= 0 ? lensSpace(rowPx, lanes) : 0;
  const split = (selected + 1) * rowPx;
  return {
    rowPx,
    selected,
    space,
    top: (r) => zoom.y + r * rowPx + (selected >= 0 && r > selected ? space : 0),
    at(y) {
      let v = y - zoom.y;
      if (selected >= 0 && v >= split) {
        if (v < split + space) return -1;
        v -= space;
      }
      return Math.floor(v / rowPx);
    },
    floor(y) {
      let v = y - zoom.y;
      if (selected >= 0 && v >= split) v = Math.max(split, v - space);
      return Math.floor(v / rowPx);
    },
  };
}

/** Plot-relative position to (row, id), or null outside the data (or in the lens). */
export function hitTest(model: StaircaseModel, g: Geometry, zoom: ZoomState, rows: RowMap, px: number, py: number): { row: number; id: number } | null {
  const id = Math.floor((px - zoom.x) / (zoom.k * g.cw));
  const row = rows.at(py);
  if (id < 0 || id >= model.length || row < 0 || row >= model.rowCount) return null;
  return { row, id };
}

export function frameRows(frame: StaircaseFrame, g: Geometry): RowMap {
  return rowMap(frame.zoom, g, frame.selected ? frame.selected.row : -1, frame.selected ? frame.selected.lanes.length : 0);
}

export function drawStaircase(p: Painter, frame: StaircaseFrame): void {
  const { model, width, height, zoom } = frame;
  const g = geometry(model, width, height);
  const colPx = zoom.k * g.cw;
  const rows = frameRows(frame, g);
  const rowPx = rows.rowPx;
  const ox = MARGIN.left;
  const oy = MARGIN.top;
  const gapX = colPx >= 7 ? 1 : 0;
  const gapY = rowPx >= 7 ? 1 : 0;
  const sx = (id: number) => ox + zoom.x + id * colPx;
  const lo = Math.max(0, Math.floor(-zoom.x / colPx));
  const hi = Math.min(model.length, Math.ceil((g.plotW - zoom.x) / colPx));
  const r0 = Math.max(0, rows.floor(0));
  const r1 = Math.min(model.rowCount, rows.floor(g.plotH) + 1);

  p.fillRect(INK.bg, 0, 0, width, height);
  p.pushClip(ox, oy, g.plotW, g.plotH);

  const targetColor = frame.targetColor;
  const addRow = (row: number, y: number, h: number) => {
    rowSpans(model, row, lo, hi, (s, e, c) => {
      if (c === CELL.target && targetColor) {
        for (let i = s; i < e; i++) p.fillRect(targetColor(i) ?? CELL_COLORS[c], sx(i), y, Math.max(colPx - gapX, 0.6), h);
        return;
      }
      const color = CELL_COLORS[c];
      if (gapX) for (let i = s; i < e; i++) p.fillRect(color, sx(i), y, colPx - gapX, h);
      else p.fillRect(color, sx(s), y, Math.max(sx(e) - sx(s), 0.6), h);
    });
  };
  if ((colPx < 2 || rowPx < 2) && p.pixels) {
    // Dense: cells are a few pixels or less. Sample the cell at each device pixel's centre straight
    // into an ImageData (cost: pixels + spans per line, not one path per cell).
    p.pixels(ox, oy, g.plotW, g.plotH, (buf, W, H, scale) => {
      buf.fill(BG_WORD);
      // A pixel line on the same row as the line above copies it (rows are often several lines high).
      let previous = -1;
      for (let py = 0; py < H; py++) {
        const r = rows.at((py + 0.5) / scale);
        if (r < 0 || r >= model.rowCount || r === rows.selected) {
          previous = -1;
          continue;
        }
        const line = py * W;
        if (r === previous) {
          buf.copyWithin(line, line - W, line);
          continue;
        }
        previous = r;
        rowSpans(model, r, lo, hi, (s, e, c) => {
          const a = Math.max(0, Math.ceil((zoom.x + s * colPx) * scale - 0.5));
          const b = Math.min(W, Math.ceil((zoom.x + e * colPx) * scale - 0.5));
          if (b <= a) return;
          if (c === CELL.target && targetColor) {
            // One colour per pixel: the target at the pixel's centre.
            for (let px = a; px < b; px++) {
              const id = Math.min(e - 1, Math.max(s, Math.floor(((px + 0.5) / scale - zoom.x) / colPx)));
              const css = targetColor(id);
              buf[line + px] = css ? cssWord(css) : CELL_WORDS[c];
            }
          } else buf.fill(CELL_WORDS[c], line + a, line + b);
        });
      }
    });
    if (frame.selected) addRow(frame.selected.row, oy + rows.top(frame.selected.row), Math.max(rowPx - gapY, 2));
  } else if (rowPx >= 1) {
    for (let r = r0; r < r1; r++) addRow(r, oy + rows.top(r), rowPx - gapY);
  } else {
    // More rows than pixel lines: one sampled row per line (the selected row always drawn).
    for (let py = 0; py < g.plotH; py++) {
      const r = rows.at(py + 0.5);
      if (r >= 0 && r < model.rowCount && r !== rows.selected) addRow(r, oy + py, 1);
    }
    if (frame.selected) addRow(frame.selected.row, oy + rows.top(frame.selected.row), Math.max(rowPx, 2));
  }
  p.flush();

  if (frame.glyph && colPx >= 13 && rowPx >= 13) {
    const size = Math.round(Math.min(13, rowPx * 0.6));
    // A word piece in a smaller font when that makes it fit (monospace: ~0.6 em a character), down
    // to 9 px; longer ones cut with an ellipsis (the tooltip has the whole piece).
    const room = colPx - gapX - 2;
    const glyphs = new Map<number, { text: string; font: string } | null>();
    const shown = (i: number) => {
      if (glyphs.has(i)) return glyphs.get(i)!;
      const chars = Array.from(frame.glyph!(i) ?? '');
      let px = size;
      if (chars.length * px * 0.6 > room) px = Math.max(Math.min(size, 9), Math.floor(room / (chars.length * 0.6)));
      const fits = Math.max(1, Math.floor(room / (px * 0.6)));
      const text = chars.length <= fits ? chars.join('') : fits >= 2 ? `${chars.slice(0, fits - 1).join('')}…` : chars[0];
      const glyph = chars.length ? { text, font: `${px}px ${MONO}` } : null;
      glyphs.set(i, glyph);
      return glyph;
    };
    for (let r = r0; r < r1; r++) {
      rowSpans(model, r, lo, hi, (s, e, c) => {
        const color = c === CELL.target ? '#1b1f24' : c === CELL.evicted ? '#9a6b71' : '#eef2f6';
        for (let i = s; i < e; i++) {
          const g = shown(i);
          if (g)
            p.text(g.text, sx(i) + (colPx - gapX) / 2, oy + rows.top(r) + (rowPx - gapY) / 2 + 0.5, {
              color,
              font: g.font,
              align: 'center',
              baseline: 'middle',
            });
        }
      });
    }
  }

  // Edits: the steps of the staircase.
  for (let k = 0; k < model.editRow.length; k++) {
    const y = Math.round(oy + rows.top(model.editRow[k])) - 0.5;
    if (y < oy - 1 || y > oy + g.plotH + 1) continue;
    p.line(INK.edit, 1.25, ox, y, ox + g.plotW, y, [5, 4]);
  }

  if (frame.selected) {
    const { id, row, lanes } = frame.selected;
    const y = oy + rows.top(row);
    const h = Math.max(rowPx - gapY, 2);
    if (model.mode === 'step') p.strokeRect(INK.select, 1.5, sx(0) - 1, y - 1, sx(id + 1) - sx(0) - gapX + 2, h + 2);
    p.strokeRect(INK.select, 2.5, sx(id) - 2, y - 2, Math.max(colPx - gapX, 2) + 4, h + 4);
    const lens = lensOf(rows, row, lanes.length);
    // The lens spans the tape up to the target, and further when a method shows later content.
    let last = id + 1;
    for (const lane of lanes) if (lane.runs?.length) last = Math.max(last, lane.runs[lane.runs.length - 1]);
    const x0 = sx(0);
    const x1 = sx(last);
    p.fillRect('#0a0d11', x0 - 3, oy + lens.top - 2, x1 - x0 + 6, lens.height, 0.94);
    p.strokeRect('#3b4856', 1, x0 - 3.5, oy + lens.top - 2.5, x1 - x0 + 7, lens.height + 1);
    lanes.forEach((lane, m) => {
      const ly = oy + lens.top + m * (lens.lh + LANE_GAP);
      const color = METHOD_BY_ID[lane.method].color;
      const alpha = lane.method === frame.method ? 1 : 0.75;
      const fill = (runs: Int32Array, a: number) => {
        for (let r = 0; r < runs.length; r += 2) {
          const a0 = sx(runs[r]);
          p.fillRect(color, a0, ly, Math.max(sx(runs[r + 1]) - a0 - gapX, 0.6), lens.lh, a);
        }
      };
      if (lane.runs) fill(lane.runs, alpha);
      else p.line(color, 1, x0, ly + lens.lh / 2, x1, ly + lens.lh / 2, [3, 3]);
      if (lane.teacherRuns) fill(lane.teacherRuns, alpha * 0.4);
      // The target's own cell: where this method scores it (grey when it does not).
      p.fillRect(lane.runs ? '#ffffff' : '#55606c', sx(id), ly, Math.max(colPx - gapX, 1.5), lens.lh);
    });
    p.flush();
  }
  p.popClip();
  drawAxes(p, frame, g, rows, colPx, lo, hi, r0, r1);
}

/** The lens box (plot-relative top): in the space opened under the selected row. */
function lensOf(rows: RowMap, row: number, lanes: number): { top: number; height: number; lh: number } {
  const lh = laneHeight(rows.rowPx);
  return { top: rows.top(row) + Math.max(rows.rowPx, 2) + 5, height: lanes * (lh + LANE_GAP) + 4, lh };
}

function drawAxes(p: Painter, frame: StaircaseFrame, g: Geometry, rows: RowMap, colPx: number, lo: number, hi: number, r0: number, r1: number): void {
  const { model, zoom } = frame;
  const ox = MARGIN.left;
  const oy = MARGIN.top;
  p.text('physical tape (id) →', ox, 13, { color: INK.muted, font: `11px ${FONT}` });

  // x: a tick per id when ids are wide, else d3's nice ticks over the visible window.
  const every = colPx >= 16;
  const top = Math.max(hi, lo + 1);
  const x = scaleLinear()
    .domain([lo, top])
    .range([ox + zoom.x + lo * colPx, ox + zoom.x + top * colPx]);
  const ticks = every ? Array.from({ length: hi - lo }, (_, i) => lo + i) : x.ticks(Math.max(2, Math.floor(g.plotW / 70))).filter((t) => Number.isInteger(t));
  for (const t of ticks) {
    const px = x(t) + (every ? colPx / 2 : 0);
    if (px < ox - 1 || px > ox + g.plotW + 1) continue;
    p.text(String(t), px, oy - 11, { color: INK.text, font: `${every && colPx < 22 ? 9 : 11}px ${FONT}`, align: 'center' });
    p.line(INK.line, 1, px, oy - 6, px, oy - 1);
  }
  p.line(INK.line, 1, ox, oy - 0.5, ox + g.plotW, oy - 0.5);

  p.text(model.mode === 'step' ? 'decode step (target id) ↓' : 'segment = branch ↓', 12, oy + g.plotH / 2, {
    color: INK.muted,
    font: `11px ${FONT}`,
    align: 'center',
    rotate: -Math.PI / 2,
  });

  const rowPx = rows.rowPx;
  p.pushClip(0, oy, ox, g.plotH);
  if (rowPx >= 11) {
    const font = `${Math.round(Math.min(12, rowPx - 2))}px ${MONO}`;
    for (let r = r0; r < r1; r++) {
      const selected = frame.selected?.row === r;
      const label = model.mode === 'step' ? `t ${model.rowTarget[r]}` : `b${model.rowSegment[r]}`;
      p.text(label, ox - 8, oy + rows.top(r) + rowPx / 2, { color: selected ? INK.select : INK.muted, font, align: 'right', baseline: 'middle' });
    }
  }
  let lastY = -Infinity;
  for (let k = 0; k < model.editRow.length; k++) {
    const y = oy + rows.top(model.editRow[k]);
    if (y < oy + 8 || y > oy + g.plotH + 12 || y - lastY < 13) continue;
    lastY = y;
    p.text(`edit ${k + 1}`, 30, y, { color: INK.edit, font: `600 10px ${FONT}`, align: 'left', baseline: 'middle' });
  }
  // Lane labels beside the lens, over a backing so row labels do not show through.
  if (frame.selected) {
    const lens = lensOf(rows, frame.selected.row, frame.selected.lanes.length);
    if (lens.lh >= 5) {
      frame.selected.lanes.forEach((lane, m) => {
        const style = METHOD_BY_ID[lane.method];
        p.text(style.short, ox - 8, oy + lens.top + m * (lens.lh + LANE_GAP) + lens.lh / 2, {
          color: style.color,
          font: `600 ${lens.lh >= 7 ? 9 : 8}px ${FONT}`,
          align: 'right',
          baseline: 'middle',
        });
      });
    }
  }
  p.popClip();
}

/** The cell and method legend, as drawn under an exported staircase (height LEGEND_H). */
export const LEGEND_H = 54;
export function drawStaircaseLegend(p: Painter, x: number, y: number, width: number): void {
  let cx = x;
  let cy = y + 8;
  const font = `11px ${FONT}`;
  for (const item of CELL_LEGEND) {
    const w = 16 + item.label.length * 6.2 + 16;
    if (cx + w > x + width) {
      cx = x;
      cy += 20;
    }
    p.fillRect(CELL_COLORS[item.cls as CellClass], cx, cy, 12, 12);
    p.text(item.label, cx + 17, cy + 6, { color: INK.text, font, baseline: 'middle' });
    cx += w;
  }
  p.line(INK.edit, 1.25, cx, cy + 6, cx + 22, cy + 6, [5, 4]);
  p.text('edit', cx + 27, cy + 6, { color: INK.text, font, baseline: 'middle' });
  cx = x;
  cy += 22;
  p.text('lens under the selected target — what each method conditions it on:', cx, cy + 6, { color: INK.muted, font, baseline: 'middle' });
  cx += 392;
  for (const m of METHOD_STYLES) {
    p.fillRect(m.color, cx, cy + 3, 14, 6);
    p.text(m.label, cx + 19, cy + 6, { color: INK.text, font, baseline: 'middle' });
    cx += 24 + m.label.length * 6.4 + 8;
  }
  p.flush();
}
