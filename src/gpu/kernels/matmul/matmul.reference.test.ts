// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { geluRef } from '../gelu/gelu.reference';
import { matmulBackwardRef } from '../matmul-backward/matmul-backward.reference';
import { matmulRef } from './matmul.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

describe('matmulRef', () => {
  it('computes a hand-worked product with bias', () => {
    // (2,3)·(3,2) + (2)
    const x = [1, 2, 3, 4, 5, 6];
    const w = [1, -1, 0, 2, 0.5, 0];
    const out = matmulRef(x, w, [10, 20], 2, 3, 2);
    expect(Array.from(out)).toEqual([1 + 0 + 1.5 + 10, -1 + 4 + 0 + 20, 4 + 0 + 3 + 10, -4 + 10 + 0 + 20]);
  });

  it('with gelu equals geluRef of the plain product', () => {
    const rng = createRng(2);
    const [M, K, N] = [3, 5, 7];
    const x = randomNormal(rng, M * K);
    const w = randomNormal(rng, K * N);
    const b = randomNormal(rng, N);
    expectClose(matmulRef(x, w, b, M, K, N, true), geluRef(matmulRef(x, w, b, M, K, N)), { abs: 0, label: 'fused gelu' });
  });

  for (const gelu of [false, true]) {
    it(`backward (gelu ${gelu}) matches finite differences for x, w and bias`, () => {
      const rng = createRng(3);
      const [M, K, N] = [3, 5, 7];
      const x = randomNormal(rng, M * K);
      const w = randomNormal(rng, K * N, 0.5);
      const b = randomNormal(rng, N);
      const g = randomNormal(rng, M * N);
      const pre = gelu ? matmulRef(x, w, b, M, K, N) : null;
      const grads = matmulBackwardRef(x, w, g, M, K, N, pre);
      const loss = (xx: Float64Array, ww: Float64Array, bb: Float64Array) => dot(matmulRef(xx, ww, bb, M, K, N, gelu), g);
      expectClose(
        grads.dx,
        finiteDifference((v) => loss(v, w, b), x),
        { ...FD, label: 'dx' },
      );
      expectClose(
        grads.dw,
        finiteDifference((v) => loss(x, v, b), w),
        { ...FD, label: 'dw' },
      );
      expectClose(
        grads.dbias,
        finiteDifference((v) => loss(x, w, v), b),
        { ...FD, label: 'dbias' },
      );
    });
  }
});
