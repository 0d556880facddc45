import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import type { MethodScores } from '../protocol/score';
import { driftOf, driftRow, expectedOf, liveVerdict, niceRange, OTHER_POLICY_LOGDIFF, reachNotes, viewJunctions } from './drift';
import { buildViewData } from './viewData';

const text = readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8');
const view = buildViewData(parseRolloutFile(text, 'worked-example.json')[0]);

// Scores as the worker returns them (made-up numbers: this tests the bookkeeping, not a model).
// Rows of V = 3 (logits: any shift of the log-probabilities): every target's live row is [1, 0, 0]; naive-full is surer of token 0 at 13.
const rowsOf = (n: number, special: Record<number, number[]> = {}) => Float32Array.from(Array.from({ length: n }, (_, i) => special[i] ?? [1, 0, 0]).flat());
const live: MethodScores = {
  method: 'logit-tree',
  ids: Int32Array.from([2, 3, 7, 8, 13, 14, 15, 16]),
  logprobs: Float64Array.from([-1, -2, -1, -2, -3, -1, -2, -1]),
  rows: rowsOf(8),
};
const scores: MethodScores[] = [
  { method: 'naive-compressed', ids: Int32Array.from([13, 14, 15, 16]), logprobs: Float64Array.from([-5, -2, -2, -1]), rows: rowsOf(4, { 0: [0, 1, 0] }) },
  { method: 'naive-full', ids: live.ids, logprobs: Float64Array.from([-1, -2, -1, -2, -2.5, -0.5, -1.5, -1]), rows: rowsOf(8, { 4: [3, 0, 0] }) },
  live,
  { method: 'packed-4d', error: 'needs 600 positions, the model has 512' },
];

