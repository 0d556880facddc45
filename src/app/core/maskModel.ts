// The attention mask of a method's sequence as a picture's model: rows are queries and columns keys,
// both in sequence order; query i sees key k iff k <= i < end[k] (src/plan). Rows that score a target
// are judged against the target's live prefix: a visible key the policy did not see there is a wrong
// cell (stale: evicted before the target was written; future: created after it), and live-prefix ids
// the row cannot see are missing. The packed 4D mask has neither; the causal masks of the final walk
// (Naive-Compressed) and of the physical tape (Naive-Full) show the two pitfalls.
import type { ConditioningTree } from '../../tree';
import type { PlanSequence } from '../../plan';
import { planIndex } from './methodViews';
import type { ViewData } from './viewData';

/** The three masks the view compares. */
export const MASK_METHODS = ['packed-4d', 'naive-compressed', 'naive-full'] as const;
export type MaskMethod = (typeof MASK_METHODS)[number];

/** What a cell of the mask is. */
export const MASK_CELL = { hidden: 0, visible: 1, stale: 2, future: 3 } as const;
export type MaskCell = (typeof MASK_CELL)[keyof typeof MASK_CELL];

/** A run of indices [start, end) sharing a band: a branch's chain (packed) or a segment's ids. */
export interface MaskBand {
  label: string;
  start: number;
  end: number;
}

export interface MaskModel {
  method: MaskMethod;
  /** Sequence length (N_packed, N_final or L). */
  n: number;
  /** Physical id per index. */
  ids: Int32Array;
  /** Visibility: query i sees key k iff k <= i < end[k]. */
  end: Uint32Array;
  /** The largest index below i that i sees (-1 for none): the chain of a row's keys. */
  parent: Int32Array;
  /** Σ_k (end[k] − k): the number of visible (query, key) pairs. */
  visiblePairs: number;
  /** Per index: 1 for a replicated copy (a trie node repeating an id of an earlier branch). */
  copy: Uint8Array;
  /** The runs of `copy`, flattened: [start, end) of each run of consecutive copies, ascending (a few per branch, not n flags). */
  copyRuns: Int32Array;
  /** The bands along the axes (a dashed rule at each band start after the first). */
  bands: MaskBand[];
  /** Per index: the target this row scores (its physical id), -1 for a context row. */
  rowTarget: Int32Array;
  /** Per index: the index that scores target `id`, or -1 (Map-free lookup by id). */
  rowOf: Int32Array;
  /** Per target row: its live-prefix ids it cannot see; visible keys that were evicted (stale) or written later (future). */
  missing: Int32Array;
  stale: Int32Array;
  future: Int32Array;
  totals: { targetRows: number; missing: number; stale: number; future: number };
  /** Per physical id: its segment, and the edit that evicted it (K + 1 when none did). */
  segment: Int32Array;
  evictedBy: Int32Array;
}

/** Per id, the edit (1..K) that evicted it, K + 1 for ids never evicted. */
function evictions(tree: ConditioningTree): Int32Array {
  const out = new Int32Array(tree.rollout.length).fill(tree.K + 1);
  for (const edit of tree.edits) for (const id of edit.evicted) out[id] = edit.edit;
  return out;
}

/** Counts over 0 .. size − 1 that ranges are added to and one value is read from (a Fenwick tree of differences): O(log size) each. */
class SegmentCounts {
  private readonly sums: Int32Array;
  constructor(size: number) {
    this.sums = new Int32Array(size + 2);
  }
  /** Adds v to every count in [lo, hi). */
  add(lo: number, hi: number, v: number): void {
    if (lo >= hi) return;
    for (let i = lo + 1; i < this.sums.length; i += i & -i) this.sums[i] += v;
    for (let i = hi + 1; i < this.sums.length; i += i & -i) this.sums[i] -= v;
  }
  /** The count at s. */
  at(s: number): number {
    let sum = 0;
    for (let i = s + 1; i > 0; i -= i & -i) sum += this.sums[i];
    return sum;
  }
}

