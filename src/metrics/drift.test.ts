import { describe, expect, it } from 'vitest';
import { driftHistogram, signedDifferences, summarizeDrift } from './drift';

describe('drift metrics', () => {
  it('computes logdiff, signed drift and the sign split over shared targets', () => {
    const method = new Map([
      [13, -2.0],
      [14, -1.0],
      [15, -0.5],
      [99, -3],
    ]);
    const reference = new Map([
      [13, -1.5],
      [14, -1.25],
      [15, -0.5],
    ]);
    const d = signedDifferences(method, reference);
    expect(Array.from(d)).toEqual([-0.5, 0.25, 0]);
    const s = summarizeDrift(d);
    expect(s.n).toBe(3);
    expect(s.logdiff).toBeCloseTo(0.25, 12);
    expect(s.mu).toBeCloseTo(-0.25 / 3, 12);
    expect(s.negativeShare).toBe(0.5);
  });

  it('is zero for an empty comparison', () => {
    expect(summarizeDrift([])).toEqual({ n: 0, logdiff: 0, mu: 0, negativeShare: 0 });
  });

  it('bins signed differences symmetrically, clamping the ends', () => {
    const h = driftHistogram([-1, -0.1, 0.1, 0.9, 5], 4, 1);
    expect(h.edges).toEqual([-1, -0.5, 0, 0.5, 1]);
    expect(h.counts).toEqual([1, 1, 1, 2]);
  });
});
