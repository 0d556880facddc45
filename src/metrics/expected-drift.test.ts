import { describe, expect, it } from 'vitest';
import type { ScoredTarget } from './drift-report';
import { createRng } from '../util/prng';
import { expectedDrift, expectedTargetDrift, expectedTargetDrifts } from './expected-drift';

const softmax = (row: ArrayLike<number>) => {
  const max = Math.max(...Array.from(row));
  const e = Array.from(row, (v) => Math.exp(v - max));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
};

const kl = (p: number[], q: number[]) => p.reduce((s, pa, a) => s + (pa > 0 ? pa * Math.log(pa / q[a]) : 0), 0);

describe('expected signed drift', () => {
  const live = Float32Array.from([2.0, 1.0, 0.5, -1.0, -3.0]);
  // The replay context is surer of the live mode (token 0) than the live view.
  const surer = Float32Array.from([3.5, 1.0, 0.5, -1.0, -3.0]);

  it('is −KL(p ‖ q) at temperature 1: negative whatever q is, zero when q = p', () => {
    const rng = createRng(3);
    for (let trial = 0; trial < 50; trial++) {
      const q = Float32Array.from(live, () => 4 * rng.next() - 2);
      const e = expectedTargetDrift(live, q, { temperature: 1 });
      expect(e).toBeCloseTo(-kl(softmax(live), softmax(q)), 10);
      expect(e).toBeLessThan(0);
    }
    expect(expectedTargetDrift(live, surer, {})).toBeLessThan(0);
    expect(expectedTargetDrift(live, live, {})).toBe(0);
  });

  it('is log q(mode) − log p(mode) for greedy decoding, and turns positive for a sharp enough sampler', () => {
    const p = softmax(live);
    const q = softmax(surer);
    expect(expectedTargetDrift(live, surer, { temperature: 0 })).toBeCloseTo(Math.log(q[0] / p[0]), 10);
    expect(expectedTargetDrift(live, surer, { temperature: 0 })).toBeGreaterThan(0);
    // top-p 0.7 keeps tokens 0 and 1 (p = 0.61, 0.22), renormalised: still negative, the second token loses more than the mode gains.
    const s = [p[0], p[1]].map((v) => v / (p[0] + p[1]));
    const nucleus = s[0] * Math.log(q[0] / p[0]) + s[1] * Math.log(q[1] / p[1]);
    expect(expectedTargetDrift(live, surer, { topP: 0.7 })).toBeCloseTo(nucleus, 10);
    expect(nucleus).toBeLessThan(0);
    // Temperature 0.5 (s ∝ p²) puts 0.84 on the mode: positive.
    const z = p.reduce((a, v) => a + v * v, 0);
    const sharp = p.reduce((a, v, i) => a + ((v * v) / z) * Math.log(q[i] / v), 0);
    expect(expectedTargetDrift(live, surer, { temperature: 0.5 })).toBeCloseTo(sharp, 10);
    expect(sharp).toBeGreaterThan(0);
  });

  it('pools targets per method against the live rows of logit-tree', () => {
    const target = (id: number, logits: Float32Array): [number, ScoredTarget] => [id, { id, logprob: 0, row: logits }];
    const scores = {
      'logit-tree': [new Map([target(1, live), target(2, live)])],
      'naive-full': [new Map([target(1, surer), target(2, live)])],
    } as never;
    const greedy = expectedDrift(scores, { temperature: 0, topK: 0, topP: 1 });
    const gain = Math.log(softmax(surer)[0] / softmax(live)[0]);
    expect(greedy.methods['logit-tree']).toEqual({ n: 2, mu: 0, sign: { diverging: 0, negativeShare: null } });
    expect(greedy.methods['naive-full']!.mu).toBeCloseTo(gain / 2, 10);
    expect(greedy.methods['naive-full']).toMatchObject({ n: 2, sign: { diverging: 1, negativeShare: 0 } });
    const full = expectedDrift(scores, { temperature: 1, topK: 0, topP: 1 });
    expect(full.methods['naive-full']).toMatchObject({ n: 2, sign: { diverging: 1, negativeShare: 1 } });
    expect(() => expectedDrift({ 'naive-full': scores['naive-full' as never] } as never, full.sampling)).toThrow('logit-tree');
  });

  it('gives each method its targets in its own rollout and target order, each as expectedTargetDrift gives it', () => {
    const rng = createRng(9);
    const row = () => Float32Array.from(live, () => 4 * rng.next() - 2);
    const target = (id: number, logits: Float32Array): [number, ScoredTarget] => [id, { id, logprob: 0, row: logits }];
    const liveRows = [new Map([5, 2, 9].map((id) => target(id, row()))), new Map([1, 3].map((id) => target(id, row())))];
    // Naive-compressed scores fewer targets, and in another order.
    const compressed = [new Map([9, 5].map((id) => target(id, row()))), new Map([target(3, row())])];
    const scores = { 'logit-tree': liveRows, 'naive-compressed': compressed } as never;
    for (const sampling of [
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.5, topK: 2, topP: 0.9 },
    ]) {
      const got = expectedTargetDrifts(scores, sampling);
      const want = (rows: typeof compressed) =>
        rows.flatMap((m, r) => [...m].map(([id, t]) => expectedTargetDrift(liveRows[r].get(id)!.row!, t.row!, sampling)));
      expect(got['logit-tree']).toEqual(want(liveRows));
      expect(got['naive-compressed']).toEqual(want(compressed));
      expect(got['naive-compressed']!.every((e) => e < 0 || sampling.temperature < 1)).toBe(true);
    }
    const rowless = { 'logit-tree': liveRows, 'naive-full': [new Map([[2, { id: 2, logprob: 0 }]]), new Map()] } as never;
    expect(() => expectedTargetDrifts(rowless, { temperature: 1, topK: 0, topP: 1 })).toThrow('target 2 of rollout 0 has no row under naive-full');
  });
});
