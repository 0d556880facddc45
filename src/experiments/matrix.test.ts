// The matrix's episode limits and the report's number format, without a GPU (its seeds are every
// run's: src/run/seeds.test.ts).
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../model/config';
import { episodeLimits, OBSERVATION_RESERVE } from './matrix';
import { formatDrift } from './report';

describe('matrix limits', () => {
  it('episodes decode within the positions less the observation reserve; tiny (P 128) has no room', () => {
    expect(episodeLimits(MODEL_PRESETS.small)).toEqual({ maxContext: 1024 - OBSERVATION_RESERVE });
    expect(() => episodeLimits(MODEL_PRESETS.tiny)).toThrow(/128 positions leave no room/);
  });
});

describe('formatDrift', () => {
  it('fixed decimals for drift-sized numbers, e-notation at the floor', () => {
    expect([0.36612, -0.0203, 2.04e-7, -7.5e-8, 0, null].map(formatDrift)).toEqual(['0.3661', '-0.0203', '2.0e-7', '-7.5e-8', '0', '–']);
  });
});
