// SDCC's λ under AdamW (issue 20): when the KL is the only gradient (GRPO advantages all 0, a solved
// task), AdamW's update m̂ / (√v̂ + ε) does not depend on the gradient's scale, and the global-norm
// clip only shrinks it further towards the same direction: λ then sets neither the size nor the
// direction of the steps, so no λ makes them gentle. With a task gradient beside it, λ weighs the two.
import { describe, expect, it } from 'vitest';
import { createRng } from '../util/prng';
import { DEFAULT_ADAMW } from './adamw';
import { adamwReferenceStep, type AdamwReferenceState } from '../gpu/kernels/adamw/adamw.reference';

const N = 4096;
const STEPS = 6;
const LR = 5e-4;
const mask = new Uint32Array(Math.ceil(N / 32)).fill(0xffffffff);

function gaussian(seed: number, scale: number): Float64Array[] {
  const rng = createRng(seed);
  return Array.from({ length: STEPS }, () =>
    Float64Array.from({ length: N }, () => scale * Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next())),
  );
}

/** The parameters after STEPS AdamW updates from a fresh state, with the gradient of each step given. */
function run(grads: (t: number) => ArrayLike<number>): Float64Array {
  const params = Float64Array.from({ length: N }, (_, i) => Math.sin(i));
  const state: AdamwReferenceState = { params, m: new Float64Array(N), v: new Float64Array(N), step: 0 };
  for (let t = 0; t < STEPS; t++) adamwReferenceStep(state, grads(t), mask, DEFAULT_ADAMW, LR);
  return state.params;
}

const start = Float64Array.from({ length: N }, (_, i) => Math.sin(i));
const delta = (p: Float64Array) => Float64Array.from(p, (v, i) => v - start[i]);
const norm = (x: ArrayLike<number>) => Math.sqrt(Array.from(x).reduce((s, v) => s + v * v, 0));
const distance = (a: ArrayLike<number>, b: ArrayLike<number>) => norm(Array.from(a, (v, i) => v - b[i]));

describe('SDCC λ under AdamW', () => {
  // The KL's gradient per step: entries of size ~1e-3, a total norm below AdamW's clip of 1 for λ ≤ 0.3.
  const kl = gaussian(7, 1e-3);

  it('with the KL alone, every λ from 0.01 to 0.3 moves the weights the same (within 1 % of the step; SGD would differ 30×), about lr per parameter per update', () => {
    const moved = [0.01, 0.03, 0.1, 0.3].map((lambda) => delta(run((t) => kl[t].map((g) => lambda * g))));
    const reference = moved[2];
    const size = norm(reference);
    // ε = 1e-8 is all that tells the λ apart (it matters only where λ·|g| nears it).
    for (const d of moved) expect(distance(d, reference) / size).toBeLessThan(1e-2);
    // Not a small step: the mean |Δθ| per parameter is of the order lr × updates (sign-like at first, as Adam is).
    const perParameter = reference.reduce((s, v) => s + Math.abs(v), 0) / N;
    expect(perParameter).toBeGreaterThan(0.3 * LR * STEPS);
    expect(perParameter).toBeLessThan(1.2 * LR * STEPS);
  });

  it('with a task gradient beside it, λ weighs the two: the step turns towards the KL as λ grows', () => {
    const task = gaussian(11, 1e-3);
    const towardsKl = (lambda: number) => {
      const d = delta(run((t) => task[t].map((g, i) => g + lambda * kl[t][i])));
      const k = delta(run((t) => kl[t]));
      return Array.from(d).reduce((s, v, i) => s + v * k[i], 0) / (norm(d) * norm(k));
    };
    const cosines = [0.01, 0.1, 1, 10].map(towardsKl);
    for (let i = 1; i < cosines.length; i++) expect(cosines[i]).toBeGreaterThan(cosines[i - 1]);
    expect(cosines[0]).toBeLessThan(0.1);
    expect(cosines[3]).toBeGreaterThan(0.9);
  });
});
