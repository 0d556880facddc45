import { afterAll, beforeAll, describe, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createLayernorm, createLayernormBackward } from './layernorm';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { layernormBackwardRef, layernormRef } from './layernorm.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const rng = createRng(7);
const uniform = (n: number, scale = 1, offset = 0) => Float32Array.from({ length: n }, () => (rng.next() * 2 - 1) * scale + offset);

// Rows of C values in fp32; the sums run over C <= 256 terms.
const TOLERANCE = { abs: 2e-5, rel: 1e-4 };

describe('layernorm.wgsl', () => {
  for (const [N, C] of [
    [1, 1],
    [1, 7],
    [37, 19],
    [130, 64],
    [5, 256],
  ]) {
    it(`forward matches the reference for N=${N} C=${C}, saving mean and rstd`, async () => {
      const { device } = gpu;
      // An offset and a scale per row, as in a residual stream; LayerNorm must remove both.
      const x = Float32Array.from({ length: N * C }, (_, i) => (rng.next() * 2 - 1) * (1 + (i % 3)) + 3 * Math.floor(i / C));
      const weight = uniform(C, 1, 1);
      const bias = uniform(C, 0.5);
      const b = {
        x: uploadStorage(device, 'test.x', x),
        weight: uploadStorage(device, 'test.weight', weight),
        bias: uploadStorage(device, 'test.bias', bias),
        out: createStorage(device, 'test.out', N * C * 4),
        mean: createStorage(device, 'test.mean', N * 4),
        rstd: createStorage(device, 'test.rstd', N * 4),
      };
      const [launch] = await submitValidated(device, 'test.layernorm', () => [createLayernorm(device, { N, C }, b)]);
      const want = layernormRef(x, weight, bias, N, C);
      const label = `layernorm N=${N} C=${C}`;
      expectClose(await readFloat32(device, b.out, N * C), want.out, { ...TOLERANCE, label: `${label} out` });
      expectClose(await readFloat32(device, b.mean, N), want.mean, { ...TOLERANCE, label: `${label} mean` });
      // rstd of a constant row (C = 1) is 1/sqrt(eps) ≈ 316: relative tolerance.
      expectClose(await readFloat32(device, b.rstd, N), want.rstd, { ...TOLERANCE, label: `${label} rstd` });
      releaseLaunches([launch]);
      Object.values(b).forEach((buf) => buf.destroy());
    });
  }

  for (const [N, C, accumulate] of [
    [1, 1, false],
    [37, 19, false],
    [130, 64, false],
    [33, 48, true],
  ] as const) {
    it(`backward matches the reference for N=${N} C=${C}${accumulate ? ', accumulating' : ''}`, async () => {
      const { device } = gpu;
      const x = uniform(N * C, 2, 0.5);
      const weight = uniform(C, 1, 1);
      const dOut = uniform(N * C);
      const fwd = layernormRef(x, weight, new Float32Array(C), N, C);
      const dx0 = uniform(N * C);
      const dweight0 = uniform(C);
      const dbias0 = uniform(C);
      const b = {
        dOut: uploadStorage(device, 'test.dOut', dOut),
        x: uploadStorage(device, 'test.x', x),
        weight: uploadStorage(device, 'test.weight', weight),
        mean: uploadStorage(device, 'test.mean', Float32Array.from(fwd.mean)),
        rstd: uploadStorage(device, 'test.rstd', Float32Array.from(fwd.rstd)),
        dx: uploadStorage(device, 'test.dx', dx0),
        dweight: uploadStorage(device, 'test.dweight', dweight0),
        dbias: uploadStorage(device, 'test.dbias', dbias0),
      };
      const launches = await submitValidated(device, 'test.layernormBackward', () =>
        createLayernormBackward(device, { N, C }, b, { accumulateDx: accumulate, accumulateParams: accumulate }),
      );
      const want = layernormBackwardRef(x, weight, fwd.mean, fwd.rstd, dOut, N, C);
      if (accumulate) {
        want.dx.forEach((_, i) => (want.dx[i] += dx0[i]));
        want.dweight.forEach((_, i) => (want.dweight[i] += dweight0[i]));
        want.dbias.forEach((_, i) => (want.dbias[i] += dbias0[i]));
      }
      const label = `layernorm backward N=${N} C=${C}`;
      expectClose(await readFloat32(device, b.dx, N * C), want.dx, { ...TOLERANCE, label: `${label} dx` });
      expectClose(await readFloat32(device, b.dweight, C), want.dweight, { ...TOLERANCE, label: `${label} dweight` });
      expectClose(await readFloat32(device, b.dbias, C), want.dbias, { ...TOLERANCE, label: `${label} dbias` });
      releaseLaunches(launches);
      Object.values(b).forEach((buf) => buf.destroy());
    });
  }
});
