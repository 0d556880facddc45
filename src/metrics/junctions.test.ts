import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { deriveTree } from '../tree/derive';
import { byCost, editorOf, editorSums, mergeEditorSums, rolloutJunctions } from './junctions';

const [rollout] = parseRolloutFile(readFileSync(new URL('../../fixtures/worked-example.json', import.meta.url), 'utf8'), 'worked-example.json');
const tree = deriveTree(rollout);

// Live scores of the 8 targets, and two naive methods that move some of them (nats).
const live = new Map([
  [2, -1.5],
  [3, -0.5],
  [7, -0.25],
  [8, -2],
  [13, -0.75],
  [14, -1],
  [15, -0.5],
  [16, -0.125],
]);
const shift = (moves: Record<number, number>, ids: number[] = [...live.keys()]) => new Map(ids.map((id) => [id, live.get(id)! + (moves[id] ?? 0)]));
const scores = {
  // the final walk: 2, 3, 7, 8 dropped; 13 and 14 (the diverging leaves) lose their evidence
  'naive-compressed': shift({ 13: -0.9, 14: -0.3 }, [13, 14, 15, 16]),
  // the tape: 13..16 see the evicted 2..6 again
  'naive-full': shift({ 13: 0.2, 14: 0.1, 15: 0.05, 16: -0.01 }),
  'logit-tree': live,
  'packed-4d': shift({ 13: 2.4e-7 }),
};

describe('rolloutJunctions', () => {
  const [first, second] = rolloutJunctions(tree, scores, { text: (t) => String.fromCharCode(97 + (t % 26)) });

  it('finds the targets each edit makes diverge on the worked example', () => {
    // Edit 1 (event 4) evicts the observation 2..6 and inserts a 2-token summary: it leaves 3, 7, 8 without
    // part of what they saw, and the segment it opens (13, 14) reads 2..6 again on the tape.
    expect(first).toMatchObject({ edit: 1, event: 4, evicted: 5, inserted: 2, targets: { before: [3, 7, 8], after: [13, 14] } });
    // Edit 2 (event 7) evicts 7, 8, 11, 12: in the live prefixes of 8, 13 and 14; it opens the segment of 15 and 16.
    expect(second).toMatchObject({ edit: 2, event: 7, evicted: 4, inserted: 0, targets: { before: [8, 13, 14], after: [15, 16] } });
  });

  it('averages each method over the targets it scores there, against the live score', () => {
    expect(first.methods['naive-compressed'].n).toBe(2); // 3, 7, 8 are dropped from the final walk
    expect(first.methods['naive-compressed'].mu).toBeCloseTo(-0.6, 12);
    expect(first.methods['naive-compressed'].logdiff).toBeCloseTo(0.6, 12);
    expect(first.methods['naive-full'].n).toBe(5);
    expect(first.methods['naive-full'].mu).toBeCloseTo(0.3 / 5, 12);
    expect(second.methods['naive-full'].mu).toBeCloseTo((0.2 + 0.1 + 0.05 - 0.01) / 5, 12);
    expect(second.methods['naive-full'].logdiff).toBeCloseTo((0.2 + 0.1 + 0.05 + 0.01) / 5, 12);
    expect(first.methods['logit-tree']).toMatchObject({ n: 5, mu: 0, logdiff: 0, largest: [] });
    expect(first.methods['packed-4d'].mu).toBeCloseTo(2.4e-7 / 5, 15);
    expect(first.cost).toBeCloseTo(1.2, 12); // naive-compressed's 0.9 + 0.3
    expect(second.cost).toBeCloseTo(1.2, 12);
  });

  it('names the largest single-target drifts with their text', () => {
    const [top, next] = first.methods['naive-compressed'].largest;
    expect(top.id).toBe(13);
    expect(top.drift).toBeCloseTo(-0.9, 12);
    expect(top.token).toBe(String.fromCharCode(97 + (rollout.tokens[13] % 26)));
    expect(top.context).toHaveLength(8); // the last 8 tokens of its live prefix 0,1,9,10,7,8,11,12
    expect(next.id).toBe(14);
    expect(second.methods['naive-full'].largest.map((t) => t.id)).toEqual([13, 14, 15]);
  });

  it('sorts by cost, the costliest first', () => {
    const cheap = { ...second, cost: 0.1 };
    expect(byCost([cheap, first]).map((j) => j.edit)).toEqual([1, 2]);
  });
});

