// linear.wgsl against its float64 reference, for F32, F16 and BF16 weights stored (out, in), with and
// without bias, accumulating into y, and writing a column block of a wider y (the head's vocabulary blocks).

import { describe, expect, it } from 'vitest';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { DTYPES, randomActivations, randomWeights, uploadBytes } from '../kernels.testing';
import { createLinear } from './linear';
import { linearRef } from './linear.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

describe('linear', () => {
  for (const dtype of DTYPES) {
    for (const [M, K, N, bias] of [
      [1, 2, 1, false],
      [13, 64, 37, true],
      [70, 128, 96, true],
    ] as const) {
      it(`${dtype} weights: (${M}, ${K}) · (${N}, ${K})ᵀ${bias ? ' + bias' : ''} within 1e-5 relative`, async () => {
        const { device } = gpu;
        const rng = createRng(M * 1000 + K + N);
        const x = randomActivations(rng, M * K);
        const w = randomWeights(rng, dtype, N * K, 0.2);
        const b = bias ? randomWeights(rng, dtype, N, 0.5) : null;
        const y = createStorage(device, 'test.y', M * N * 4);
        await submitValidated(device, 'test.linear', () => [
          createLinear(device, { M, K, N }, dtype, {
            x: uploadStorage(device, 'test.x', x),
            w: uploadBytes(device, 'test.w', w.bytes),
            bias: b ? uploadBytes(device, 'test.bias', b.bytes) : undefined,
            y,
          }),
        ]);
        expectClose(await readFloat32(device, y, M * N), linearRef(x, w.values, b?.values ?? null, M, K, N), { abs: 1e-5, rel: 1e-5, label: 'y' });
      });
    }
  }

  it('accumulates into a column block of a wider y (a vocabulary block of the head, the residual add)', async () => {
    const { device } = gpu;
    const [M, K, N, ldY, first] = [9, 32, 64, 160, 64];
    const offsetY = 3; // the binding starts at column 64, the block at 67
    const block = first + offsetY;
    const rng = createRng(7);
    const x = randomActivations(rng, M * K);
    const w = randomWeights(rng, 'BF16', N * K, 0.3);
    const y0 = randomActivations(rng, M * ldY);
    const y = uploadStorage(device, 'test.y', y0);
    await submitValidated(device, 'test.linear', () => [
      createLinear(
        device,
        { M, K, N, ldY, offsetY },
        'BF16',
        {
          x: uploadStorage(device, 'test.x', x),
          w: uploadBytes(device, 'test.w', w.bytes),
          y: { buffer: y, offset: first * 4, size: (offsetY + (M - 1) * ldY + N) * 4 },
        },
        { accumulate: true },
      ),
    ]);
    const got = await readFloat32(device, y, M * ldY);
    const product = linearRef(x, w.values, null, M, K, N);
    const want = Float64Array.from(y0);
    for (let m = 0; m < M; m++) for (let n = 0; n < N; n++) want[m * ldY + block + n] += product[m * N + n];
    expectClose(got, want, { abs: 1e-5, rel: 1e-5, label: 'y' });
    expect(got[block - 1]).toBe(y0[block - 1]); // columns outside the block untouched
  });
});
