// Draws one attention mask through a Painter (canvas on the page, SVG for export): rows are queries,
// columns keys, in sequence order; a visible pair is filled with its key's colour (dimmer for a
// replicated copy), a wrong cell of a target row in the pitfall's colour, the selected target's row
// in white. Bands along the axes name branches (packed) or segments (causal), dashed rules mark where
// they start; the final walk's rows carry their missing keys in a gutter on the right.
import { rgb } from 'd3';
import { rgbaWord, type Painter } from '../../export/painter';
import { INK, METHOD_BY_ID } from '../../../present/palette';
import { CELL, CELL_COLORS, type CellClass } from '../../core/cells';
import { MASK_CELL, maskCell, maskCoverage, maskCoverageProbe, rowRuns, type MaskModel } from '../../core/maskModel';

/** Up to this many keys per pixel column, a hidden pixel's coverage is asked pixel by pixel (maskCoverageProbe). */
const PROBE_KEYS_PER_PIXEL = 16;

export const MASK_MARGIN = { top: 30, left: 44, right: 8, bottom: 8 };
/** Room on the right of the final walk's mask for its rows' missing keys. */
export const GUTTER = 46;
const AXIS = 12;
const FONT = 'Inter, system-ui, sans-serif';
const MONO = 'ui-monospace, Menlo, monospace';
const PLOT_BG = '#141c24';

export const MASK_COLORS = {
  stale: METHOD_BY_ID['naive-full'].color,
  future: METHOD_BY_ID['naive-compressed'].color,
  missing: METHOD_BY_ID['naive-compressed'].color,
  selected: '#ffffff',
  target: CELL_COLORS[CELL.target],
  copy: '#8a97a6',
  bands: ['#2a3947', '#3a4c5d'],
};

export interface MaskZoom {
  k: number;
  x: number;
  y: number;
}

export interface MaskFrame {
  model: MaskModel;
  width: number;
  height: number;
  zoom: MaskZoom;
  /** Per physical id: its CELL class (prompt, obs, act, inserted). */
  cls: Uint8Array;
  /** The selected target's physical id, or null. */
  selected: number | null;
  /** The mask's pixel count, counted ahead (across tasks: maskCoverageSteps); used when its raster is this frame's. */
  counted?: MaskCount;
}

/** A maskCoverage count and the raster it was counted for (maskCoverage's arguments). */
export interface MaskCount {
  model: MaskModel;
  x0: number;
  y0: number;
  size: number;
  W: number;
  H: number;
  count: Float64Array;
}

/** The raster of a dense frame: maskCoverage's arguments. */
export type MaskRaster = Omit<MaskCount, 'count'>;

/** Whether two rasters are the same count's (one model, one origin, cell size and pixel extent). */
export function sameRaster(a: MaskRaster, b: MaskRaster): boolean {
  return a.model === b.model && a.x0 === b.x0 && a.y0 === b.y0 && a.size === b.size && a.W === b.W && a.H === b.H;
}

/** The raster of a dense frame drawn at `scale` device pixels per CSS pixel: maskCoverage's arguments, or null where the frame is not counted whole. */
export function maskRaster(frame: Omit<MaskFrame, 'counted'>, scale: number): MaskRaster | null {
  const { model, zoom } = frame;
  const g = maskGeometry(model, frame.width, frame.height);
  const size = zoom.k * g.cell;
  if (size >= 2 || 1 / (size * scale) <= PROBE_KEYS_PER_PIXEL) return null;
  const W = Math.max(1, Math.round(g.plotW * scale));
  const H = Math.max(1, Math.round(g.plotH * scale));
  return { model, x0: zoom.x * scale, y0: zoom.y * scale, size: size * scale, W, H };
}

export interface MaskGeometry {
  left: number;
  top: number;
  plotW: number;
  plotH: number;
  /** Cell size at zoom 1 (square cells). */
  cell: number;
}

export function maskGeometry(model: MaskModel, width: number, height: number): MaskGeometry {
  const gutter = model.method === 'naive-compressed' ? GUTTER : 0;
  const plotW = Math.max(10, width - MASK_MARGIN.left - MASK_MARGIN.right - gutter);
  const plotH = Math.max(10, height - MASK_MARGIN.top - MASK_MARGIN.bottom);
  const cell = Math.min(plotW, plotH) / Math.max(1, model.n);
  return { left: MASK_MARGIN.left, top: MASK_MARGIN.top, plotW, plotH, cell };
}

