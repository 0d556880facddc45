// the worked example (docs/tree.md), figure by figure (fixture fixtures/worked-example.json).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { deriveTree } from './derive';
import { perTargetReport } from './report';
import { WORKED_EXAMPLE_FIGURES } from '../testing/fixtures';

const FILE = fileURLToPath(new URL('../../fixtures/worked-example.json', import.meta.url));
const [rollout] = parseRolloutFile(readFileSync(FILE, 'utf8'), FILE);
const tree = deriveTree(rollout);
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

describe('worked example (docs/tree.md)', () => {
  it('has the figures of the spec', () => {
    expect(tree.figures).toEqual(WORKED_EXAMPLE_FIGURES);
    expect(Object.keys(tree.figures)).toEqual([
      'K',
      'branches',
      'physicalLength',
      'finalWalkLength',
      'packedLength',
      'targets',
      'droppedTargets',
      'divergingLeaves',
      'evictionMassTotal',
      'evictionMassMax',
    ]);
  });

  it('assigns physical ids in creation order, inserts included', () => {
    expect(Array.from(rollout.tokens)).toEqual([10, 11, 20, 21, 30, 31, 32, 22, 23, 40, 41, 33, 34, 24, 25, 26, 27]);
    expect(Array.from(rollout.segments)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2]);
    expect(Array.from(rollout.targets)).toEqual([2, 3, 7, 8, 13, 14, 15, 16]);
  });

  it('has the three branches and the final walk', () => {
    expect(Array.from(tree.branchIds(0))).toEqual(range(0, 9));
    expect(Array.from(tree.branchIds(1))).toEqual([0, 1, 9, 10, 7, 8, 11, 12, 13, 14]);
    expect(Array.from(tree.branchIds(2))).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
    expect(Array.from(tree.finalWalk)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
  });

  it('records what each edit evicted and inserted', () => {
    expect(tree.edits.map((e) => ({ ...e, evicted: Array.from(e.evicted) }))).toEqual([
      { edit: 1, event: 4, evicted: [2, 3, 4, 5, 6], inserted: { first: 9, count: 2 } },
      { edit: 2, event: 7, evicted: [7, 8, 11, 12], inserted: { first: 0, count: 0 } },
    ]);
  });

  it('gives every target its live, final and full prefix', () => {
    expect(perTargetReport(tree)).toEqual([
      { id: 2, segment: 0, livePrefix: [0, 1], finalPrefix: null, evictionMass: null, diverging: false },
      { id: 3, segment: 0, livePrefix: [0, 1, 2], finalPrefix: null, evictionMass: null, diverging: false },
      { id: 7, segment: 0, livePrefix: range(0, 7), finalPrefix: null, evictionMass: null, diverging: false },
      { id: 8, segment: 0, livePrefix: range(0, 8), finalPrefix: null, evictionMass: null, diverging: false },
      { id: 13, segment: 1, livePrefix: [0, 1, 9, 10, 7, 8, 11, 12], finalPrefix: [0, 1, 9, 10], evictionMass: 4, diverging: true },
      { id: 14, segment: 1, livePrefix: [0, 1, 9, 10, 7, 8, 11, 12, 13], finalPrefix: [0, 1, 9, 10, 13], evictionMass: 4, diverging: true },
      { id: 15, segment: 2, livePrefix: [0, 1, 9, 10, 13, 14], finalPrefix: [0, 1, 9, 10, 13, 14], evictionMass: 0, diverging: false },
      { id: 16, segment: 2, livePrefix: [0, 1, 9, 10, 13, 14, 15], finalPrefix: [0, 1, 9, 10, 13, 14, 15], evictionMass: 0, diverging: false },
    ]);
    for (const t of tree.targets) expect(Array.from(tree.fullPrefix(t))).toEqual(range(0, t));
    expect(Array.from(tree.divergingLeaves)).toEqual([13, 14]);
    expect(() => tree.livePrefix(17)).toThrow(RangeError);
  });

  it('lays the trie out in packed order with depths, parents and end[]', () => {
    expect(Array.from(tree.packedOrder)).toEqual([...range(0, 9), 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16]);
    expect(Array.from(tree.depth)).toEqual([...range(0, 9), ...range(2, 10), ...range(4, 8)]);
    expect(Array.from(tree.end)).toEqual([21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21]);
    expect(Array.from(tree.parent)).toEqual([-1, ...range(0, 8), 1, ...range(9, 16), 10, 17, 18, 19]);
    expect(Array.from(tree.nodeBranch)).toEqual([...Array(9).fill(0), ...Array(8).fill(1), ...Array(4).fill(2)]);
    expect(Array.from(tree.branchLeaf)).toEqual([8, 16, 20]);
  });

  it('scores each target at the node on its own branch path', () => {
    const nodes = Array.from(tree.targets, (t) => tree.scoringNode[t]);
    expect(nodes).toEqual([2, 3, 7, 8, 15, 16, 19, 20]);
    for (const t of tree.targets) expect(tree.packedOrder[tree.scoringNode[t]]).toBe(t);
    expect(tree.scoringNode[9]).toBe(-1);
  });
});
