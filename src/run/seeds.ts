// The seeds of a run, one function each for every caller (mw train, mw experiment, the browser):
// step s of a run with seed S draws its prompts from stepSeed(S, s), a function of (S, s) alone, so
// a resumed run draws what the uninterrupted one would have, and every lane of a run the same.

import { createRng } from '../util/prng';

/**
 * The seed of step `step`'s prompts (0-based, resumed steps included). Step 0 uses the run's seed
 * itself, so `mw generate --seed S --n N --group G` plays step 0's prompts; later steps mix in the step.
 */
export function stepSeed(seed: number, step: number): number {
  return step === 0 ? seed >>> 0 : (seed ^ Math.imul(step + 1, 0x9e3779b1) ^ 0x5bd1e995) >>> 0;
}

/** The seed of the held-out prompts: the same at every evaluation of the run, a seed no step uses by design. */
export function heldOutSeed(seed: number): number {
  return (seed ^ 0x7f4a7c15 ^ Math.imul(seed + 1, 0x85ebca6b)) >>> 0;
}

export const ORDERS = ['random', 'file'] as const;
export type Order = (typeof ORDERS)[number];

/**
 * Indices of batch `step` (B of n rollouts of a file). The run walks through epochs: each epoch is
 * every rollout once, in file order or in a shuffle seeded by (seed, epoch); a batch may span two
 * epochs. A pure function of its arguments, so resuming at any step continues the same sequence.
 */
export function batchIndices(n: number, B: number, step: number, order: Order, seed: number): number[] {
  const epochs = new Map<number, number[]>();
  const permutation = (epoch: number): number[] => {
    let p = epochs.get(epoch);
    if (!p) {
      p = Array.from({ length: n }, (_, i) => i);
      if (order === 'random') {
        const rng = createRng(seed * 2 ** 21 + epoch); // seed < 2^32: exact in 53 bits
        for (let i = n - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          [p[i], p[j]] = [p[j], p[i]];
        }
      }
      epochs.set(epoch, p);
    }
    return p;
  };
  return Array.from({ length: B }, (_, j) => {
    const k = step * B + j;
    return permutation(Math.floor(k / n))[k % n];
  });
}
