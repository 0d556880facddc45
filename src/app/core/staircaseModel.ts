// View-model of the staircase of live contexts: rows are decode steps (one per target) or segments
// (one per branch), columns the physical tape. Rows are not stored cell by cell: a row is its
// branch's id set (sorted runs, shared by every row of the segment) cut at the row's decode point,
// so a 20k-token rollout with thousands of rows costs a few arrays, and any visible window of
// cells is produced on demand by `rowSpans`.
import type { RowMode } from '../url/schema';
import { CELL, type CellClass } from './cells';

/** What the staircase needs from the conditioning tree (mapped from it in ./viewData.ts). */
export interface TapeView {
  /** Physical tape length L. */
  length: number;
  /** Per physical id: CELL.prompt | obs | act | inserted (anything an edit inserted). */
  cls: Uint8Array;
  /** Per physical id: its segment. */
  segment: Int32Array;
  /** Branch k = live view at the end of segment k, as physical ids in live order. */
  branches: readonly ArrayLike<number>[];
  /** Per branch, its ids as runs (idRuns), when derived ahead with the view (the rollout worker's): a million-node tree's take milliseconds. */
  branchRuns?: Int32Array[];
  /** Targets (act tokens), ascending physical id. */
  targets: Int32Array;
}

export interface StaircaseModel {
  mode: RowMode;
  length: number;
  rowCount: number;
  /** Per row: the segment (= branch) whose live view it shows. */
  rowSegment: Int32Array;
  /** Per row: ids >= cutoff do not exist yet at that point. */
  rowCutoff: Int32Array;
  /** Per row: the target decoded at this step (step mode), or -1 (segment mode). */
  rowTarget: Int32Array;
  /** Per segment: sorted, disjoint [start, end) runs of the branch's ids, flattened. */
  branchRuns: Int32Array[];
  /** Tape runs of equal (class, segment): [start, end, cls, segment] flattened. */
  classRuns: Int32Array;
  /** Per edit k = 1..K (index k-1): the row boundary (0..rowCount) before which it fires. */
  editRow: Int32Array;
  /** Per target, in target order: its row. */
  targetRow: Int32Array;
  /** Targets, ascending physical id (same order as targetRow). */
  targets: Int32Array;
  cls: Uint8Array;
  segment: Int32Array;
}

/** Sorted disjoint [start, end) runs of a set of ids, flattened. */
export function idRuns(ids: ArrayLike<number>): Int32Array {
  // A branch's live view is most often ascending already: sorted only when it is not (the branches
  // of a million-node tree sorted on the page took 0.35 s).
  let ascending = true;
  for (let i = 1; i < ids.length && ascending; i++) ascending = ids[i - 1] <= ids[i];
  const sorted = ascending ? ids : Int32Array.from(ids as ArrayLike<number>).sort();
  const runs: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i];
    const n = runs.length;
    if (n && runs[n - 1] === id) runs[n - 1] = id + 1;
    else if (!n || runs[n - 1] < id) runs.push(id, id + 1);
  }
  return Int32Array.from(runs);
}

function classRunsOf(cls: Uint8Array, segment: Int32Array): Int32Array {
  const out: number[] = [];
  for (let id = 0; id < cls.length; id++) {
    const n = out.length;
    if (n && out[n - 2] === cls[id] && out[n - 1] === segment[id] && out[n - 3] === id) out[n - 3] = id + 1;
    else out.push(id, id + 1, cls[id], segment[id]);
  }
  return Int32Array.from(out);
}