/** The parent chain of a tree-shaped `end[]` (causal sequences are a chain): nearest k < i with end[k] > i. */
export function parentsOf(end: ArrayLike<number>): Int32Array {
  const n = end.length;
  const parent = new Int32Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    while (stack.length && end[stack[stack.length - 1]] <= i) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1] : -1;
    stack.push(i);
  }
  return parent;
}

/** The runs of set flags, flattened: [start, end) per run of consecutive ones. */
export function runsOf(flags: Uint8Array): Int32Array {
  const runs: number[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (!flags[i]) continue;
    if (runs.length && runs[runs.length - 1] === i) runs[runs.length - 1] = i + 1;
    else runs.push(i, i + 1);
  }
  return Int32Array.from(runs);
}

/** Whether id x was live in branch s: created in segment s or before, and not evicted by edits 1..s. */
function liveIn(model: Pick<MaskModel, 'segment' | 'evictedBy'>, x: number, s: number): boolean {
  return model.segment[x] <= s && s < model.evictedBy[x];
}

/** The kind of cell (query i, key k). */
export function maskCell(model: MaskModel, i: number, k: number): MaskCell {
  if (k > i || model.end[k] <= i) return MASK_CELL.hidden;
  const t = model.rowTarget[i];
  if (t < 0) return MASK_CELL.visible;
  const x = model.ids[k];
  const s = model.segment[t];
  if (x === t || liveIn(model, x, s)) return MASK_CELL.visible;
  return model.segment[x] > s ? MASK_CELL.future : MASK_CELL.stale;
}

function bandsOf(method: MaskMethod, seq: PlanSequence, tree: ConditioningTree): MaskBand[] {
  const bands: MaskBand[] = [];
  if (method === 'packed-4d') {
    for (let b = 0; b <= tree.K; b++) {
      const start = tree.chainStart[b];
      if (start < 0) continue;
      let stop = start;
      while (stop < seq.ids.length && tree.nodeBranch[stop] === b) stop++;
      bands.push({ label: `b${b}`, start, end: stop });
    }
    return bands;
  }
  // Causal sequences: runs of ids of one segment (the edit that opened it names the rule).
  for (let i = 0; i < seq.ids.length; i++) {
    const s = tree.rollout.segments[seq.ids[i]];
    const last = bands[bands.length - 1];
    if (last && last.label === `s${s}`) last.end = i + 1;
    else bands.push({ label: `s${s}`, start: i, end: i + 1 });
  }
  return bands;
}

const masks = new WeakMap<ViewData, Partial<Record<MaskMethod, MaskModel>>>();

/** The mask of one method for this rollout: built once, or given by seedMasks. */
export function maskOf(view: ViewData, method: MaskMethod): MaskModel {
  let byMethod = masks.get(view);
  if (!byMethod) masks.set(view, (byMethod = {}));
  return (byMethod[method] ??= buildMask(view, method));
}

/** Masks built elsewhere from the same tree and plans (the rollout worker's): maskOf then returns them. */
export function seedMasks(view: ViewData, built: Partial<Record<MaskMethod, MaskModel>>): void {
  masks.set(view, { ...masks.get(view), ...built });
}

