import { describe, expect, it } from 'vitest';
import { presetConfig } from '../model/config';
import { parameterLayout } from '../model/params';
import { expectClose } from '../testing/close';
import { type AdamwHyper, decayBit, decayMask, lrAt } from './adamw';
import { type AdamwReferenceState, adamwReferenceStep } from '../gpu/kernels/adamw/adamw.reference';

describe('lrAt', () => {
  const schedule = { peak: 1e-3, warmup: 10, total: 110, min: 1e-4 };
  it('warms up linearly, then follows a half cosine from peak to min, then stays at min', () => {
    expect(lrAt(0, schedule)).toBeCloseTo(1e-4, 18); // peak · 1/10
    expect(lrAt(4, schedule)).toBeCloseTo(5e-4, 18);
    expect(lrAt(9, schedule)).toBeCloseTo(1e-3, 18);
    expect(lrAt(10, schedule)).toBeCloseTo(1e-3, 18); // cos(0)
    expect(lrAt(60, schedule)).toBeCloseTo(5.5e-4, 18); // halfway: min + ½ (peak − min)
    expect(lrAt(35, schedule)).toBeCloseTo(1e-4 + 0.5 * (1 + Math.cos(Math.PI / 4)) * 9e-4, 18);
    expect(lrAt(110, schedule)).toBe(1e-4);
    expect(lrAt(5000, schedule)).toBe(1e-4);
  });

  it('without warm-up starts at the peak; rejects nonsense', () => {
    expect(lrAt(0, { peak: 3e-4, warmup: 0, total: 100, min: 0 })).toBe(3e-4);
    expect(() => lrAt(-1, schedule)).toThrow('non-negative integer');
    expect(() => lrAt(0, { ...schedule, min: 2e-3 })).toThrow('0 ≤ min ≤ peak');
    expect(() => lrAt(0, { ...schedule, total: 5 })).toThrow('0 ≤ warmup ≤ total');
  });
});

describe('decayMask', () => {
  it('decays the 2-D tensors (matmul weights, wte, wpe) and nothing else, padding included', () => {
    const layout = parameterLayout(presetConfig('tiny'));
    const mask = decayMask(layout);
    let decayed = 0;
    for (let i = 0; i < layout.totalSize; i++) decayed += decayBit(mask, i);
    const want = layout.entries.filter((e) => e.shape.length === 2).reduce((n, e) => n + e.size, 0);
    expect(decayed).toBe(want);
    const at = (name: string, k: number) => decayBit(mask, layout.byName.get(name)!.offset + k);
    expect(at('wte.weight', 0)).toBe(1);
    expect(at('wpe.weight', 17)).toBe(1);
    expect(at('h.1.mlp.c_fc.weight', 100)).toBe(1);
    expect(at('h.0.ln_1.weight', 0)).toBe(0);
    expect(at('h.0.attn.c_attn.bias', 5)).toBe(0);
    expect(at('ln_f.bias', 31)).toBe(0);
    // wte has 272·32 floats: a multiple of 64, so take the padding after ln_f.weight (32 floats, padded to 64).
    const lnf = layout.byName.get('ln_f.weight')!;
    expect(decayBit(mask, lnf.offset + lnf.size)).toBe(0);
  });
});

function state(params: number[]): AdamwReferenceState {
  const n = params.length;
  return { params: Float64Array.from(params), m: new Float64Array(n), v: new Float64Array(n), step: 0 };
}

describe('adamwReferenceStep', () => {
  const hyper: AdamwHyper = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, clip: 0 };
  const mask = Uint32Array.of(0b01); // float 0 decays, float 1 does not

  it('moves each parameter by lr·sign(g) on the first step, plus decoupled decay where masked', () => {
    const s = state([0.5, 0.5]);
    const report = adamwReferenceStep(s, [0.2, -0.03], mask, hyper, 0.01);
    expect(report).toEqual({ normSq: expect.closeTo(0.0409, 15), nonFinite: 0, scale: 1, applied: true });
    // First step: m̂ = g, v̂ = g², so the Adam direction is g / (|g| + eps) ≈ sign(g).
    expect(s.params[0]).toBeCloseTo(0.5 - 0.01 * (0.2 / (0.2 + 1e-8) + 0.1 * 0.5), 15);
    expect(s.params[1]).toBeCloseTo(0.5 + 0.01 * (0.03 / (0.03 + 1e-8)), 15);
    expect(s.step).toBe(1);
    expectClose(s.m, [0.1 * 0.2, 0.1 * -0.03], { abs: 1e-17, label: 'm' });
    expectClose(s.v, [0.05 * 0.04, 0.05 * 0.0009], { abs: 1e-17, label: 'v' });
  });

  it('clips the global norm to `clip` when it is larger, and only then', () => {
    const over = state([0, 0]);
    const r1 = adamwReferenceStep(over, [3, 4], mask, { ...hyper, clip: 1 }, 0.01); // ‖g‖ = 5
    expect(r1.scale).toBeCloseTo(0.2, 15);
    expect(over.m[0]).toBeCloseTo(0.1 * 3 * 0.2, 15);
    const under = state([0, 0]);
    expect(adamwReferenceStep(under, [0.3, 0.4], mask, { ...hyper, clip: 1 }, 0.01).scale).toBe(1);
    expect(under.m[1]).toBeCloseTo(0.1 * 0.4, 15);
  });

  it('applies nothing when a gradient is NaN or ±Inf, or Σ g² overflows float32', () => {
    for (const g of [
      [NaN, 1],
      [1, Infinity],
      [-Infinity, 0],
      [2e19, 2e19],
    ]) {
      const s = state([0.25, -0.75]);
      s.m[0] = 0.1;
      const report = adamwReferenceStep(s, g, mask, hyper, 0.01);
      expect(report.applied).toBe(false);
      expect(report.nonFinite).toBe(g.filter((x) => !Number.isFinite(x)).length);
      expect(Array.from(s.params)).toEqual([0.25, -0.75]);
      expect(Array.from(s.m)).toEqual([0.1, 0]);
      expect(Array.from(s.v)).toEqual([0, 0]);
      expect(s.step).toBe(0);
    }
  });
});
