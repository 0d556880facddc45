// The dense mask raster (cells under 2 pixels): every pixel written, and a pixel shows the plot's
// background exactly where its centre cell is hidden and its block of cells holds no visible pair (the
// drawing fills the part above the diagonal at once; this checks that fill against the pixel-by-pixel rule).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile, validateRollout } from '../../../rollout';
import { generateRandomRollout } from '../../../rollout/generate-random';
import type { Painter } from '../../export/painter';
import { rgbaWord } from '../../export/painter';
import { INK } from '../../../present/palette';
import { buildMask, MASK_CELL, MASK_METHODS, maskCell, maskCoverage, type MaskModel } from '../../core/maskModel';
import { buildViewData, type ViewData } from '../../core/viewData';
import { drawMask, maskGeometry, type MaskZoom } from './draw';

const PLOT_BG = rgbaWord('#141c24');
const BG = rgbaWord(INK.bg);
const STALE_WORD = 0x12345678;

/** A painter that keeps only the dense raster (the rest of the drawing is strokes over it). */
function rasterPainter(scale: number): { painter: Painter; raster: () => { buf: Uint32Array; W: number; H: number } } {
  let out: { buf: Uint32Array; W: number; H: number } | null = null;
  const none = () => {};
  const painter: Painter = {
    fillRect: none,
    strokeRect: none,
    line: none,
    text: none,
    pushClip: none,
    popClip: none,
    flush: none,
    pixels(_x, _y, w, h, paint) {
      const W = Math.max(1, Math.round(w * scale));
      const H = Math.max(1, Math.round(h * scale));
      // An earlier frame's words: the drawing must write every one.
      const buf = new Uint32Array(W * H).fill(STALE_WORD);
      paint(buf, W, H, scale);
      out = { buf, W, H };
    },
  };
  return {
    painter,
    raster: () => {
      if (!out) throw new Error('no dense raster drawn');
      return out;
    },
  };
}

function check(model: MaskModel, width: number, height: number, zoom: MaskZoom, scale: number): number {
  const cls = new Uint8Array(model.ids.reduce((a, b) => Math.max(a, b), 0) + 1);
  const { painter, raster } = rasterPainter(scale);
  drawMask(painter, { model, width, height, zoom, cls, selected: null });
  const { buf, W, H } = raster();
  const size = zoom.k * maskGeometry(model, width, height).cell;
  expect(size).toBeLessThan(2);
  const count = maskCoverage(model.end, model.n, zoom.x * scale, zoom.y * scale, size * scale, W, H);
  let background = 0;
  const wrong: string[] = [];
  let previous = -1;
  let previousEmpty: boolean[] = [];
  for (let py = 0; py < H; py++) {
    const i = Math.floor(((py + 0.5) / scale - zoom.y) / size);
    // A pixel row whose centre is on the cell row of the one above repeats it (the drawing's rule for cells a pixel high or more).
    const repeat = i === previous;
    const rowEmpty: boolean[] = [];
    previous = i;
    for (let px = 0; px < W; px++) {
      const word = buf[py * W + px];
      if (word === STALE_WORD) wrong.push(`pixel ${py},${px} not written`);
      const k = Math.floor(((px + 0.5) / scale - zoom.x) / size);
      if (i < 0 || i >= model.n || k < 0 || k >= model.n) {
        if (word !== BG) wrong.push(`pixel ${py},${px} outside the matrix`);
        continue;
      }
      const empty = repeat ? previousEmpty[px] : maskCell(model, i, k) === MASK_CELL.hidden && count[py * W + px] === 0;
      rowEmpty[px] = empty;
      if ((word === PLOT_BG) !== empty) wrong.push(`pixel ${py},${px} (query ${i}, key ${k}): ${empty ? 'empty' : 'holds pairs'}`);
      if (empty) background++;
    }
    previousEmpty = rowEmpty;
  }
  expect(wrong.slice(0, 5), `${model.method}, ${JSON.stringify({ width, zoom, scale })}: ${wrong.length} pixels wrong`).toEqual([]);
  return background;
}

function generated(seed: number): ViewData {
  const json = generateRandomRollout({ seed, tokens: 200, edits: 4, textRate: 0, id: `g${seed}` });
  return buildViewData(validateRollout(json, { file: `g${seed}.json` }));
}

describe('dense mask raster', () => {
  it('the worked example and generated rollouts, every method, at several zooms and pixel ratios', () => {
    const text = readFileSync(new URL('../../../../public/examples/worked-example.json', import.meta.url), 'utf8');
    const views = [buildViewData(parseRolloutFile(text, 'worked-example.json')[0]), generated(1), generated(2)];
    let background = 0;
    let rasters = 0;
    for (const view of views) {
      for (const method of MASK_METHODS) {
        const model = buildMask(view, method);
        // Plots of about n/3, n/1.3 and n/1.05 pixels, panned so the matrix starts inside or outside the plot.
        for (const [plot, zoom, scale] of [
          [model.n / 3, { k: 1, x: 0, y: 0 }, 1],
          [model.n / 1.3, { k: 1, x: 3.5, y: 1.25 }, 1.5],
          [model.n / 1.05, { k: 1.4, x: -20.3, y: -7.7 }, 2],
        ] as const) {
          if (model.n / plot >= 1 && plot > 4) {
            background += check(model, plot + 52 + (method === 'naive-compressed' ? 46 : 0), plot + 38, zoom, scale);
            rasters++;
          }
        }
      }
    }
    expect(rasters).toBeGreaterThanOrEqual(18);
    // Most of a causal mask's upper triangle is background.
    expect(background).toBeGreaterThan(10_000);
  });
});