describe('editorSums', () => {
  const withMeta = (meta: unknown, id: string) => ({ ...rollout, id, meta });
  const junctionsOf = (meta: unknown, id: string, rolloutIndex: number, s = scores) => rolloutJunctions(deriveTree(withMeta(meta, id)), s, { rolloutIndex });

  it('names the editor from the meta mw generate or an importer writes', () => {
    expect(editorOf({ meta: { env: 'lookup', editor: 'compact', budget: 120 } })).toBe('compact');
    expect(editorOf({ meta: { source: 'agent-session', import: {} } })).toBe('agent-session');
    expect(editorOf({ meta: { import: { format: 'turns' } } })).toBe('turns');
    expect(editorOf({ meta: { editor: 7 } })).toBe('unknown');
    expect(editorOf({})).toBe('unknown');
  });

  it('sums drift per edit per editor over a set, with the figures of the edits', () => {
    // Two compact rollouts (the second with naive-full's drift doubled) and one imported session.
    const doubled = { ...scores, 'naive-full': shift({ 13: 0.4, 14: 0.2, 15: 0.1, 16: -0.02 }) };
    const junctions = [
      ...junctionsOf({ editor: 'compact' }, 'a', 0),
      ...junctionsOf({ editor: 'compact' }, 'b', 1, doubled),
      ...junctionsOf({ source: 'agent-session' }, 'c', 2),
    ];
    expect(junctions.map((j) => j.editor)).toEqual(['compact', 'compact', 'compact', 'compact', 'agent-session', 'agent-session']);
    const [compact, session] = editorSums(junctions);
    expect(compact).toMatchObject({ editor: 'compact', rollouts: 2, edits: 4, targets: 20 });
    expect(session).toMatchObject({ editor: 'agent-session', rollouts: 1, edits: 2, targets: 10 });
    // naive-full per rollout: edit 1 moves 13, 14 (+0.2, +0.1) of its 5 targets, edit 2 moves 13 .. 16 (+0.2, +0.1, +0.05, −0.01).
    const once = 0.2 + 0.1 + (0.2 + 0.1 + 0.05 - 0.01);
    expect(session.methods['naive-full'].n).toBe(10);
    expect(session.methods['naive-full'].sum).toBeCloseTo(once, 12);
    expect(session.methods['naive-full'].mu!).toBeCloseTo(once / 10, 12);
    expect(session.methods['naive-full'].logdiff!).toBeCloseTo((once + 0.02) / 10, 12);
    expect(compact.methods['naive-full'].sum).toBeCloseTo(3 * once, 12);
    expect(compact.methods['naive-full'].abs).toBeCloseTo(3 * (once + 0.02), 12);
    // naive-compressed scores the final walk only: edit 1's 13, 14 (−0.9, −0.3), edit 2's 13 .. 16.
    expect(session.methods['naive-compressed']).toMatchObject({ n: 6 });
    expect(session.methods['naive-compressed'].sum).toBeCloseTo(2 * (-0.9 - 0.3), 12);
    expect(session.methods['logit-tree']).toEqual({ n: 10, sum: 0, abs: 0, mu: 0, logdiff: 0 });
    // The cost sums the edits' costs (each the largest Σ|Δ| of a method): the costliest editor first.
    expect(session.cost).toBeCloseTo(junctions[4].cost + junctions[5].cost, 12);
    expect(compact.cost).toBeCloseTo(
      junctions.slice(0, 4).reduce((s, j) => s + j.cost, 0),
      12,
    );
    expect(compact.cost).toBeGreaterThan(session.cost);
    // The app's data-set table sums its rows (one rollout each) the same way.
    const merged = mergeEditorSums([junctions.slice(0, 2), junctions.slice(2, 4), junctions.slice(4)].map(editorSums));
    expect(merged.map((e) => [e.editor, e.rollouts, e.edits, e.targets])).toEqual([
      ['compact', 2, 4, 20],
      ['agent-session', 1, 2, 10],
    ]);
    expect(merged[0].methods['naive-full'].sum).toBeCloseTo(3 * once, 12);
    expect(merged[0].methods['naive-full'].mu!).toBeCloseTo((3 * once) / 20, 12);
    expect(merged[0].cost).toBeCloseTo(compact.cost, 12);
  });
});
