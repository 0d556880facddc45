// The matrix's seeds and the report's number format, without a GPU.
import { describe, expect, it } from 'vitest';
import { promptSeeds } from '../harness/dataset';
import { MODEL_PRESETS } from '../model/config';
import { batchSeed, episodeLimits, evalSeed, OBSERVATION_RESERVE } from './matrix';
import { formatDrift } from './report';

describe('matrix seeds', () => {
  it("update 1 draws the drift batch (the seed itself); later updates and the held-out batch draw other prompts", () => {
    for (const seed of [0, 1, 7, 2 ** 32 - 1]) {
      expect(batchSeed(seed, 1)).toBe(seed);
      const seeds = Array.from({ length: 200 }, (_, u) => batchSeed(seed, u + 1));
      expect(new Set(seeds).size).toBe(200);
      expect(seeds).not.toContain(evalSeed(seed));
      // Distinct seeds give distinct prompts: no held-out prompt is one of update 2's.
      const heldOut = new Set(promptSeeds(evalSeed(seed), 16));
      expect(promptSeeds(batchSeed(seed, 2), 16).filter((p) => heldOut.has(p))).toEqual([]);
    }
  });

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
