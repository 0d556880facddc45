// The mask model on the worked example (docs/tree.md) and on generated rollouts: visible pairs equal
// the plan's end[], wrong cells and missing keys agree with what the inspector's method views count.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { visibleKeys } from '../../plan';
import { parseRolloutFile } from '../../rollout';
import { generateRandomRollout } from '../../rollout/generate-random';
import { validateRollout } from '../../rollout';
import { evictingRollout } from '../../testing/evicting';
import {
  buildMask,
  COVERAGE_SLICE,
  MASK_CELL,
  MASK_METHODS,
  maskCell,
  maskCoverage,
  maskCoverageProbe,
  maskCoverageSteps,
  parentsOf,
  rowRuns,
  runsOf,
  type MaskModel,
} from './maskModel';
import { methodViews } from './methodViews';
import { buildViewData, type ViewData } from './viewData';

const text = readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8');
const worked = buildViewData(parseRolloutFile(text, 'worked-example.json')[0]);

/** Counts cells by brute force over every (query, key) pair. */
function census(model: MaskModel) {
  const counts = { visible: 0, stale: 0, future: 0 };
  for (let i = 0; i < model.n; i++) {
    for (let k = 0; k < model.n; k++) {
      const c = maskCell(model, i, k);
      if (c === MASK_CELL.visible) counts.visible++;
      else if (c === MASK_CELL.stale) counts.stale++;
      else if (c === MASK_CELL.future) counts.future++;
    }
  }
  return counts;
}

describe('mask model of the worked example', () => {
  it('packed 4D: 21 × 21, 123 visible pairs, every target row exact, copies 7′ 8′ 13′ 14′, chains b0 b1 b2', () => {
    const m = buildMask(worked, 'packed-4d');
    expect(m.n).toBe(21);
    expect(m.visiblePairs).toBe(123);
    expect(census(m)).toEqual({ visible: 123, stale: 0, future: 0 });
    expect(m.totals).toEqual({ targetRows: 8, missing: 0, stale: 0, future: 0 });
    expect(Array.from(m.copy).flatMap((c, i) => (c ? [i] : []))).toEqual([11, 12, 17, 18]);
    expect(Array.from(m.copyRuns)).toEqual([11, 13, 17, 19]);
    expect(m.bands).toEqual([
      { label: 'b0', start: 0, end: 9 },
      { label: 'b1', start: 9, end: 17 },
      { label: 'b2', start: 17, end: 21 },
    ]);
    // Target 13 is scored at node 15: it sees 0 1 9 10 7′ 8′ 11 12 and itself.
    expect(m.rowOf[13]).toBe(15);
    expect(Array.from(rowRuns(m, 15))).toEqual([0, 2, 9, 16]);
  });
  it('final walk: 8 × 8, 36 pairs, no wrong cell, 8 missing keys (the eviction mass) in the rows of 13 and 14', () => {
    const m = buildMask(worked, 'naive-compressed');
    expect(m.n).toBe(8);
    expect(m.visiblePairs).toBe(36);
    expect(m.totals).toEqual({ targetRows: 4, missing: 8, stale: 0, future: 0 });
    expect(m.missing[m.rowOf[13]]).toBe(4);
    expect(m.missing[m.rowOf[15]]).toBe(0);
    expect(m.rowOf[2]).toBe(-1); // dropped: not in the final walk
  });
  it('physical tape: 17 × 17, 153 pairs, 28 stale cells (5 in the rows of 13 and 14, 9 in those of 15 and 16)', () => {
    const m = buildMask(worked, 'naive-full');
    expect(m.visiblePairs).toBe(153);
    expect(m.totals).toEqual({ targetRows: 8, missing: 0, stale: 28, future: 0 });
    expect([13, 14, 15, 16].map((t) => m.stale[m.rowOf[t]])).toEqual([5, 5, 9, 9]);
    expect(census(m)).toEqual({ visible: 153 - 28, stale: 28, future: 0 });
    expect(maskCell(m, 13, 4)).toBe(MASK_CELL.stale);
    expect(maskCell(m, 13, 7)).toBe(MASK_CELL.visible);
  });
});