/** The (query, key) under a plot-relative point, or null outside the matrix. */
export function maskHit(model: MaskModel, g: MaskGeometry, zoom: MaskZoom, px: number, py: number): { query: number; key: number } | null {
  const size = zoom.k * g.cell;
  const key = Math.floor((px - zoom.x) / size);
  const query = Math.floor((py - zoom.y) / size);
  if (px < 0 || py < 0 || px > g.plotW || py > g.plotH || key < 0 || query < 0 || key >= model.n || query >= model.n) return null;
  return { query, key };
}

const dimmed = new Map<string, string>();
/** `hex` blended towards the plot's background (a replicated copy's key). */
function dim(hex: string, amount: number): string {
  const key = `${hex}|${amount}`;
  let out = dimmed.get(key);
  if (out === undefined) dimmed.set(key, (out = blend(hex, amount)));
  return out;
}

function blend(hex: string, amount: number): string {
  const c = rgb(hex);
  const bg = rgb(PLOT_BG);
  return rgb(bg.r + (c.r - bg.r) * amount, bg.g + (c.g - bg.g) * amount, bg.b + (c.b - bg.b) * amount).formatHex();
}

/** The colour of a cell, or null for a hidden pair. */
function colorOf(frame: MaskFrame, selectedRow: number, i: number, k: number): string | null {
  const { model } = frame;
  const c = maskCell(model, i, k);
  if (c === MASK_CELL.hidden) return null;
  if (c === MASK_CELL.stale) return MASK_COLORS.stale;
  if (c === MASK_CELL.future) return MASK_COLORS.future;
  if (i === selectedRow) return MASK_COLORS.selected;
  if (i === k && model.rowTarget[i] >= 0) return MASK_COLORS.target;
  const base = CELL_COLORS[frame.cls[model.ids[k]] as CellClass] ?? CELL_COLORS[CELL.obs];
  return model.copy[k] ? dim(base, 0.5) : base;
}

