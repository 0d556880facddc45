// Each method's plan on the worked example (docs/tree.md): sequences, and what every target sees.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { deriveTree } from '../tree/derive';
import { buildPlan } from './build';
import { planToJson } from './json';
import { planNeeds } from './needs';
import type { PlanSequence } from './types';
import { visibleKeys } from './visibility';

const FILE = fileURLToPath(new URL('../../fixtures/worked-example.json', import.meta.url));
const tree = deriveTree(parseRolloutFile(readFileSync(FILE, 'utf8'), FILE)[0]);
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

/** Per target id: the ids it sees before itself, its position id and its predictor. */
function seen(seq: PlanSequence) {
  return Object.fromEntries(
    seq.targets.map((t) => {
      const keys = visibleKeys(seq.end, t.index);
      return [t.id, { prefix: keys.slice(0, -1).map((k) => seq.ids[k]), position: seq.positions[t.index], predictor: t.predictor }];
    }),
  );
}

const LIVE: Record<number, number[]> = {
  2: [0, 1],
  3: [0, 1, 2],
  7: range(0, 7),
  8: range(0, 8),
  13: [0, 1, 9, 10, 7, 8, 11, 12],
  14: [0, 1, 9, 10, 7, 8, 11, 12, 13],
  15: [0, 1, 9, 10, 13, 14],
  16: [0, 1, 9, 10, 13, 14, 15],
};