/** The mask of one method's (first) sequence, judged row by row against the live prefixes. */
export function buildMask(view: ViewData, method: MaskMethod): MaskModel {
  const { tree } = view;
  const plan = planIndex(view, method).plan;
  if (plan.method === 'sdcc') throw new Error('sdcc has no single mask');
  const seq = plan.sequences[0];
  const n = seq.ids.length;
  const L = tree.rollout.length;
  const parent = parentsOf(seq.end);
  let visiblePairs = 0;
  for (let k = 0; k < n; k++) visiblePairs += seq.end[k] - k;

  const copy = new Uint8Array(n);
  if (method === 'packed-4d') {
    for (let i = 0; i < n; i++) copy[i] = tree.nodeBranch[i] !== tree.rollout.segments[seq.ids[i]] ? 1 : 0;
  }
  const rowTarget = new Int32Array(n).fill(-1);
  const rowOf = new Int32Array(L).fill(-1);
  for (const t of seq.targets) {
    rowTarget[t.index] = t.id;
    rowOf[t.id] = t.index;
  }
  const model: MaskModel = {
    method,
    n,
    ids: seq.ids,
    end: seq.end,
    parent,
    visiblePairs,
    copy,
    copyRuns: runsOf(copy),
    bands: bandsOf(method, seq, tree),
    rowTarget,
    rowOf,
    missing: new Int32Array(n),
    stale: new Int32Array(n),
    future: new Int32Array(n),
    totals: { targetRows: seq.targets.length, missing: 0, stale: 0, future: 0 },
    segment: tree.rollout.segments,
    evictedBy: evictions(tree),
  };

  // One pass down the key chains (the stack of parentsOf holds a row's keys): every key on the stack adds
  // itself to the segments its branch-liveness and lateness cover, so a target row reads its counts at its
  // own segment. O(n log K), where a pass per segment holding targets was O(n·K) (N_packed^1.5 for the
  // rollouts of one eviction per edit).
  if (seq.targets.length) {
    const K = tree.K;
    // Segments s with liveIn(x, s): [segment[x], evictedBy[x]); with segment[x] > s: [0, segment[x]).
    const live = new SegmentCounts(K + 2);
    const later = new SegmentCounts(K + 2);
    const { evictedBy } = model;
    const segment = model.segment;
    const stack = new Int32Array(n);
    let top = 0;
    for (let i = 0; i < n; i++) {
      while (top && seq.end[stack[top - 1]] <= i) {
        const x = seq.ids[stack[--top]];
        live.add(segment[x], evictedBy[x], -1);
        later.add(0, segment[x], -1);
      }
      const t = rowTarget[i];
      if (t >= 0) {
        const s = segment[t];
        const seen = live.at(s);
        const future = later.at(s);
        model.missing[i] = tree.ownPosition[t] - seen;
        model.future[i] = future;
        model.stale[i] = top - seen - future;
        model.totals.missing += model.missing[i];
        model.totals.future += future;
        model.totals.stale += model.stale[i];
      }
      const x = seq.ids[i];
      live.add(segment[x], evictedBy[x], 1);
      later.add(0, segment[x], 1);
      stack[top++] = i;
    }
  }
  return model;
}

/** The visible keys of row i as index runs [start, end) flattened, ascending. */
export function rowRuns(model: MaskModel, i: number): Int32Array {
  const keys: number[] = [];
  for (let k = i; k >= 0; k = model.parent[k]) keys.push(k);
  keys.reverse();
  const runs: number[] = [];
  for (const k of keys) {
    if (runs.length && runs[runs.length - 1] === k) runs[runs.length - 1] = k + 1;
    else runs.push(k, k + 1);
  }
  return Int32Array.from(runs);
}

/**
 * Whether pixel (r, c) of maskCoverage's raster holds a visible pair (maskCoverage's count > 0), asked pixel by pixel:
 * O(W + H) to set up, then O(keys under the pixel's column) per question. For a mask a few cells per pixel
 * wide (a playground rollout) this answers the few hidden pixels the drawing asks about, where the whole
 * count would touch every pixel; a mask of many keys per pixel is counted whole (maskCoverage).
 */
export function maskCoverageProbe(
  end: ArrayLike<number>,
  n: number,
  x0: number,
  y0: number,
  size: number,
  W: number,
  H: number,
): (r: number, c: number) => boolean {
  const starts = (origin: number, pixels: number) => {
    const pixelOf = (i: number) => Math.floor(origin + i * size);
    const start = new Int32Array(pixels + 1);
    for (let p = 0; p <= pixels; p++) {
      let i = Math.min(n, Math.max(0, Math.ceil((p - origin) / size)));
      while (i > 0 && pixelOf(i - 1) >= p) i--;
      while (i < n && pixelOf(i) < p) i++;
      start[p] = i;
    }
    return start;
  };
  const rowStart = starts(y0, H);
  const colStart = starts(x0, W);
  return (r, c) => {
    const a = rowStart[r];
    const b = rowStart[r + 1];
    for (let k = colStart[c]; k < colStart[c + 1]; k++) if (Math.max(k, a) < Math.min(end[k], b)) return true;
    return false;
  };
}