describe('drift of each method against the live-prefix score', () => {
  const drift = driftOf(view, scores);
  const by = Object.fromEntries(drift.methods.map((m) => [m.method, m]));
  it('takes LogitTree as the exact live-prefix score', () => {
    expect(drift.live.get(13)).toBe(-3);
    expect(by['logit-tree'].vsLive).toMatchObject({ n: 8, logdiff: 0, mu: 0 });
  });
  it('differences per target, logdiff and μ', () => {
    expect(by['naive-compressed'].delta.get(13)).toBe(-2);
    expect(by['naive-compressed'].delta.has(2)).toBe(false); // dropped: not scored
    expect(by['naive-compressed'].vsLive).toMatchObject({ n: 4, logdiff: 0.75, mu: -0.75 });
    expect(by['naive-full'].vsLive.mu).toBeCloseTo((0.5 + 0.5 + 0.5) / 8, 12);
  });
  it('against the rollout logprobs where the file has them', () => {
    // Rollout logprobs of 13..16: -0.75, -1, -0.5, -0.125.
    expect(by['naive-compressed'].vsRollout!.logdiff).toBeCloseTo((4.25 + 1 + 1.5 + 0.875) / 4, 12);
  });
  it('keeps a method that could not score with its reason, and one shared histogram range', () => {
    expect(by['packed-4d'].error).toMatch(/positions/);
    expect(by['packed-4d'].vsLive.n).toBe(0);
    // Moved values 2, 1, 0.5, 0.5, 0.5: the shared axis holds them; each method's own axis its own.
    expect(drift.range).toBe(2);
    expect(Array.from(by['naive-compressed'].deltas)).toEqual([-2, -1, 0, 0]);
    expect(by['naive-full'].ownRange).toBe(0.5);
    expect(by['logit-tree'].ownRange).toBe(1e-3);
  });
  it("SDCC from the same pass: the student's scores are Naive-Compressed's, KL(live ‖ final) at each diverging leaf", () => {
    const logSoftmax = (row: number[]) => row.map((v) => v - Math.log(row.reduce((a, x) => a + Math.exp(x), 0)));
    const lt = logSoftmax([1, 0, 0]);
    const ls = logSoftmax([0, 1, 0]);
    const kl13 = lt.reduce((a, l, v) => a + Math.exp(l) * (l - ls[v]), 0);
    expect(drift.sdcc.error).toBeNull();
    expect(drift.sdcc.n).toBe(4);
    expect([...drift.sdcc.kl.keys()]).toEqual([13, 14]); // the worked example's diverging leaves
    expect(drift.sdcc.kl.get(13)).toBeCloseTo(kl13, 6);
    expect(drift.sdcc.kl.get(14)).toBeCloseTo(0, 6);
    expect(drift.sdcc.meanKl).toBeCloseTo(kl13 / 2, 6);
    const withoutStudent = driftOf(
      view,
      scores.filter((s) => s.method !== 'naive-compressed'),
    );
    expect(withoutStudent.sdcc.error).toMatch(/Naive-Compressed/);
  });
  it('the drift a sampler should expect, per method, from the log-probability rows', () => {
    const logp = (row: number[], t: number) => row[t] - Math.log(row.reduce((a, v) => a + Math.exp(v), 0));
    // Greedy: the live mode (token 0) at every target; only target 13 moves under the naive methods.
    const greedy = expectedOf(drift, { temperature: 0 });
    expect(greedy.get('logit-tree')).toEqual({ n: 8, mu: 0, sign: { diverging: 0, negativeShare: null } });
    expect(greedy.get('naive-full')!.mu).toBeCloseTo((logp([3, 0, 0], 0) - logp([1, 0, 0], 0)) / 8, 6);
    expect(greedy.get('naive-full')!.sign).toEqual({ diverging: 1, negativeShare: 0 });
    expect(greedy.get('naive-compressed')!.mu).toBeCloseTo((logp([0, 1, 0], 0) - logp([1, 0, 0], 0)) / 4, 6);
    expect(greedy.get('packed-4d')).toBeNull();
    // At temperature 1 every diverging target expects a loss: −KL(p ‖ q).
    expect(expectedOf(drift, { temperature: 1 }).get('naive-full')!.sign).toEqual({ diverging: 1, negativeShare: 1 });
  });

  it('with rows kept for the diverging leaves only (a large vocabulary): the same KL_SDCC, no expected drift', () => {
    // The worker keeps LogitTree's and Naive-Compressed's rows at the leaves 13 and 14, none elsewhere.
    const leavesOnly = scores.map((s): MethodScores => {
      if ('error' in s) return s;
      const keep = s.method === 'logit-tree' || s.method === 'naive-compressed' ? [13, 14] : [];
      const V = s.rows.length / s.ids.length;
      const rows = Float32Array.from(keep.flatMap((id) => Array.from(s.rows.subarray(s.ids.indexOf(id) * V, (s.ids.indexOf(id) + 1) * V))));
      return { ...s, rows, rowIds: Int32Array.from(keep) };
    });
    const partial = driftOf(view, leavesOnly);
    expect(partial.methods.map((m) => [m.method, m.rowsComplete])).toEqual([
      ['naive-compressed', false],
      ['naive-full', false],
      ['logit-tree', false],
      ['packed-4d', false],
    ]);
    expect(partial.sdcc.meanKl).toBe(drift.sdcc.meanKl);
    expect(partial.methods.map((m) => m.vsLive)).toEqual(drift.methods.map((m) => m.vsLive));
    expect([...expectedOf(partial, { temperature: 1 }).values()]).toEqual([null, null, null, null]);
    expect(drift.methods.filter((m) => !m.error).every((m) => m.rowsComplete)).toBe(true);
  });

  it("tells whose logprobs the rollout records: hand-made, a scripted policy's 0, none, or this model's", () => {
    // The worked example's are hand-made: the exact score differs from them by 7.375 / 8 nats on average.
    expect(drift.logprobs).toEqual({ kind: 'other', n: 8, logdiff: 7.375 / 8 });
    const withLogprobs = (value: (id: number) => number) => {
      const logprobs = Float64Array.from(view.rollout.logprobs, () => NaN);
      for (const t of view.rollout.targets) logprobs[t] = value(t);
      return driftOf({ rollout: { ...view.rollout, logprobs }, tree: view.tree }, scores);
    };
    expect(withLogprobs(() => 0).logprobs).toEqual({ kind: 'zeros', n: 8 });
    expect(withLogprobs(() => NaN).logprobs).toEqual({ kind: 'missing' });
    const own = withLogprobs((t) => drift.live.get(t)! + 0.5 * OTHER_POLICY_LOGDIFF);
    expect(own.logprobs.kind).toBe('model');
    // The table row compares with the rollout only when its logprobs are the model's own.
    expect(driftRow(own).reference).toBe('rollout');
    expect(driftRow(own).methods['logit-tree']!.logdiff).toBeCloseTo(0.05, 12);
    expect(driftRow(own).methods['logit-tree']!.mu).toBeCloseTo(-0.05, 12);
    expect(driftRow(drift)).toMatchObject({ reference: 'live', methods: { 'naive-compressed': { logdiff: 0.75, mu: -0.75 }, 'packed-4d': null } });
    expect(driftRow(drift).klSdcc).toBeCloseTo(drift.sdcc.meanKl, 12);
    // With its tree, the row carries its drift per edit summed per editor (the worked example names none: unknown).
    const [editors] = driftRow(drift, view.tree).editors!;
    expect(editors).toMatchObject({ editor: 'unknown', rollouts: 1, edits: 2, targets: 10 });
    // naive-compressed: edit 1's 13, 14 (−2, −1) and edit 2's 13, 14, 15, 16 (−2, −1, 0, 0).
    expect(editors.methods['naive-compressed']).toMatchObject({ n: 6, sum: -6, abs: 6, mu: -1 });
    expect(driftRow(drift).editors).toBeUndefined();
  });

  it('refuses without the live-prefix score', () => {
    expect(() => driftOf(view, [{ method: 'logit-tree', error: 'needs 99 positions, the model has 8' }])).toThrow(/LogitTree needs 99 positions/);
  });
});