describe('plans of the worked example', () => {
  it('naive-compressed scores the four surviving targets on their final prefixes', () => {
    const [seq] = buildPlan(tree, 'naive-compressed').sequences;
    expect(Array.from(seq.ids)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
    expect(Array.from(seq.tokens)).toEqual([10, 11, 40, 41, 24, 25, 26, 27]);
    expect(Array.from(seq.positions)).toEqual(range(0, 8));
    expect(Array.from(seq.end)).toEqual(Array(8).fill(8));
    expect(seq.targets).toEqual([
      { index: 4, id: 13, token: 24, predictor: 3, rolloutLogprob: -0.75 },
      { index: 5, id: 14, token: 25, predictor: 4, rolloutLogprob: -1 },
      { index: 6, id: 15, token: 26, predictor: 5, rolloutLogprob: -0.5 },
      { index: 7, id: 16, token: 27, predictor: 6, rolloutLogprob: -0.125 },
    ]);
    expect(seen(seq)).toEqual({
      13: { prefix: [0, 1, 9, 10], position: 4, predictor: 3 },
      14: { prefix: [0, 1, 9, 10, 13], position: 5, predictor: 4 },
      15: { prefix: [0, 1, 9, 10, 13, 14], position: 6, predictor: 5 },
      16: { prefix: [0, 1, 9, 10, 13, 14, 15], position: 7, predictor: 6 },
    });
  });

  it('naive-full scores all eight targets on the physical tape', () => {
    const [seq] = buildPlan(tree, 'naive-full').sequences;
    expect(Array.from(seq.ids)).toEqual(range(0, 17));
    expect(seq.targets.map((t) => [t.index, t.id, t.predictor])).toEqual([2, 3, 7, 8, 13, 14, 15, 16].map((id) => [id, id, id - 1]));
    for (const [id, s] of Object.entries(seen(seq))) expect(s.prefix).toEqual(range(0, Number(id)));
  });

  it('logit-tree runs one causal sequence per branch, each target in its own branch', () => {
    const { sequences } = buildPlan(tree, 'logit-tree');
    expect(sequences.map((s) => Array.from(s.ids))).toEqual([range(0, 9), [0, 1, 9, 10, 7, 8, 11, 12, 13, 14], [0, 1, 9, 10, 13, 14, 15, 16]]);
    expect(sequences.map((s) => s.targets.map((t) => [t.id, t.index]))).toEqual([
      [
        [2, 2],
        [3, 3],
        [7, 7],
        [8, 8],
      ],
      [
        [13, 8],
        [14, 9],
      ],
      [
        [15, 6],
        [16, 7],
      ],
    ]);
    for (const seq of sequences) {
      for (const [id, s] of Object.entries(seen(seq))) {
        expect(s.prefix).toEqual(LIVE[Number(id)]);
        expect(s.position).toBe(LIVE[Number(id)].length);
      }
    }
  });

  it('packed-4d scores every target once, on its live prefix, with depth positions', () => {
    const { sequences } = buildPlan(tree, 'packed-4d');
    expect(sequences).toHaveLength(1);
    const [seq] = sequences;
    expect(Array.from(seq.ids)).toEqual([...range(0, 9), 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16]);
    expect(Array.from(seq.positions)).toEqual([...range(0, 9), ...range(2, 10), ...range(4, 8)]);
    expect(seq.targets.map((t) => [t.id, t.index, t.predictor])).toEqual([
      [2, 2, 1],
      [3, 3, 2],
      [7, 7, 6],
      [8, 8, 7],
      [13, 15, 14],
      [14, 16, 15],
      [15, 19, 18],
      [16, 20, 19],
    ]);
    for (const [id, s] of Object.entries(seen(seq))) {
      expect(s.prefix).toEqual(LIVE[Number(id)]);
      expect(s.position).toBe(LIVE[Number(id)].length);
    }
  });

  it('sdcc pairs the two diverging leaves: student on the final prefix, teacher on the live one', () => {
    // The packed teacher (the default, what the trainer runs): the final walk, then the trie paths
    // of the diverging leaves that it does not share (b0's tail 2..8 holds none), in one tree.
    const plan = buildPlan(tree, 'sdcc');
    expect(Array.from(plan.student.ids)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
    expect(plan.teachers.map((s) => Array.from(s.ids))).toEqual([[0, 1, 9, 10, 13, 14, 15, 16, 7, 8, 11, 12, 13, 14]]);
    expect(Array.from(plan.teachers[0].positions)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9]);
    expect(plan.sharedRows).toBe(8);
    expect(planNeeds(plan).rows).toBe(14); // 8 student rows, 6 teacher-only rows
    expect(plan.pairs).toEqual([
      { id: 13, studentIndex: 4, teacher: 0, teacherIndex: 12 },
      { id: 14, studentIndex: 5, teacher: 0, teacherIndex: 13 },
    ]);
    const teacher = seen(plan.teachers[0]);
    expect(teacher[13].prefix).toEqual(LIVE[13]);
    expect(teacher[14].prefix).toEqual(LIVE[14]);
    expect(seen(plan.student)[13].prefix).toEqual([0, 1, 9, 10]);

    // Branch teachers: one causal sequence per branch holding a leaf, cut after its last leaf.
    const branches = buildPlan(tree, 'sdcc', { sdccTeacher: 'logit-tree' });
    expect(branches.teachers.map((s) => Array.from(s.ids))).toEqual([[0, 1, 9, 10, 7, 8, 11, 12, 13, 14]]);
    expect(Array.from(branches.teachers[0].positions)).toEqual(range(0, 10));
    expect(branches.sharedRows).toBe(0);
    expect(planNeeds(branches).rows).toBe(18);
    expect(branches.pairs).toEqual([
      { id: 13, studentIndex: 4, teacher: 0, teacherIndex: 8 },
      { id: 14, studentIndex: 5, teacher: 0, teacherIndex: 9 },
    ]);
    expect(seen(branches.teachers[0])[14].prefix).toEqual(LIVE[14]);
  });

  it('prints plans as docs/cli.md JSON: plain arrays, targets as {index, id}', () => {
    const json = planToJson(buildPlan(tree, 'logit-tree'));
    expect(json).toMatchObject({ method: 'logit-tree' });
    if (!('sequences' in json)) throw new Error('expected sequences');
    expect(json.sequences[2]).toEqual({
      ids: [0, 1, 9, 10, 13, 14, 15, 16],
      positions: range(0, 8),
      end: Array(8).fill(8),
      targets: [
        { index: 6, id: 15 },
        { index: 7, id: 16 },
      ],
    });
    const sdcc = planToJson(buildPlan(tree, 'sdcc'));
    expect(Object.keys(sdcc)).toEqual(['method', 'student', 'teachers', 'sharedRows', 'pairs']);
  });
});