export function drawMask(p: Painter, frame: MaskFrame): void {
  const { model, width, height, zoom } = frame;
  const g = maskGeometry(model, width, height);
  const size = zoom.k * g.cell;
  const ox = g.left;
  const oy = g.top;
  const selectedRow = frame.selected !== null ? model.rowOf[frame.selected] : -1;
  const lo = Math.max(0, Math.floor(-zoom.x / size));
  const hi = Math.min(model.n, Math.ceil((g.plotW - zoom.x) / size));
  const r0 = Math.max(0, Math.floor(-zoom.y / size));
  const r1 = Math.min(model.n, Math.ceil((g.plotH - zoom.y) / size));
  const gap = size >= 7 ? 1 : 0;

  p.fillRect(INK.bg, 0, 0, width, height);
  p.pushClip(ox, oy, g.plotW, g.plotH);
  const x0 = ox + zoom.x;
  const y0 = oy + zoom.y;
  p.fillRect(PLOT_BG, x0, y0, model.n * size, model.n * size);
  if (size < 2 && p.pixels) {
    // Dense: one cell per device pixel at most. Sample the cell under each pixel's centre.
    const words = new Map<string, number>();
    const word = (css: string) => {
      let w = words.get(css);
      if (w === undefined) words.set(css, (w = rgbaWord(css)));
      return w;
    };
    const bg = rgbaWord(INK.bg);
    const plotBg = rgbaWord(PLOT_BG);
    p.pixels(ox, oy, g.plotW, g.plotH, (buf, W, H, scale) => {
      buf.fill(bg);
      // Visible pairs per device pixel, aggregated over all the cells under it: a pixel whose centre
      // cell is hidden but which holds visible pairs is drawn in its column's colour, dimmed, so a
      // mask of a million rows (a thousand-token branch under a pixel) is not a scatter of samples.
      // Counted whole where many keys share a pixel column; asked pixel by pixel where a few do (the hidden
      // pixels only: a playground edit redraws three masks, and the whole count touched every pixel of each).
      const whole = 1 / (size * scale) > PROBE_KEYS_PER_PIXEL;
      const raster: MaskRaster = { model, x0: zoom.x * scale, y0: zoom.y * scale, size: size * scale, W, H };
      const ahead = frame.counted && sameRaster(frame.counted, raster) ? frame.counted.count : null;
      const coverage = whole ? (ahead ?? maskCoverage(model.end, model.n, raster.x0, raster.y0, raster.size, W, H)) : null;
      const probe = whole ? null : maskCoverageProbe(model.end, model.n, zoom.x * scale, zoom.y * scale, size * scale, W, H);
      const covered = coverage ? (py: number, px: number) => coverage[py * W + px] > 0 : probe!;
      // Per pixel column, its key and the word of its visible colour (they depend on the key only),
      // so the loop below asks only the mask; a pixel row on the same cell row as the one above copies it.
      const keyOf = new Int32Array(W);
      const baseOf = new Uint32Array(W);
      const coveredOf = new Uint32Array(W);
      for (let px = 0; px < W; px++) {
        const k = Math.floor(((px + 0.5) / scale - zoom.x) / size);
        keyOf[px] = k >= 0 && k < model.n ? k : -1;
        if (keyOf[px] >= 0) {
          const base = CELL_COLORS[frame.cls[model.ids[k]] as CellClass] ?? CELL_COLORS[CELL.obs];
          baseOf[px] = word(model.copy[k] ? dim(base, 0.5) : base);
          coveredOf[px] = word(dim(base, model.copy[k] ? 0.35 : 0.6));
        }
      }
      const stale = word(MASK_COLORS.stale);
      const future = word(MASK_COLORS.future);
      const selected = word(MASK_COLORS.selected);
      const target = word(MASK_COLORS.target);
      // The columns in the matrix, [pxA, pxB) (keyOf rises with px), and how far past a row's query a column's
      // key must be for its whole pixel to hold keys after every query of the row: a pixel block spans at most
      // `reach` cells on each axis, so past i + 2·reach the pixel is hidden and counts no visible pair.
      let pxA = 0;
      while (pxA < W && keyOf[pxA] < 0) pxA++;
      let pxB = pxA;
      while (pxB < W && keyOf[pxB] >= 0) pxB++;
      const reach = Math.ceil(1 / (size * scale)) + 1;
      let pxStop = pxA;
      let previous = -1;
      for (let py = 0; py < H; py++) {
        const i = Math.floor(((py + 0.5) / scale - zoom.y) / size);
        if (i < 0 || i >= model.n) continue;
        const line = py * W;
        // A pixel row on the cell row of the one above: the same cells, and (cells at least a pixel high) the same coverage.
        if (i === previous && (!coverage || coverage.subarray(line, line + W).every((c, px) => c > 0 === coverage[line - W + px] > 0))) {
          buf.copyWithin(line, line - W, line);
          continue;
        }
        previous = i;
        const targetRow = model.rowTarget[i] >= 0;
        // Above the diagonal (keys after the row's queries) nothing is visible: one fill, not a pixel loop.
        while (pxStop < pxB && keyOf[pxStop] <= i + 2 * reach) pxStop++;
        buf.fill(plotBg, line + pxStop, line + pxB);
        for (let px = pxA; px < pxStop; px++) {
          const k = keyOf[px];
          const c = maskCell(model, i, k);
          buf[line + px] =
            c === MASK_CELL.hidden
              ? covered(py, px)
                ? coveredOf[px]
                : plotBg
              : c === MASK_CELL.stale
                ? stale
                : c === MASK_CELL.future
                  ? future
                  : i === selectedRow
                    ? selected
                    : i === k && targetRow
                      ? target
                      : baseOf[px];
        }
      }
    });
    // The selected row stays visible however thin: redraw it two pixels high.
    if (selectedRow >= 0) drawChainRow(p, frame, selectedRow, lo, hi, x0, y0 + selectedRow * size - Math.max(0, 2 - size) / 2, size, Math.max(size, 2));
  } else {
    for (let i = r0; i < r1; i++) drawRow(p, frame, selectedRow, i, lo, hi, x0, y0 + i * size, size, size - gap, gap);
  }
  p.flush();

  // Band starts: where a branch's chain (packed) or a segment (causal) begins.
  const right = ox + Math.min(g.plotW, zoom.x + model.n * size);
  const bottom = oy + Math.min(g.plotH, zoom.y + model.n * size);
  // Level of detail: a rule is drawn only after a band at least 8 pixels wide (a thousand branches in
  // a few hundred pixels would be a mesh of dashes over the cells); the band strips still show them all.
  let previous = 0;
  for (const band of model.bands) {
    const wide = (band.start - previous) * size >= 8;
    previous = band.start;
    if (band.start === 0 || !wide) continue;
    const at = band.start * size;
    p.line(INK.edit, 1, ox + zoom.x + at - 0.5, oy, ox + zoom.x + at - 0.5, bottom, [4, 3]);
    p.line(INK.edit, 1, ox, oy + zoom.y + at - 0.5, right, oy + zoom.y + at - 0.5, [4, 3]);
  }
  if (selectedRow >= 0) {
    const y = oy + zoom.y + selectedRow * size;
    p.strokeRect(MASK_COLORS.selected, 1.5, ox - 1, y - 1.5, Math.min(g.plotW, x0 - ox + (selectedRow + 1) * size) + 2, Math.max(size, 2) + 3);
  }
  p.popClip();
  drawAxes(p, frame, g, size, lo, hi, r0, r1, selectedRow);
  if (model.method === 'naive-compressed') drawGutter(p, frame, g, size, r0, r1);
}