/**
 * The mask aggregated to a raster, for a matrix with more cells than pixels: pixel column c holds
 * keys k with floor(x0 + k·size) = c, pixel row r queries i with floor(y0 + i·size) = r (size in pixels
 * per cell, under 1), and count[r·W + c] is the number of visible (query, key) pairs in that block.
 * A key's visible queries are one run [k, end[k]) (a subtree in preorder, or the rest of a causal
 * sequence), so each key costs O(1) (its two partial rows and a difference for the rows between):
 * O(keys in view + W·H), where drawing cell by cell would cost the number of cells.
 */
export function maskCoverage(end: ArrayLike<number>, n: number, x0: number, y0: number, size: number, W: number, H: number): Float64Array {
  const steps = maskCoverageSteps(end, n, x0, y0, size, W, H);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Keys counted between two yields of maskCoverageSteps (a few milliseconds of work). */
export const COVERAGE_SLICE = 1 << 14;

/**
 * maskCoverage in slices: yields after every COVERAGE_SLICE keys and returns the count, so a page can
 * count a million keys across several tasks (each a few milliseconds) instead of in one.
 */
export function* maskCoverageSteps(
  end: ArrayLike<number>,
  n: number,
  x0: number,
  y0: number,
  size: number,
  W: number,
  H: number,
): Generator<void, Float64Array, void> {
  const count = new Float64Array(W * H);
  // Per column, a difference array over pixel rows of whole-row spans, plus the partial ends directly.
  const diff = new Float64Array(W * (H + 1));
  const rowOf = (i: number) => Math.floor(y0 + i * size);
  const colOf = (k: number) => Math.floor(x0 + k * size);
  // The first index whose pixel is at or past p (on one axis), in [0, n]: a guess, then corrected by
  // the same floor the pixel of an index uses, so the two never disagree by a rounding.
  const firstAt = (pixelOf: (i: number) => number, origin: number, p: number) => {
    let i = Math.min(n, Math.max(0, Math.ceil((p - origin) / size)));
    while (i > 0 && pixelOf(i - 1) >= p) i--;
    while (i < n && pixelOf(i) < p) i++;
    return i;
  };
  // The first query of each pixel row (and one past the last row's), looked up per key below.
  const rowStart = new Int32Array(H + 1);
  for (let r = 0; r <= H; r++) rowStart[r] = firstAt(rowOf, y0, r);
  const kLo = firstAt(colOf, x0, 0);
  const kHi = firstAt(colOf, x0, W);
  const qLo = rowStart[0];
  const qHi = rowStart[H];
  for (let from = kLo; from < kHi; from += COVERAGE_SLICE) {
    if (from > kLo) yield;
    const to = Math.min(kHi, from + COVERAGE_SLICE);
    for (let k = from; k < to; k++) {
      const c = colOf(k);
      // Visible queries [k, end[k]) clipped to the rows in view.
      const a = Math.max(k, qLo);
      const b = Math.min(end[k], qHi);
      if (a >= b) continue;
      const ra = rowOf(a);
      const rb = rowOf(b - 1);
      if (ra === rb) {
        count[ra * W + c] += b - a;
        continue;
      }
      count[ra * W + c] += rowStart[ra + 1] - a;
      count[rb * W + c] += b - rowStart[rb];
      // Whole rows ra + 1 .. rb - 1: each adds its own number of queries, so the difference counts keys.
      if (rb - ra > 1) {
        diff[(ra + 1) * W + c] += 1;
        diff[rb * W + c] -= 1;
      }
    }
  }
  yield;
  const running = new Float64Array(W);
  for (let r = 0; r < H; r++) {
    const rows = rowStart[r + 1] - rowStart[r];
    for (let c = 0; c < W; c++) {
      running[c] += diff[r * W + c];
      if (running[c]) count[r * W + c] += running[c] * rows;
    }
  }
  return count;
}
