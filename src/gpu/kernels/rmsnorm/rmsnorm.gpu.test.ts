// rmsnorm.wgsl against its float64 reference for F32, F16 and BF16 weights, rows narrower and wider
// than the workgroup, and an eps that matters (rows of tiny values).

import { describe, it } from 'vitest';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { DTYPES, randomActivations, randomWeights, uploadBytes } from '../kernels.testing';
import { createRmsnorm } from './rmsnorm';
import { rmsnormRef } from './rmsnorm.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

describe('rmsnorm', () => {
  for (const dtype of DTYPES) {
    for (const [N, C, eps, scale] of [
      [5, 64, 1e-6, 1],
      [33, 256, 1e-5, 1],
      [3, 130, 1e-2, 1e-2],
    ] as const) {
      it(`${dtype} weight, (${N}, ${C}), eps ${eps}: within 2e-6 relative`, async () => {
        const { device } = gpu;
        const rng = createRng(N * C);
        const x = randomActivations(rng, N * C).map((v) => v * scale);
        const w = randomWeights(rng, dtype, C, 0.5, 1);
        const out = createStorage(device, 'test.out', N * C * 4);
        await submitValidated(device, 'test.rmsnorm', () => [
          createRmsnorm(device, { N, C, eps }, dtype, { x: uploadStorage(device, 'test.x', x), weight: uploadBytes(device, 'test.w', w.bytes), out }),
        ]);
        expectClose(await readFloat32(device, out, N * C), rmsnormRef(x, w.values, N, C, eps), { abs: 1e-6, rel: 2e-6, label: 'out' });
      });
    }
  }
});