function generated(seed: number): ViewData {
  const json = generateRandomRollout({ seed, tokens: 160, edits: 4, textRate: 0, id: `g${seed}` });
  return buildViewData(validateRollout(json, { file: `g${seed}.json` }));
}

describe('mask model against the plans and the method views', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`seed ${seed}: pairs = Σ(end − k), rows = visibleKeys, counts = the inspector's missing/stale/future`, () => {
      const view = generated(seed);
      for (const method of MASK_METHODS) {
        const m = buildMask(view, method);
        const c = census(m);
        expect(c.visible + c.stale + c.future).toBe(m.visiblePairs);
        expect(c.stale).toBe(m.totals.stale);
        expect(c.future).toBe(m.totals.future);
        for (let i = 0; i < m.n; i += 7) {
          const runs = rowRuns(m, i);
          const keys: number[] = [];
          for (let r = 0; r < runs.length; r += 2) for (let k = runs[r]; k < runs[r + 1]; k++) keys.push(k);
          expect(keys).toEqual(visibleKeys(m.end, i));
        }
        if (method === 'packed-4d') expect(m.totals.missing + m.totals.stale + m.totals.future).toBe(0);
      }
      const compressed = buildMask(view, 'naive-compressed');
      const full = buildMask(view, 'naive-full');
      for (const t of view.rollout.targets) {
        const views = methodViews(view, t);
        const nc = views.find((v) => v.method === 'naive-compressed')!;
        const nf = views.find((v) => v.method === 'naive-full')!;
        const row = compressed.rowOf[t];
        if (row >= 0) {
          expect({ missing: compressed.missing[row], stale: compressed.stale[row], future: compressed.future[row] }).toEqual({
            missing: nc.missing,
            stale: nc.stale,
            future: nc.future,
          });
          expect(compressed.missing[row]).toBe(view.tree.evictionMass[t]);
        } else expect(nc.prefix).toBeNull();
        const fr = full.rowOf[t];
        expect({ missing: full.missing[fr], stale: full.stale[fr], future: full.future[fr] }).toEqual({
          missing: nf.missing,
          stale: nf.stale,
          future: nf.future,
        });
      }
    });
  }
  it('parentsOf reads a causal end[] as a chain and a tree end[] as its parents', () => {
    expect(Array.from(parentsOf([3, 3, 3]))).toEqual([-1, 0, 1]);
    expect(Array.from(parentsOf(worked.tree.end))).toEqual(Array.from(worked.tree.parent));
  });
});

/**
 * The per-row counts as buildMask defined them before issue 31 (one pass down the key chains per segment
 * holding target rows: O(n·K)), kept here as the reference the O(n log K) pass must equal.
 */
function countsBySegmentPass(view: ViewData, m: MaskModel) {
  const live = (x: number, s: number) => m.segment[x] <= s && s < m.evictedBy[x];
  const missing = new Int32Array(m.n);
  const stale = new Int32Array(m.n);
  const future = new Int32Array(m.n);
  const depth = new Int32Array(m.n);
  for (let i = 0; i < m.n; i++) depth[i] = m.parent[i] >= 0 ? depth[m.parent[i]] + 1 : 0;
  const rows = Array.from(m.rowTarget.keys()).filter((i) => m.rowTarget[i] >= 0);
  for (const s of new Set(rows.map((i) => m.segment[m.rowTarget[i]]))) {
    const liveAbove = new Int32Array(m.n);
    const laterAbove = new Int32Array(m.n);
    for (let i = 0; i < m.n; i++) {
      const p = m.parent[i];
      liveAbove[i] = (p >= 0 ? liveAbove[p] : 0) + (live(m.ids[i], s) ? 1 : 0);
      laterAbove[i] = (p >= 0 ? laterAbove[p] : 0) + (m.segment[m.ids[i]] > s ? 1 : 0);
    }
    for (const i of rows) {
      const t = m.rowTarget[i];
      if (m.segment[t] !== s) continue;
      const p = m.parent[i];
      const seen = p >= 0 ? liveAbove[p] : 0;
      future[i] = p >= 0 ? laterAbove[p] : 0;
      missing[i] = view.tree.ownPosition[t] - seen;
      stale[i] = depth[i] - seen - future[i];
    }
  }
  const sum = (a: Int32Array) => a.reduce((x, y) => x + y, 0);
  return { missing, stale, future, totals: { targetRows: rows.length, missing: sum(missing), stale: sum(stale), future: sum(future) } };
}