describe('niceRange', () => {
  it('rounds up to 1, 2 or 5 times a power of ten', () => {
    expect(niceRange(0)).toBe(1e-3);
    expect(niceRange(1.3)).toBe(2);
    expect(niceRange(2)).toBe(2);
    expect(niceRange(7.2)).toBe(10);
    expect(niceRange(0.031)).toBeCloseTo(0.05, 12);
  });
});

describe('the panel’s verdict and drift per edit', () => {
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
  const moved = (d: Record<number, number>, ids = [...live.keys()]) => new Map(ids.map((id) => [id, live.get(id)! + (d[id] ?? 0)]));
  const methods = [
    { method: 'naive-compressed', logprob: moved({ 13: 0.9, 14: 0.86 }, [13, 14, 15, 16]) },
    { method: 'naive-full', logprob: moved({ 15: 7.1e-7 * 4, 16: 0 }) },
    { method: 'logit-tree', logprob: live },
    { method: 'packed-4d', logprob: moved({ 13: 3.5e-7 }) },
  ].map(({ method, logprob }) => {
    const d = [...logprob].map(([id, l]) => l - live.get(id)!);
    return {
      method,
      error: null,
      logprob,
      vsLive: { n: d.length, logdiff: d.reduce((s, x) => s + Math.abs(x), 0) / d.length, mu: d.reduce((s, x) => s + x, 0) / d.length, negativeShare: 0 },
    };
  }) as unknown as Parameters<typeof liveVerdict>[0]['methods'];

  it('reads a positive Naive-Compressed as leakage’s other side, round-off as the floor', () => {
    const v = liveVerdict({ methods });
    expect(v.methods.map((m) => m.state)).toEqual(['above', 'at-floor', 'at-floor', 'at-floor']);
    expect(v.methods[0].meaning).toMatch(/can only lower its score where the final walk lacks evidence/);
    expect(v.conclusion).toMatch(/^Naive-Compressed \(μ \+0\.440, 4\.4e5 floors\) moves .*; Naive-Full stays at the floor \(1\.0e-6 nats/);
  });

  it('gives the panel’s junctions from the same scores mw drift uses', () => {
    const junctions = viewJunctions(view.tree, { methods, live }, (t) => `#${t}`);
    expect(junctions.map((j) => j.edit)).toEqual([1, 2]); // edit 1's Σ|d| = 1.76 (13, 14) ties edit 2's, file order breaks it
    expect(junctions[0].methods['naive-compressed']).toMatchObject({ n: 2 });
    expect(junctions[0].methods['naive-compressed'].mu).toBeCloseTo(0.88, 12);
    expect(junctions[1].methods['naive-full'].largest.map((t) => t.id)).toEqual([15]);
    expect(junctions[0].methods['logit-tree']).toMatchObject({ n: 5, mu: 0, largest: [] });
  });
});

describe('how far the model reached (the panel’s reach lines)', () => {
  // A model of 16 positions: naive-full reaches ids 0 .. 15 of the tape (16 is out of reach), the others every target.
  const reached: MethodScores[] = [
    scores[0],
    { method: 'naive-full', ids: live.ids.subarray(0, 7), logprobs: Float64Array.from([-1, -2, -1, -2, -2.5, -0.5, -1.5]), rows: rowsOf(7), outOfReach: 1 },
    live,
    { ...live, method: 'packed-4d' },
  ];
  it('counts the targets each method could not score, and says so in one line per method', () => {
    const drift = driftOf(view, reached, { positions: 16, window: null });
    expect(drift.methods.map((m) => m.outOfReach)).toEqual([0, 1, 0, 0]);
    expect(drift.reach).toEqual({
      positions: 16,
      window: null,
      methods: {
        'naive-compressed': { targets: 4, outOfReach: 0, windowed: 0 },
        'naive-full': { targets: 8, outOfReach: 1, windowed: 0 },
        'logit-tree': { targets: 8, outOfReach: 0, windowed: 0 },
        'packed-4d': { targets: 8, outOfReach: 0, windowed: 0 },
      },
    });
    expect(reachNotes(drift)).toEqual(['Naive-Full: 1 of 8 targets need more than 16 positions (not scored; a window scores them)']);
    // The drift is over the targets scored: naive-full's 7.
    expect(drift.methods[1].vsLive.n).toBe(7);
    expect(reachNotes(driftOf(view, scores))).toEqual([]);
  });
  it('says the drift is windowed, with how many targets each method scored on a window', () => {
    const windowed = reached.map((s) => ('error' in s ? s : { ...s, outOfReach: undefined, windowed: s.method === 'naive-compressed' ? 1 : 3 }));
    const drift = driftOf(view, windowed, { positions: 16, window: 6 });
    expect(reachNotes(drift)).toEqual([
      'windowed: the drift is windowed; a target whose context exceeds 5 tokens is scored on its last 5, at positions from 0 ' +
        '(Naive-Compressed 1 of 4, Naive-Full 3 of 7, LogitTree 3 of 8, Packed 4D mask 3 of 8)',
    ]);
  });
});
