import { describe, expect, it } from 'vitest';
import { CELL } from './cells';
import { buildStaircase, cellClass, idRuns, rowLiveIds, rowSpans, type TapeView } from './staircaseModel';

// the worked example (docs/tree.md), written out by hand (independent of the core's derivation).
const P = CELL.prompt,
  O = CELL.obs,
  A = CELL.act,
  I = CELL.inserted;
const worked: TapeView = {
  length: 17,
  cls: Uint8Array.from([P, P, A, A, O, O, O, A, A, I, I, O, O, A, A, A, A]),
  segment: Int32Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2]),
  branches: [
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
    [0, 1, 9, 10, 7, 8, 11, 12, 13, 14],
    [0, 1, 9, 10, 13, 14, 15, 16],
  ],
  targets: Int32Array.from([2, 3, 7, 8, 13, 14, 15, 16]),
};

function spans(model: ReturnType<typeof buildStaircase>, row: number, lo = 0, hi = 17) {
  const out: [number, number, number][] = [];
  rowSpans(model, row, lo, hi, (s, e, c) => out.push([s, e, c]));
  return out;
}

describe('idRuns', () => {
  it('sorts and merges ids into runs', () => {
    expect(Array.from(idRuns([0, 1, 9, 10, 7, 8, 11, 12]))).toEqual([0, 2, 7, 13]);
    expect(Array.from(idRuns([]))).toEqual([]);
    expect(Array.from(idRuns([5, 5, 3]))).toEqual([3, 4, 5, 6]);
  });
});

describe('staircase, one row per decode step', () => {
  const model = buildStaircase(worked, 'step');
  it('has one row per target and marks each edit before the first row after it', () => {
    expect(model.rowCount).toBe(8);
    expect(Array.from(model.rowTarget)).toEqual([2, 3, 7, 8, 13, 14, 15, 16]);
    expect(Array.from(model.editRow)).toEqual([4, 6]);
  });
  it('shows target 13 its live prefix and the evicted span', () => {
    const row = 4;
    expect(rowLiveIds(model, row)).toEqual([0, 1, 7, 8, 9, 10, 11, 12]);
    expect(spans(model, row)).toEqual([
      [0, 2, P],
      [2, 7, CELL.evicted],
      [7, 9, A],
      [9, 11, I],
      [11, 13, O],
      [13, 14, CELL.target],
    ]);
  });
  it('shows target 15 the compressed view after edit 2', () => {
    expect(rowLiveIds(model, 6)).toEqual([0, 1, 9, 10, 13, 14]);
    expect(cellClass(model, 6, 12)).toBe(CELL.evicted);
    expect(cellClass(model, 6, 15)).toBe(CELL.target);
    expect(cellClass(model, 6, 16)).toBe(CELL.none);
  });
  it('clips spans to the requested window', () => {
    expect(spans(model, 4, 5, 10)).toEqual([
      [5, 7, CELL.evicted],
      [7, 9, A],
      [9, 10, I],
    ]);
    expect(spans(model, 0, 3, 17)).toEqual([]);
  });
});

describe('staircase, one row per segment', () => {
  const model = buildStaircase(worked, 'segment');
  it('shows each branch with the targets it scores', () => {
    expect(model.rowCount).toBe(3);
    expect(Array.from(model.editRow)).toEqual([1, 2]);
    expect(Array.from(model.targetRow)).toEqual([0, 0, 0, 0, 1, 1, 2, 2]);
    expect(spans(model, 0)).toEqual([
      [0, 2, P],
      [2, 4, CELL.target],
      [4, 7, O],
      [7, 9, CELL.target],
    ]);
    expect(spans(model, 1)).toEqual([
      [0, 2, P],
      [2, 7, CELL.evicted],
      [7, 9, A],
      [9, 11, I],
      [11, 13, O],
      [13, 15, CELL.target],
    ]);
    expect(rowLiveIds(model, 2)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
  });
});