describe('the per-row counts in one pass (issue 31: a pass per segment was N_packed^1.5)', () => {
  const views: [string, ViewData][] = [
    ['the worked example', worked],
    ...[1, 2, 3, 4, 5, 6].map((seed): [string, ViewData] => [`seed ${seed}`, generated(seed)]),
    ['40 edits each evicting one token', buildViewData(validateRollout(JSON.parse(evictingRollout(40)), { file: 'evict.json' }))],
  ];
  for (const [name, view] of views) {
    it(`${name}: missing, stale and future per row and in total equal the pass per segment, for each mask`, () => {
      let wrong = 0;
      for (const method of MASK_METHODS) {
        const m = buildMask(view, method);
        const old = countsBySegmentPass(view, m);
        expect(Array.from(m.missing)).toEqual(Array.from(old.missing));
        expect(Array.from(m.stale)).toEqual(Array.from(old.stale));
        expect(Array.from(m.future)).toEqual(Array.from(old.future));
        expect(m.totals).toEqual(old.totals);
        wrong += m.totals.stale + m.totals.future + m.totals.missing;
      }
      // The comparison is not of zeros only: the causal masks hold wrong cells wherever an edit evicted a live id.
      expect(wrong).toBeGreaterThan(0);
    });
  }
});

describe('the mask aggregated to pixels (maskCoverage)', () => {
  /** Visible pairs per pixel by brute force: every (query, key) pair's own pixel. */
  function direct(m: MaskModel, x0: number, y0: number, size: number, W: number, H: number): number[] {
    const out = new Array<number>(W * H).fill(0);
    for (let i = 0; i < m.n; i++) {
      for (let k = 0; k < m.n; k++) {
        if (maskCell(m, i, k) === MASK_CELL.hidden) continue;
        const c = Math.floor(x0 + k * size);
        const r = Math.floor(y0 + i * size);
        if (c >= 0 && c < W && r >= 0 && r < H) out[r * W + c]++;
      }
    }
    return out;
  }

  it('equals the direct count per pixel for each mask of the worked example, whole and zoomed', () => {
    for (const method of MASK_METHODS) {
      const m = buildMask(worked, method);
      // Whole (a 21-cell mask in 6 pixels), panned and zoomed (pixels partly outside), one cell per pixel.
      for (const [x0, y0, size, W, H] of [
        [0, 0, 6 / m.n, 6, 6],
        [-1.3, 0.7, 0.37, 5, 7],
        [0, 0, 1, m.n, m.n],
      ]) {
        const got = Array.from(maskCoverage(m.end, m.n, x0, y0, size, W, H));
        expect(got, `${method} at ${[x0, y0, size, W, H]}`).toEqual(direct(m, x0, y0, size, W, H));
      }
      // Whole, every visible pair lands in some pixel.
      const whole = maskCoverage(m.end, m.n, 0, 0, 6 / m.n - 1e-9, 6, 6).reduce((a, b) => a + b, 0);
      expect(whole).toBe(m.visiblePairs);
    }
    // The packed mask in 6 × 6: the first pixel holds indices 0..3, all on b0's chain: 4 + 3 + 2 + 1 pairs.
    const packed = maskCoverage(buildMask(worked, 'packed-4d').end, 21, 0, 0, 6 / 21, 6, 6);
    expect(packed[0]).toBe(10);
  });

  it('asked pixel by pixel (maskCoverageProbe), a pixel is covered exactly where the count is above zero', () => {
    const cases: [MaskModel, number, number, number, number, number][] = [];
    for (const method of MASK_METHODS) {
      const m = buildMask(worked, method);
      cases.push([m, 0, 0, 6 / m.n, 6, 6], [m, -1.3, 0.7, 0.37, 5, 7], [m, 0, 0, 1, m.n, m.n], [m, 0.5, -0.25, 1.6, 30, 30]);
    }
    for (let seed = 1; seed <= 4; seed++) {
      const m = buildMask(generated(seed), 'packed-4d');
      cases.push([m, 0.4, 0.2, 9 / m.n, 9, 9], [m, 0, 0, 40 / m.n, 40, 40]);
    }
    let covered = 0;
    for (const [m, x0, y0, size, W, H] of cases) {
      const count = maskCoverage(m.end, m.n, x0, y0, size, W, H);
      const probe = maskCoverageProbe(m.end, m.n, x0, y0, size, W, H);
      for (let r = 0; r < H; r++)
        for (let c = 0; c < W; c++) {
          expect(probe(r, c), `pixel ${r},${c} at ${[x0, y0, size, W, H]}`).toBe(count[r * W + c] > 0);
          if (probe(r, c)) covered++;
        }
    }
    expect(covered).toBeGreaterThan(100);
  });

  it('equals the direct count on generated rollouts', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const m = buildMask(generated(seed), 'packed-4d');
      const size = 9 / m.n;
      expect(Array.from(maskCoverage(m.end, m.n, 0.4, 0.2, size, 9, 9))).toEqual(direct(m, 0.4, 0.2, size, 9, 9));
    }
  });
});