export function buildStaircase(tape: TapeView, mode: RowMode): StaircaseModel {
  const K = tape.branches.length - 1;
  const branchRuns = tape.branchRuns ?? tape.branches.map(idRuns);
  // One past the last id created by the end of each segment.
  const segmentCutoff = new Int32Array(K + 1);
  for (let id = 0; id < tape.length; id++) segmentCutoff[tape.segment[id]] = id + 1;
  for (let k = 1; k <= K; k++) segmentCutoff[k] = Math.max(segmentCutoff[k], segmentCutoff[k - 1]);

  let rowSegment: Int32Array;
  let rowCutoff: Int32Array;
  let rowTarget: Int32Array;
  const targetRow = new Int32Array(tape.targets.length);
  if (mode === 'step') {
    const n = tape.targets.length;
    rowSegment = new Int32Array(n);
    rowCutoff = new Int32Array(n);
    rowTarget = Int32Array.from(tape.targets);
    for (let r = 0; r < n; r++) {
      rowSegment[r] = tape.segment[tape.targets[r]];
      rowCutoff[r] = tape.targets[r] + 1;
      targetRow[r] = r;
    }
  } else {
    rowSegment = Int32Array.from({ length: K + 1 }, (_, k) => k);
    rowCutoff = segmentCutoff.slice();
    rowTarget = new Int32Array(K + 1).fill(-1);
    tape.targets.forEach((t, i) => (targetRow[i] = tape.segment[t]));
  }
  const editRow = new Int32Array(K);
  for (let k = 1, r = 0; k <= K; k++) {
    while (r < rowSegment.length && rowSegment[r] < k) r++;
    editRow[k - 1] = r;
  }
  return {
    mode,
    length: tape.length,
    rowCount: rowSegment.length,
    rowSegment,
    rowCutoff,
    rowTarget,
    branchRuns,
    classRuns: classRunsOf(tape.cls, tape.segment),
    editRow,
    targetRow,
    targets: Int32Array.from(tape.targets),
    cls: tape.cls,
    segment: tape.segment,
  };
}

/** First run index in a flattened run list (stride `stride`) whose end (offset 1) is > id. */
function firstRunEndingAfter(runs: Int32Array, stride: number, id: number): number {
  let lo = 0;
  let hi = runs.length / stride;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid * stride + 1] <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Calls emit(start, end, cls) for the cells of `row` within [lo, hi), in id order, merging equal
 * neighbours. Cells that do not exist yet at this row (id >= cutoff) are not emitted.
 */
export function rowSpans(model: StaircaseModel, row: number, lo: number, hi: number, emit: (start: number, end: number, cls: CellClass) => void): void {
  const seg = model.rowSegment[row];
  const target = model.rowTarget[row];
  const start = Math.max(0, lo);
  // A step row shows the live prefix of its target, then the target itself.
  const end = Math.min(hi, target >= 0 ? target : model.rowCutoff[row], model.length);
  const live = model.branchRuns[seg];
  const cr = model.classRuns;
  let li = firstRunEndingAfter(live, 2, start);
  let ci = firstRunEndingAfter(cr, 4, start);
  let pendStart = -1;
  let pendEnd = -1;
  let pendCls: CellClass = CELL.none;
  const push = (s: number, e: number, c: CellClass) => {
    if (pendStart >= 0 && pendCls === c && pendEnd === s) {
      pendEnd = e;
      return;
    }
    if (pendStart >= 0) emit(pendStart, pendEnd, pendCls);
    pendStart = s;
    pendEnd = e;
    pendCls = c;
  };
  let id = start;
  while (id < end) {
    while (li * 2 < live.length && live[li * 2 + 1] <= id) li++;
    const liveStart = li * 2 < live.length ? live[li * 2] : Infinity;
    if (id < liveStart) {
      const e = Math.min(end, liveStart);
      push(id, e, CELL.evicted);
      id = e;
      continue;
    }
    const liveEnd = Math.min(end, live[li * 2 + 1]);
    while (id < liveEnd) {
      while (cr[ci * 4 + 1] <= id) ci++;
      const e = Math.min(liveEnd, cr[ci * 4 + 1]);
      let c = cr[ci * 4 + 2] as CellClass;
      // Segment rows: the targets this branch scores (act tokens decoded in its segment).
      if (c === CELL.act && target < 0 && cr[ci * 4 + 3] === seg) c = CELL.target;
      push(id, e, c);
      id = e;
    }
  }
  if (target >= 0 && target >= start && target < hi) push(target, target + 1, CELL.target);
  if (pendStart >= 0) emit(pendStart, pendEnd, pendCls);
}

/** The class of one cell, or CELL.none when it does not exist at that row. */
export function cellClass(model: StaircaseModel, row: number, id: number): CellClass {
  let out: CellClass = CELL.none;
  rowSpans(model, row, id, id + 1, (_s, _e, c) => (out = c));
  return out;
}

/** Ids of a row in ascending order that are live context (not evicted, not the row's own target). */
export function rowLiveIds(model: StaircaseModel, row: number): number[] {
  const ids: number[] = [];
  rowSpans(model, row, 0, model.length, (s, e, c) => {
    if (c === CELL.evicted || c === CELL.none) return;
    for (let i = s; i < e; i++) if (i !== model.rowTarget[row]) ids.push(i);
  });
  return ids;
}
