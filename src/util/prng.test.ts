import { describe, expect, it } from 'vitest';
import { createRng, createRngFromState, exactLog } from './prng';

describe('createRng', () => {
  it('xoshiro128** core reproduces the reference C output from state {1, 2, 3, 4}', () => {
    const rng = createRngFromState([1, 2, 3, 4]);
    expect(Array.from({ length: 6 }, () => rng.nextU32())).toEqual([11520, 0, 5927040, 70819200, 2031721883, 1637235492]);
  });

  it('seed 42 gives the stream an independent Python transcription of splitmix32 + xoshiro128** gives', () => {
    const rng = createRng(42);
    expect(Array.from({ length: 4 }, () => rng.nextU32())).toEqual([2837322924, 544945897, 479756282, 3500138142]);
  });

  it('is deterministic per seed and differs across seeds (including seeds 2^32 apart)', () => {
    const draw = (seed: number) => {
      const r = createRng(seed);
      return Array.from({ length: 8 }, () => r.nextU32());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    expect(draw(7)).not.toEqual(draw(7 + 2 ** 32));
    expect(draw(-1)).not.toEqual(draw(2 ** 32 - 1));
    expect(() => createRng(Number.NaN)).toThrow('seed must be a finite number');
  });

  it('next() is uniform on [0, 1): mean 1/2, variance 1/12, never 1', () => {
    const rng = createRng(1);
    const n = 200_000;
    let sum = 0;
    let sq = 0;
    let max = 0;
    for (let i = 0; i < n; i++) {
      const u = rng.next();
      sum += u;
      sq += u * u;
      max = Math.max(max, u);
    }
    const mean = sum / n;
    // Standard error of the mean is sqrt(1/12 / n) ≈ 6.5e-4: 5 sigma.
    expect(Math.abs(mean - 0.5)).toBeLessThan(3.2e-3);
    expect(Math.abs(sq / n - mean * mean - 1 / 12)).toBeLessThan(2e-3);
    expect(max).toBeLessThan(1);
  });

  it('normal() has mean 0, variance 1 and the right tails', () => {
    const rng = createRng(2);
    const n = 200_000;
    let sum = 0;
    let sq = 0;
    let beyond2 = 0;
    for (let i = 0; i < n; i++) {
      const z = rng.normal();
      sum += z;
      sq += z * z;
      if (Math.abs(z) > 2) beyond2++;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.012); // 5 sigma of 1/sqrt(n)
    expect(Math.abs(sq / n - 1)).toBeLessThan(0.016); // 5 sigma of sqrt(2/n)
    // P(|Z| > 2) = 0.0455; binomial sigma ≈ 4.7e-4.
    expect(Math.abs(beyond2 / n - 0.0455)).toBeLessThan(2.4e-3);
  });

  it('int(n) stays in range and is uniform (chi-square over 7 bins)', () => {
    const rng = createRng(3);
    const counts = new Array(7).fill(0);
    const n = 70_000;
    for (let i = 0; i < n; i++) counts[rng.int(7)]++;
    const chi2 = counts.reduce((a, c) => a + (c - n / 7) ** 2 / (n / 7), 0);
    expect(chi2).toBeLessThan(22.5); // p = 0.001 at 6 degrees of freedom
    expect(rng.int(1)).toBe(0);
    const big = rng.int(2 ** 32);
    expect(big >= 0 && big < 2 ** 32 && Number.isInteger(big)).toBe(true);
    expect(() => rng.int(0)).toThrow('n must be an integer in [1, 2^32]');
    expect(() => rng.int(2.5)).toThrow('n must be an integer in [1, 2^32]');
  });
});

describe('exactLog', () => {
  it('agrees with Math.log to within 2 ulp-ish across many magnitudes', () => {
    const rng = createRng(4);
    let worst = 0;
    for (let i = 0; i < 10_000; i++) {
      const x = Math.exp((rng.next() - 0.5) * 200);
      const want = Math.log(x);
      const d = Math.abs(exactLog(x) - want) / Math.max(Math.abs(want), 1);
      worst = Math.max(worst, d);
    }
    expect(worst).toBeLessThan(5e-16);
    expect(exactLog(1)).toBe(0);
    expect(exactLog(2)).toBe(Math.LN2);
    expect(() => exactLog(0)).toThrow('positive finite');
  });
});
