import { describe, expect, it } from 'vitest';
import { formatEffect, formatMagnitude } from './number';

describe('formatEffect', () => {
  it('keeps the round-off figures of the demo model visible', () => {
    // Naive-Full's μ and LogitTree's round-off on the demo model (issue 29): never "0.0000".
    expect(formatEffect(7.1e-7)).toBe('+7.1e-7');
    expect(formatEffect(3.5e-7)).toBe('+3.5e-7');
    expect(formatEffect(-1.2e-5)).toBe('−1.2e-5');
    expect(formatEffect(4.9e-5)).toBe('+4.9e-5');
  });

  it('writes effects with significant digits and a sign', () => {
    expect(formatEffect(0.88)).toBe('+0.880');
    expect(formatEffect(-0.88)).toBe('−0.880');
    expect(formatEffect(-18.77207660675049)).toBe('−18.8');
    expect(formatEffect(0.0012345)).toBe('+0.00123');
    expect(formatEffect(123456)).toBe('+1.2e5');
    expect(formatEffect(9999.7)).toBe('+1.0e4');
  });

  it('prints only an exact zero as 0', () => {
    expect(formatEffect(0)).toBe('0');
    expect(formatEffect(-0)).toBe('0');
    expect(formatEffect(Number.MIN_VALUE)).not.toBe('0');
    expect(formatEffect(1e-300)).toBe('+1.0e-300');
  });

  it('writes magnitudes unsigned', () => {
    expect(formatMagnitude(18.239)).toBe('18.2');
    expect(formatMagnitude(3.5e-7)).toBe('3.5e-7');
    expect(formatMagnitude(0.92019)).toBe('0.920');
  });
});