/** One row of the matrix: runs of cells of one colour from key lo to hi. */
function drawRow(
  p: Painter,
  frame: MaskFrame,
  selectedRow: number,
  i: number,
  lo: number,
  hi: number,
  x0: number,
  y: number,
  size: number,
  h: number,
  gap: number,
): void {
  let runStart = -1;
  let runColor: string | null = null;
  const flushRun = (end: number) => {
    if (runColor && runStart >= 0) {
      if (gap) for (let k = runStart; k < end; k++) p.fillRect(runColor, x0 + k * size, y, size - gap, h);
      else p.fillRect(runColor, x0 + runStart * size, y, Math.max((end - runStart) * size, 0.6), h);
    }
  };
  const stop = Math.min(hi, i + 1);
  for (let k = lo; k < stop; k++) {
    const color = colorOf(frame, selectedRow, i, k);
    if (color !== runColor) {
      flushRun(k);
      runStart = k;
      runColor = color;
    }
  }
  flushRun(stop);
}

/**
 * The selected row of a dense mask (cells under 2 pixels): only its visible keys, walked up its key
 * chain (O(depth), not O(n)), runs of one colour merged where they fall on one pixel.
 */
function drawChainRow(p: Painter, frame: MaskFrame, i: number, lo: number, hi: number, x0: number, y: number, size: number, h: number): void {
  const runs = rowRuns(frame.model, i);
  let from = -1;
  let to = -1;
  let color: string | null = null;
  const flush = () => {
    if (color && from >= 0) p.fillRect(color, from, y, Math.max(to - from, 0.6), h);
  };
  for (let r = 0; r < runs.length; r += 2) {
    for (let k = Math.max(lo, runs[r]); k < Math.min(hi, runs[r + 1]); k++) {
      const c = colorOf(frame, i, i, k);
      const a = x0 + k * size;
      if (c === color && a <= to + 1) to = a + size;
      else {
        flush();
        [from, to, color] = [a, a + size, c];
      }
    }
  }
  flush();
}

/**
 * Marks for the indices lo..hi inside `runs` (flattened [start, end) pairs, ascending), along one axis:
 * a mark per cell where cells are 7 pixels or wider, else runs merged, and across gaps under a pixel
 * when cells are under 2 pixels (a million copies are a few hundred rects). O(runs + cells marked one by one).
 */
function tickRuns(runs: Int32Array, lo: number, hi: number, origin: number, size: number, mark: (at: number, length: number) => void): void {
  const len = Math.max(size - (size >= 7 ? 1 : 0), 0.8);
  const bridge = size < 2 ? 1 : 0;
  let from = -1;
  let to = -1;
  for (let r = 0; r < runs.length; r += 2) {
    const start = Math.max(lo, runs[r]);
    const stop = Math.min(hi, runs[r + 1]);
    if (start >= stop) continue;
    if (size >= 7) {
      for (let k = start; k < stop; k++) mark(origin + k * size, len);
      continue;
    }
    const a = origin + start * size;
    const b = origin + (stop - 1) * size + len;
    if (from >= 0 && a <= to + bridge) to = Math.max(to, b);
    else {
      if (from >= 0) mark(from, to - from);
      from = a;
      to = b;
    }
  }
  if (from >= 0) mark(from, to - from);
}

