import { describe, expect, it } from 'vitest';
import { expectClose } from '../testing/close';
import { createRng } from '../util/prng';
import { grpoAdvantages } from './grpo';

describe('grpoAdvantages', () => {
  it('normalises rewards within each group by its mean and population std (docs/objectives.md)', () => {
    // Group a: rewards 1, 0, 0.5 -> mean 0.5, std sqrt((0.25 + 0.25 + 0) / 3) = 0.408248...
    // Group b: rewards 3, 1 -> mean 2, std 1 -> +1, -1.
    const rewards = [1, 0, 3, 0.5, 1];
    const groups = ['a', 'a', 'b', 'a', 'b'];
    const a = 0.5 / Math.sqrt(0.5 / 3); // 1.2247448713915890
    expectClose(grpoAdvantages(rewards, groups), [a, -a, 1, 0, -1], { abs: 1e-15, label: 'advantages' });
    expect(a).toBeCloseTo(1.224744871391589, 14);
  });

  it('gives exactly 0 to a group of one, a group of equal rewards and a rollout without a group', () => {
    // 0.1 + 0.1 + 0.1 = 0.30000000000000004: the computed mean is not 0.1, the rule must not care.
    const adv = grpoAdvantages([0.7, 0.1, 0.1, 0.1, 5, -2], ['solo', 'same', 'same', 'same', null, undefined]);
    expect(Array.from(adv)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('gives every group of distinct rewards mean 0 and population std 1', () => {
    const rng = createRng(11);
    const n = 40;
    const rewards = Array.from({ length: n }, () => rng.normal() * 3 + 1);
    const groups = Array.from({ length: n }, () => `g${rng.int(5)}`);
    const adv = grpoAdvantages(rewards, groups);
    for (const g of new Set(groups)) {
      const values = groups.flatMap((h, i) => (h === g ? [adv[i]] : []));
      if (values.length < 2) continue;
      const mean = values.reduce((s, x) => s + x, 0) / values.length;
      const variance = values.reduce((s, x) => s + (x - mean) ** 2, 0) / values.length;
      expect(Math.abs(mean)).toBeLessThan(1e-14);
      expect(Math.abs(variance - 1)).toBeLessThan(1e-13);
    }
  });

  it('rejects mismatched lengths and non-finite rewards', () => {
    expect(() => grpoAdvantages([1, 2], ['a'])).toThrow('2 rewards but 1 groups');
    expect(() => grpoAdvantages([1, NaN], ['a', 'a'])).toThrow('reward NaN of rollout 1 is not finite');
  });
});

describe('grpoAdvantages at the ends of the float range', () => {
  it('gives finite advantages to rewards of ±1.7e308 (no overflow in the mean or the std)', () => {
    const adv = grpoAdvantages([1.7e308, -1.7e308, 1.7e308, -1.7e308], ['g', 'g', 'g', 'g']);
    expect(Array.from(adv)).toEqual([1, -1, 1, -1]);
    const tiny = grpoAdvantages([3e-320, 1e-320], ['g', 'g']);
    expect(Array.from(tiny)).toEqual([1, -1]);
  });

  it('gives the same bits as the unscaled formula for ordinary rewards', () => {
    const rewards = [0.3, 1, 0, 0.7, 2.5, -1.25];
    const plain = (values: number[]) => {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const std = Math.sqrt(values.reduce((a, r) => a + (r - mean) ** 2, 0) / values.length);
      return values.map((r) => (r - mean) / std);
    };
    expect(
      Array.from(
        grpoAdvantages(
          rewards,
          rewards.map(() => 'g'),
        ),
      ),
    ).toEqual(plain(rewards));
  });
});
