import { afterAll, beforeAll, describe, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createMatmulNaive } from './matmul-naive';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { matmulRef } from '../matmul/matmul.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const rng = createRng(11);
const uniform = (n: number) => Float32Array.from({ length: n }, () => rng.next() * 2 - 1);

describe('matmul-naive.wgsl', () => {
  for (const [M, K, N] of [
    [1, 1, 1],
    [37, 19, 53],
    [17, 300, 20],
  ]) {
    it(`matches the reference for M=${M} K=${K} N=${N}`, async () => {
      const { device } = gpu;
      const x = uniform(M * K);
      const w = uniform(K * N);
      const X = uploadStorage(device, 'test.x', x);
      const W = uploadStorage(device, 'test.w', w);
      const Y = createStorage(device, 'test.y', M * N * 4);
      const [launch] = await submitValidated(device, 'test.matmulNaive', () => [createMatmulNaive(device, { M, K, N }, { x: X, w: W, y: Y })]);
      expectClose(await readFloat32(device, Y, M * N), matmulRef(x, w, null, M, K, N), { abs: 1e-4, rel: 1e-4, label: 'naive' });
      releaseLaunches([launch]);
      [X, W, Y].forEach((b) => b.destroy());
    });
  }
});
