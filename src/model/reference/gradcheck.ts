// Central finite differences in float64: the independent check every analytic backward is held to.
// For a scalar loss f and input x, numeric[i] = (f(x + h·e_i) - f(x - h·e_i)) / 2h.

import type { Rng } from '../../util/prng';

/** Numeric gradient of f at x (x is restored before returning). */
export function finiteDifference(f: (x: Float64Array) => number, x: Float64Array, h = 1e-5): Float64Array {
  const grad = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i];
    x[i] = keep + h;
    const up = f(x);
    x[i] = keep - h;
    const down = f(x);
    x[i] = keep;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

/** Σ_i a[i]·b[i]: turns a tensor output into a scalar loss with a random cotangent b. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`dot: lengths ${a.length} and ${b.length}`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function randomNormal(rng: Rng, n: number, std = 1): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = std * rng.normal();
  return out;
}
