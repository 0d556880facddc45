import { describe, expect, it } from 'vitest';
import { binValues, describeBin, driftBins, niceRange, tailRange } from './histogram';

const fmt = (x: number) => x.toFixed(2);

describe('drift histograms', () => {
  it('counts every value once: inside the axis in its bin, beyond it in an overflow bin', () => {
    const bins = driftBins([-50, -1.2, -0.9, -0.05, 0, 1e-7, 0.3, 0.99, 1, 7], 1, 5);
    expect(bins.edges.map((e) => +e.toFixed(10))).toEqual([-1, -0.6, -0.2, 0.2, 0.6, 1]);
    expect(bins.counts).toEqual([1, 0, 3, 1, 2]);
    expect(bins.below).toBe(2);
    expect(bins.above).toBe(1);
    expect(bins.below + bins.above + bins.counts.reduce((a, b) => a + b, 0)).toBe(bins.total);
  });

  it('puts 0 in the middle of a bin (odd bin count), so round-off around it is one bar', () => {
    const bins = driftBins([-3e-7, 0, 2e-7, 5e-7], 1e-3);
    expect(bins.counts.length % 2).toBe(1);
    expect(bins.counts[(bins.counts.length - 1) / 2]).toBe(4);
  });

  it('one-sided axis for KL values', () => {
    const bins = binValues([0, 0.1, 0.25, 0.5, 3], 0, 0.5, 2);
    expect(bins.counts).toEqual([2, 2]);
    expect(bins.above).toBe(1);
    expect(bins.below).toBe(0);
  });

  it('chooses the axis from the moved values, clipping the outer 2 % into the overflow bins', () => {
    // 99 targets moved by up to 0.3 nats and one by 50: the axis is ±0.5, not ±50.
    const values = Array.from({ length: 99 }, (_, i) => -0.3 + (0.6 * i) / 98);
    values.push(-50);
    expect(tailRange([values])).toBe(0.5);
    // Round-off alone (|v| < 1e-4) never widens the axis past its floor.
    expect(tailRange([[1e-6, -3e-5, 0]])).toBe(1e-3);
    expect(tailRange([])).toBe(1e-3);
    // Pooled over methods.
    expect(tailRange([[0.01, -0.02], [3.5]])).toBe(5);
  });

  it('describes the bin under the pointer in words', () => {
    const bins = driftBins([-2, 0.1, 0.15], 1, 5);
    expect(describeBin(bins, { kind: 'bin', index: 2 }, fmt)).toBe('2 targets between -0.20 and 0.20 nats');
    expect(describeBin(bins, { kind: 'below' }, fmt)).toBe('1 target below -1.00 nats');
    expect(describeBin(bins, { kind: 'above' }, fmt)).toBe('0 targets above 1.00 nats');
  });

  it('niceRange: 1, 2 or 5 times a power of ten', () => {
    expect([0, 1.3, 2, 7.2, 0.031, 50].map(niceRange)).toEqual([1e-3, 2, 2, 10, 0.05, 50]);
  });
});
