// A plan within the model's reach (reach.ts): the targets within P positions keep exactly the context they had,
// the others are counted; with a window every target is scored on the last window − 1 tokens of its own context
// and itself, at positions 0 .. window − 1, the same cut for every method.

import { describe, expect, it } from 'vitest';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { buildPlan } from './build';
import { reachPlan, windowProblem } from './reach';
import { SEQUENCE_METHODS, type PlanSequence, type SequenceMethod } from './types';
import { visibleKeys } from './visibility';

const tokens = (n: number, from: number) => Array.from({ length: n }, (_, i) => (from + 7 * i) % 256);
const act = (n: number, from: number) => ({ op: 'append', role: 'act', tokens: tokens(n, from), logprobs: tokens(n, 0).map((t) => -t / 256) });

/**
 * Branch 0 of 14 ids, an edit that keeps 9 (a summary of 2 inserted), then a final branch that grows to 25:
 * the tape is 30 ids. With P = 16 the targets 23 .. 29 of the final branch are out of reach of every method but
 * naive-full, which cannot reach 16 .. 29 (its positions are the ids).
 */
const LONG = validateRollout(
  {
    format: 'memorywalker.rollout/v1',
    id: 'long',
    vocab: 272,
    events: [
      { op: 'append', role: 'prompt', tokens: tokens(4, 1) },
      act(3, 2),
      { op: 'append', role: 'obs', tokens: tokens(4, 3) },
      act(3, 4),
      { op: 'edit', view: [{ keep: [0, 4] }, { insert: { role: 'summary', tokens: tokens(2, 5) } }, { keep: [11, 14] }] },
      act(4, 6),
      { op: 'append', role: 'obs', tokens: tokens(3, 7) },
      act(7, 8),
    ],
  },
  { file: 'long.json' },
);
const TREE = deriveTree(LONG);
const P = 16;

/** Per target id: the ids it sees before itself and its position, in one method's plan. */
function contexts(sequences: readonly PlanSequence[]): Map<number, { context: number[]; position: number }> {
  const out = new Map<number, { context: number[]; position: number }>();
  for (const s of sequences)
    for (const t of s.targets) {
      const keys = visibleKeys(s.end, t.index);
      expect(keys.at(-1)).toBe(t.index);
      expect(keys.at(-2)).toBe(t.predictor);
      out.set(t.id, { context: keys.slice(0, -1).map((k) => s.ids[k]), position: s.positions[t.index] });
    }
  return out;
}

const full = Object.fromEntries(SEQUENCE_METHODS.map((m) => [m, contexts(buildPlan(TREE, m).sequences)])) as Record<
  SequenceMethod,
  ReturnType<typeof contexts>
>;

describe('reachPlan', () => {
  it('keeps the targets within P positions with the context they had, and counts the others per method', () => {
    expect(LONG.length).toBe(30);
    const outOfReach: Record<string, number[]> = {};
    for (const method of SEQUENCE_METHODS) {
      const reached = reachPlan(buildPlan(TREE, method), { positions: P });
      expect(reached.windowed).toEqual([]);
      const got = contexts(reached.plan.sequences);
      for (const [id, c] of got) {
        expect(c, `${method} target ${id}`).toEqual(full[method].get(id));
        expect(c.position).toBeLessThan(P);
      }
      // Every target the method scores is either scored as before or out of reach, and those need P positions or more.
      expect([...got.keys(), ...reached.outOfReach].sort((a, b) => a - b)).toEqual([...full[method].keys()].sort((a, b) => a - b));
      for (const id of reached.outOfReach) expect(full[method].get(id)!.position).toBeGreaterThanOrEqual(P);
      for (const s of reached.plan.sequences) expect(Math.max(...s.positions)).toBeLessThan(P);
      outOfReach[method] = reached.outOfReach;
    }
    expect(outOfReach).toEqual({
      'naive-compressed': [23, 24, 25, 26, 27, 28, 29],
      'naive-full': [16, 17, 18, 19, 23, 24, 25, 26, 27, 28, 29],
      'logit-tree': [23, 24, 25, 26, 27, 28, 29],
      'packed-4d': [23, 24, 25, 26, 27, 28, 29],
    });
    // A plan that fits is left as it is.
    const fits = buildPlan(TREE, 'logit-tree');
    expect(reachPlan(fits, { positions: 30 }).plan).toEqual(fits);
  });

  it('with a window, scores every target on the last window − 1 tokens of its own context at positions from 0', () => {
    const window = 6;
    const windowed: Record<string, ReturnType<typeof contexts>> = {};
    for (const method of SEQUENCE_METHODS) {
      const reached = reachPlan(buildPlan(TREE, method), { positions: P, window });
      expect(reached.outOfReach).toEqual([]);
      const got = contexts(reached.plan.sequences);
      expect([...got.keys()].sort((a, b) => a - b)).toEqual([...full[method].keys()].sort((a, b) => a - b));
      for (const [id, c] of got) {
        const before = full[method].get(id)!;
        // The last window − 1 tokens of what the method would otherwise see; a context that fits is whole.
        expect(c.context, `${method} target ${id}`).toEqual(before.context.slice(-(window - 1)));
        expect(c.position, `${method} target ${id}`).toBe(Math.min(before.position, window - 1));
      }
      // Positions restart at 0 in every window: a windowed target's sequence is at positions 0 .. window − 1.
      for (const s of reached.plan.sequences.filter((s) => s.targets.some((t) => reached.windowed.includes(t.id)))) {
        expect(Array.from(s.positions)).toEqual([0, 1, 2, 3, 4, 5]);
      }
      expect(reached.windowed).toEqual([...full[method]].filter(([, c]) => c.position >= window).map(([id]) => id));
      windowed[method] = got;
    }
    // The exact methods see the same windows (each target's live prefix, cut the same way).
    expect(windowed['packed-4d']).toEqual(windowed['logit-tree']);
    // Target 27 (live position 22): naive-full sees the tape, naive-compressed the final walk, the exact methods its live prefix.
    expect(windowed['naive-full'].get(27)!.context).toEqual([22, 23, 24, 25, 26]);
    expect(windowed['logit-tree'].get(27)!.context).toEqual([22, 23, 24, 25, 26]);
    // Target 16, first of the segment edit 1 opens: the tape's last five ids, the live view's (the summary 14, 15 before the kept 11 .. 13).
    expect(windowed['naive-full'].get(16)!.context).toEqual([11, 12, 13, 14, 15]);
    expect(windowed['logit-tree'].get(16)!.context).toEqual([14, 15, 11, 12, 13]);
    expect(windowed['naive-compressed'].get(16)!.context).toEqual([14, 15, 11, 12, 13]);
  });

  it('refuses a window below 2 or beyond the model', () => {
    expect(windowProblem(6, 16)).toBeNull();
    expect(windowProblem(16, 16)).toBeNull();
    expect(windowProblem(1, 16)).toMatch(/at least 2/);
    expect(windowProblem(17, 16)).toBe("the window of 17 positions exceeds the model's 16");
  });
});