function drawAxes(p: Painter, frame: MaskFrame, g: MaskGeometry, size: number, lo: number, hi: number, r0: number, r1: number, selectedRow: number): void {
  const { model, zoom } = frame;
  const ox = g.left;
  const oy = g.top;
  const font = `10px ${FONT}`;
  // Band strips along the top (keys) and the left (queries).
  p.pushClip(ox, oy - AXIS - 2, g.plotW, AXIS);
  model.bands.forEach((band, b) => {
    const x = ox + zoom.x + band.start * size;
    const w = (band.end - band.start) * size;
    p.fillRect(MASK_COLORS.bands[b % 2], x, oy - AXIS - 2, w, AXIS - 2);
    if (w >= 18) p.text(band.label, Math.max(x, ox) + 3, oy - AXIS / 2 - 3, { color: INK.text, font: `600 9px ${FONT}`, baseline: 'middle' });
  });
  p.popClip();
  p.pushClip(ox - AXIS - 2, oy, AXIS, g.plotH);
  model.bands.forEach((band, b) => {
    const y = oy + zoom.y + band.start * size;
    const h = (band.end - band.start) * size;
    p.fillRect(MASK_COLORS.bands[b % 2], ox - AXIS - 2, y, AXIS - 2, h);
  });
  // Replicated copies: a grey tick beside the query strip.
  tickRuns(model.copyRuns, r0, r1, oy + zoom.y, size, (at, length) => p.fillRect(MASK_COLORS.copy, ox - 5, at, 3, length));
  p.popClip();
  p.pushClip(ox, oy - 4, g.plotW, 3);
  tickRuns(model.copyRuns, lo, hi, ox + zoom.x, size, (at, length) => p.fillRect(MASK_COLORS.copy, at, oy - 4, length, 3));
  p.popClip();

  // Ids on the axes when cells are wide enough to name.
  if (size >= 13) {
    const label = (i: number) => `${model.ids[i]}${model.copy[i] ? '′' : ''}`;
    const idFont = `${size >= 18 ? 10 : 9}px ${MONO}`;
    p.pushClip(ox, 0, g.plotW, oy);
    for (let k = lo; k < hi; k++) p.text(label(k), ox + zoom.x + (k + 0.5) * size, oy - AXIS - 6, { color: INK.muted, font: idFont, align: 'center' });
    p.popClip();
    p.pushClip(0, oy, ox - AXIS - 2, g.plotH);
    for (let i = r0; i < r1; i++) {
      p.text(label(i), ox - AXIS - 5, oy + zoom.y + (i + 0.5) * size, {
        color: i === selectedRow ? INK.select : INK.muted,
        font: idFont,
        align: 'right',
        baseline: 'middle',
      });
    }
    p.popClip();
  } else {
    p.text('keys →', ox, oy - AXIS - 6, { color: INK.muted, font });
    p.text('queries ↓', 10, oy + g.plotH / 2, { color: INK.muted, font, align: 'center', rotate: -Math.PI / 2 });
  }
}

/** Per target row of the final walk: its missing live-prefix keys, as a bar of that many cells. */
function drawGutter(p: Painter, frame: MaskFrame, g: MaskGeometry, size: number, r0: number, r1: number): void {
  const { model, zoom } = frame;
  const x = g.left + Math.max(0, Math.min(g.plotW, zoom.x + model.n * size)) + 6;
  const w = GUTTER - 10;
  p.text('missing', x, g.top - AXIS - 6, { color: MASK_COLORS.missing, font: `600 9px ${FONT}` });
  p.pushClip(x, g.top, w + 4, g.plotH);
  const unit = Math.max(1.5, Math.min(size, 6));
  for (let i = r0; i < r1; i++) {
    const m = model.missing[i];
    if (model.rowTarget[i] < 0 || m <= 0) continue;
    const y = g.top + zoom.y + i * size;
    const h = Math.max(size - (size >= 7 ? 1 : 0), 0.8);
    const bar = Math.min(w, m * unit);
    p.fillRect(MASK_COLORS.missing, x, y, bar, h, 0.8);
    if (size >= 11) p.text(String(m), x + Math.min(bar, w - 12) + 2, y + h / 2, { color: INK.text, font: `600 9px ${FONT}`, baseline: 'middle' });
  }
  p.popClip();
}