describe('the pixel count in slices (maskCoverageSteps), as the page counts a million keys across tasks', () => {
  it('N_packed 90,000 (300 edits, each evicting one token): six slices of keys and the rows, the same count as maskCoverage', () => {
    const view = buildViewData(validateRollout(JSON.parse(evictingRollout(300, 'slices')), { file: 'slices.json' }));
    const m = buildMask(view, 'packed-4d');
    expect(m.n).toBe(90_000);
    // The whole mask in 300 × 300 pixels: 300 keys per pixel column.
    const size = 300 / m.n - 1e-9;
    const steps = maskCoverageSteps(m.end, m.n, 0, 0, size, 300, 300);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    // A yield between each two of the six slices (five of 16,384 keys, one of 8,080), one before the pass over the rows.
    expect(COVERAGE_SLICE).toBe(16_384);
    expect(yields).toBe(6);
    const whole = maskCoverage(m.end, m.n, 0, 0, size, 300, 300);
    expect(step.value.filter((c, p) => c !== whole[p]).length).toBe(0);
    expect(step.value.reduce((a, b) => a + b, 0)).toBe(m.visiblePairs);
    // A thousand-node branch per diagonal block: the 300 diagonal pixels are covered, the far corner is not.
    for (let p = 0; p < 300; p++) expect(step.value[p * 300 + p]).toBeGreaterThan(0);
    expect(step.value[299 * 300 + 0]).toBeGreaterThan(0); // every query sees key 0 (the shared first token)
    expect(step.value[0 * 300 + 299]).toBe(0); // no key after a query is visible to it
  });

  it('the runs of replicated copies (what the axes tick) match the flags', () => {
    expect(Array.from(runsOf(Uint8Array.from([0, 1, 1, 0, 1, 0, 0, 1])))).toEqual([1, 3, 4, 5, 7, 8]);
    expect(Array.from(runsOf(new Uint8Array(4)))).toEqual([]);
    for (let seed = 1; seed <= 4; seed++) {
      const m = buildMask(generated(seed), 'packed-4d');
      const flags = new Uint8Array(m.n);
      for (let r = 0; r < m.copyRuns.length; r += 2) flags.fill(1, m.copyRuns[r], m.copyRuns[r + 1]);
      expect(Array.from(flags)).toEqual(Array.from(m.copy));
    }
  });
});
