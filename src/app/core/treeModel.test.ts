import { describe, expect, it } from 'vitest';
import { CELL } from './cells';
import { buildTreeModel, edgeRuns, idsLabel, NODE, nodesOfSequence } from './treeModel';
import { WORKED_TRIE as worked } from './workedTrie.testing';

describe('conditioning tree view-model', () => {
  const model = buildTreeModel(worked);
  it('collapses unbranched runs into five labelled edges', () => {
    expect(model.edges.map((e) => [e.from, e.to, e.parentEdge])).toEqual([
      [0, 1, -1],
      [2, 8, 0],
      [9, 10, 0],
      [11, 16, 2],
      [17, 20, 2],
    ]);
    expect(model.edges.map((e) => e.label)).toEqual(['0,1', '2–8', '9,10', '7′,8′ 11–14', '13′,14′ 15,16']);
  });
  it('marks junctions with the edit that forks them and leaves with their branch', () => {
    expect(model.edges.map((e) => e.forkEdits)).toEqual([[1], [], [2], [], []]);
    expect(model.edges.map((e) => e.leafOf)).toEqual([[], [0], [], [1], [2]]);
    expect(model.edges.map((e) => e.branches)).toEqual([[0, 1, 2], [0], [1, 2], [1], [2]]);
  });
  it('tells replicated context copies from targets', () => {
    const copies = [...model.kind].flatMap((k, n) => (k === NODE.copy ? [n] : []));
    expect(copies).toEqual([11, 12, 17, 18]);
    const targets = [...model.kind].flatMap((k, n) => (k === NODE.target ? [worked.id[n]] : []));
    expect(targets).toEqual([2, 3, 7, 8, 13, 14, 15, 16]);
    expect(edgeRuns(model, model.edges[3])).toEqual([
      { from: 11, to: 12, cls: CELL.act, copy: true },
      { from: 13, to: 14, cls: CELL.obs, copy: false },
      { from: 15, to: 16, cls: CELL.target, copy: false },
    ]);
  });
  it('lays out one row per leaf, children below their parent', () => {
    expect(model.rows).toBe(3);
    const ys = model.edges.map((e) => e.y);
    expect(new Set([ys[1], ys[3], ys[4]]).size).toBe(3);
    expect(model.maxDepth).toBe(9);
  });
  it('maps a sequence onto trie nodes, leaving the trie where the tape does', () => {
    expect(Array.from(nodesOfSequence(model, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14]);
    expect(Array.from(nodesOfSequence(model, [0, 1, 9, 10, 13, 14]))).toEqual([0, 1, 9, 10, 17, 18]);
    expect(Array.from(nodesOfSequence(model, [0, 1, 9, 10, 7, 8, 11, 12]))).toEqual([0, 1, 9, 10, 11, 12, 13, 14]);
  });
  it('labels ids compactly', () => {
    expect(idsLabel([0, 1, 2, 3, 9, 5, 6], () => false)).toBe('0–3 9 5,6');
    expect(idsLabel([1, 3, 5, 7, 9, 11], () => false)).toBe('1 3 5 … 11');
  });
});
