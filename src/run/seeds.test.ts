// A run's seeds: the prompts of each step, the held-out prompts and the batches of a file, as pure
// functions of (seed, step), so a resumed run and every caller draw the same.
import { describe, expect, it } from 'vitest';
import { promptSeeds } from '../harness/dataset';
import { batchIndices, heldOutSeed, stepSeed } from './seeds';

describe('stepSeed and heldOutSeed', () => {
  it("step 0 draws `mw generate --seed S`'s prompts (the seed itself); later steps and the held-out batch draw other prompts", () => {
    for (const seed of [0, 1, 7, 2 ** 32 - 1]) {
      expect(stepSeed(seed, 0)).toBe(seed);
      const seeds = Array.from({ length: 200 }, (_, s) => stepSeed(seed, s));
      expect(new Set(seeds).size).toBe(200);
      expect(seeds).not.toContain(heldOutSeed(seed));
      // Distinct seeds give distinct prompts: no held-out prompt is one of step 1's.
      const heldOut = new Set(promptSeeds(heldOutSeed(seed), 16));
      expect(promptSeeds(stepSeed(seed, 1), 16).filter((p) => heldOut.has(p))).toEqual([]);
    }
  });

  it('depends on the run seed: two runs draw different prompts at the same step', () => {
    expect(stepSeed(1, 3)).not.toBe(stepSeed(2, 3));
    expect(heldOutSeed(1)).not.toBe(heldOutSeed(2));
  });
});

describe('batchIndices', () => {
  it('walks epochs: every rollout once per epoch, a seeded shuffle or file order, the same for the same (seed, step)', () => {
    const epoch = (seed: number, e: number) => [0, 1].flatMap((s) => batchIndices(10, 5, 2 * e + s, 'random', seed));
    expect([...epoch(1, 0)].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(epoch(1, 0)).not.toEqual(epoch(1, 1));
    expect(epoch(1, 0)).not.toEqual(epoch(2, 0));
    expect(batchIndices(10, 5, 3, 'random', 1)).toEqual(batchIndices(10, 5, 3, 'random', 1));
    expect(batchIndices(3, 2, 0, 'file', 0)).toEqual([0, 1]);
    expect(batchIndices(3, 2, 1, 'file', 0)).toEqual([2, 0]); // spans two epochs
  });
});
