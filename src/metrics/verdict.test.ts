import { describe, expect, it } from 'vitest';
import { driftVerdict, FLOOR_FACTOR, MIN_FLOOR, type DriftFigures } from './verdict';

// `mw drift --ckpt public/models/demo.safetensors --rollouts public/examples/demo-compact.jsonl --json`, against the rollout's logprobs.
const demoCompactRollout: DriftFigures[] = [
  { method: 'naive-compressed', n: 104, logdiff: 2.217561255604994, mu: -2.217560656605801 },
  { method: 'naive-full', n: 188, logdiff: 0.00001113599883567983, mu: 0.000008860726991027085 },
  { method: 'logit-tree', n: 188, logdiff: 5.23180116430545e-7, mu: 4.1969474368665956e-7 },
  { method: 'packed-4d', n: 188, logdiff: 5.23180116430545e-7, mu: 4.1969474368665956e-7 },
];

const byMethod = (v: ReturnType<typeof driftVerdict>) => Object.fromEntries(v.methods.map((m) => [m.method, m]));

describe('driftVerdict', () => {
  it('reads the exact methods at the floor and signs what lies beyond it (demo model, compact)', () => {
    const v = driftVerdict(demoCompactRollout, 'rollout');
    expect(v.floor).toBe(MIN_FLOOR); // the exact methods' 5.2e-7 is below the smallest floor
    expect(v.foreign).toBe(false);
    const m = byMethod(v);
    expect(m['logit-tree'].state).toBe('at-floor');
    expect(m['packed-4d'].state).toBe('at-floor');
    expect(m['naive-compressed'].state).toBe('below');
    expect(m['naive-compressed'].floors).toBeCloseTo(2.217560656605801e6, 0);
    expect(m['naive-compressed'].meaning).toMatch(/time-travel leakage/);
    // 8.9e-6 is 8.9 floors: small, but three targets move beyond 1e-4, all upwards
    expect(m['naive-full'].state).toBe('above');
    expect(m['naive-full'].meaning).toMatch(/stale context/);
    expect(v.conclusion).toMatch(/^naive-compressed \(μ -2\.2, 2\.2e\+6 floors\) and naive-full \(μ 0\.0000089, 8\.9 floors\) move/);
  });

  it('puts a round-off-sized μ at the floor, not above zero (issue 29: Naive-Full +7.1e-7 beside LogitTree +3.5e-7)', () => {
    const v = driftVerdict(
      [
        { method: 'naive-compressed', n: 26, logdiff: 2.1, mu: -2.1 },
        { method: 'naive-full', n: 47, logdiff: 9.0e-7, mu: 7.1e-7 },
        { method: 'logit-tree', n: 47, logdiff: 4.2e-7, mu: 3.5e-7 },
        { method: 'packed-4d', n: 47, logdiff: 4.2e-7, mu: 3.5e-7 },
      ],
      'rollout',
      { label: (m) => m.toUpperCase(), format: (x) => x.toFixed(2) },
    );
    const m = byMethod(v);
    expect(m['naive-full'].state).toBe('at-floor');
    expect(m['naive-full'].floors).toBeCloseTo(0.71, 6);
    expect(v.conclusion).toContain('NAIVE-FULL stays at the floor (0.00 nats');
  });

  it('explains a positive Naive-Compressed on expert data against the live prefix', () => {
    // The expert example (lookup-fold): logprobs 0, so the reference is the live score; LogitTree is it (0).
    const v = driftVerdict(
      [
        { method: 'naive-compressed', n: 30, logdiff: 0.95, mu: 0.88 },
        { method: 'naive-full', n: 60, logdiff: 0, mu: 0 },
        { method: 'logit-tree', n: 60, logdiff: 0, mu: 0 },
        { method: 'packed-4d', n: 60, logdiff: 0, mu: 0 },
      ],
      'live',
    );
    const m = byMethod(v);
    expect(v.floor).toBe(MIN_FLOOR);
    expect(m['naive-compressed'].state).toBe('above');
    expect(m['naive-compressed'].meaning).toMatch(/can only lower its score where the final walk lacks evidence/);
    expect(m['naive-compressed'].meaning).toMatch(/expert/);
    // The cause measured on the expert example (docs/metrics.md, "A positive Naive-Compressed on expert data").
    expect(m['naive-compressed'].meaning).toMatch(/a model trained on final walks \(under Naive-Compressed, or as SDCC’s student\)/);
    expect(m['naive-compressed'].meaning).not.toMatch(/^stale context/);
    expect(m['naive-full'].state).toBe('at-floor');
    expect(m['logit-tree'].state).toBe('at-floor');
  });

  it('signs both naive methods on the expert example, the exact ones at the floor (real figures)', () => {
    // `mw generate --policy expert --env lookup --editor fold --n 4 --seed 1`, then mw drift with the demo model:
    // against the live prefix (expert logprobs are 0, not a model's).
    const v = driftVerdict(
      [
        { method: 'naive-compressed', n: 88, logdiff: 2.809660082513636, mu: -0.15990461544557052 },
        { method: 'naive-full', n: 544, logdiff: 1.41110942994847, mu: 0.691880447899594 },
        { method: 'logit-tree', n: 544, logdiff: 0, mu: 0 },
        { method: 'packed-4d', n: 544, logdiff: 0, mu: 0 },
      ],
      'live',
    );
    expect(v.methods.map((m) => m.state)).toEqual(['below', 'above', 'at-floor', 'at-floor']);
    expect(v.methods[2].meaning).toMatch(/^exact \(Theorem 1\)/);
  });

  it('says the rollout logprobs are foreign when the exact methods are far from them (worked example)', () => {
    const v = driftVerdict(
      [
        { method: 'naive-compressed', n: 4, logdiff: 18.77207660675049, mu: -18.77207660675049 },
        { method: 'naive-full', n: 8, logdiff: 16.8047, mu: -16.8047 },
        { method: 'logit-tree', n: 8, logdiff: 18.2396, mu: -18.2396 },
        { method: 'packed-4d', n: 8, logdiff: 18.2396, mu: -18.2396 },
      ],
      'rollout',
    );
    expect(v.foreign).toBe(true);
    expect(v.floor).toBe(18.2396);
    // every |μ| is within 4 floors of the engine gap
    expect(v.methods.every((m) => m.state === 'at-floor')).toBe(true);
    expect(v.conclusion).toMatch(/another model or engine wrote them/);
    expect(v.methods[0].meaning).toMatch(/cannot be told apart/);
  });

  it('counts a method without figures as not scored, and everything at the floor as no effect', () => {
    const v = driftVerdict(
      [
        { method: 'naive-compressed', n: 0, logdiff: null, mu: null },
        { method: 'naive-full', n: 5, logdiff: 3e-6, mu: -FLOOR_FACTOR * 1e-6 },
        { method: 'logit-tree', n: 5, logdiff: 0, mu: 0 },
      ],
      'live',
    );
    expect(byMethod(v)['naive-compressed'].state).toBe('not-scored');
    expect(byMethod(v)['naive-full'].state).toBe('at-floor');
    expect(v.conclusion).toMatch(/^Every method is within the floor/);
  });
});
