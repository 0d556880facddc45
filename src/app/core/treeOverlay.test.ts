import { describe, expect, it } from 'vitest';
import { buildTreeModel } from './treeModel';
import { methodOverlays, nodeRuns } from './treeOverlay';
import { WORKED_TRIE } from './workedTrie.testing';

const model = buildTreeModel(WORKED_TRIE);

describe('method overlays on the trie', () => {
  it('splits node runs at edge boundaries', () => {
    expect(nodeRuns(model, [10, 9, 0, 1, 11])).toEqual([
      { edge: 0, from: 0, to: 1 },
      { edge: 2, from: 9, to: 10 },
      { edge: 3, from: 11, to: 11 },
    ]);
  });
  it('places target 13 under each method (live path, final path, physical tape)', () => {
    const live = Int32Array.from([0, 1, 9, 10, 7, 8, 11, 12]);
    const final = Int32Array.from([0, 1, 9, 10]);
    const full = Int32Array.from({ length: 13 }, (_, i) => i);
    const [compressed, naiveFull, logitTree, , sdcc] = methodOverlays(
      model,
      [
        { method: 'naive-compressed', prefix: final, teacher: null, missing: 4, stale: 0, future: 0, exact: false },
        { method: 'naive-full', prefix: full, teacher: null, missing: 0, stale: 5, future: 0, exact: false },
        { method: 'logit-tree', prefix: live, teacher: null, missing: 0, stale: 0, future: 0, exact: true },
        { method: 'packed-4d', prefix: live, teacher: null, missing: 0, stale: 0, future: 0, exact: true },
        { method: 'sdcc', prefix: final, teacher: live, missing: 4, stale: 0, future: 0, exact: false },
      ],
      13,
    );
    // Scored on the final walk's copy 13′ (node 17), on the tape's first 13 (node 15), on its own branch (15).
    expect(compressed.scoredAt).toBe(17);
    expect(naiveFull.scoredAt).toBe(15);
    expect(logitTree.scoredAt).toBe(15);
    expect(logitTree.runs).toEqual([
      { edge: 0, from: 0, to: 1 },
      { edge: 2, from: 9, to: 10 },
      { edge: 3, from: 11, to: 14 },
    ]);
    expect(naiveFull.runs).toEqual([
      { edge: 0, from: 0, to: 1 },
      { edge: 1, from: 2, to: 8 },
      { edge: 2, from: 9, to: 10 },
      { edge: 3, from: 13, to: 14 },
    ]);
    expect(sdcc.teacherRuns).toEqual([{ edge: 3, from: 11, to: 14 }]);
  });
});
