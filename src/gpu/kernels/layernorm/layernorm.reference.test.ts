// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { layernormBackwardRef, layernormRef } from './layernorm.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

describe('layernormRef', () => {
  it('normalises each row to mean 0 and variance var/(var+eps), then applies weight and bias', () => {
    const rng = createRng(4);
    const [N, C] = [3, 9];
    const x = randomNormal(rng, N * C, 3);
    const ones = new Float64Array(C).fill(1);
    const { out, mean, rstd } = layernormRef(x, ones, new Float64Array(C), N, C);
    for (let i = 0; i < N; i++) {
      const row = Array.from(x.subarray(i * C, (i + 1) * C));
      const m = row.reduce((a, b) => a + b, 0) / C;
      const v = row.reduce((a, b) => a + (b - m) ** 2, 0) / C;
      expect(mean[i]).toBeCloseTo(m, 12);
      expect(rstd[i]).toBeCloseTo(1 / Math.sqrt(v + 1e-5), 12);
      const o = Array.from(out.subarray(i * C, (i + 1) * C));
      const om = o.reduce((a, b) => a + b, 0) / C;
      const ov = o.reduce((a, b) => a + (b - om) ** 2, 0) / C;
      expect(Math.abs(om)).toBeLessThan(1e-14);
      expect(ov).toBeCloseTo(v / (v + 1e-5), 12);
    }
    const w = randomNormal(rng, C);
    const b = randomNormal(rng, C);
    const affine = layernormRef(x, w, b, N, C).out;
    const want = out.map((o, j) => o * w[j % C] + b[j % C]);
    expectClose(affine, want, { abs: 1e-14, label: 'affine' });
  });

  it('backward matches finite differences for x, weight and bias', () => {
    const rng = createRng(5);
    const [N, C] = [3, 7];
    const x = randomNormal(rng, N * C, 2);
    const w = randomNormal(rng, C);
    const b = randomNormal(rng, C);
    const g = randomNormal(rng, N * C);
    const { mean, rstd } = layernormRef(x, w, b, N, C);
    const grads = layernormBackwardRef(x, w, mean, rstd, g, N, C);
    const loss = (xx: Float64Array, ww: Float64Array, bb: Float64Array) => dot(layernormRef(xx, ww, bb, N, C).out, g);
    expectClose(
      grads.dx,
      finiteDifference((v) => loss(v, w, b), x),
      { ...FD, label: 'dx' },
    );
    expectClose(
      grads.dweight,
      finiteDifference((v) => loss(x, v, b), w),
      { ...FD, label: 'dweight' },
    );
    expectClose(
      grads.dbias,
      finiteDifference((v) => loss(x, w, v), b),
      { ...FD, label: 'dbias' },
    );
  });
});
