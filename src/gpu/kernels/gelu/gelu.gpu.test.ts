import { afterAll, beforeAll, describe, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createGelu, createGeluBackward } from './gelu';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { geluBackwardRef, geluRef } from './gelu.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const rng = createRng(17);
/** Mostly [-6, 6], plus saturated values where an exp-based tanh would overflow. */
const inputs = (n: number) => Float32Array.from({ length: n }, (_, i) => (i % 10 === 9 ? (i % 20 === 9 ? 1 : -1) * (20 + i) : (rng.next() * 2 - 1) * 6));

const TOLERANCE = { abs: 2e-6, rel: 2e-6 };

describe('gelu.wgsl', () => {
  for (const n of [1, 255, 1000]) {
    it(`forward matches the reference for n=${n}`, async () => {
      const { device } = gpu;
      const x = inputs(n);
      const X = uploadStorage(device, 'test.x', x);
      const out = createStorage(device, 'test.out', n * 4);
      const [launch] = await submitValidated(device, 'test.gelu', () => [createGelu(device, n, { x: X, out })]);
      expectClose(await readFloat32(device, out, n), geluRef(x), { ...TOLERANCE, label: 'gelu' });
      releaseLaunches([launch]);
      [X, out].forEach((b) => b.destroy());
    });

    for (const accumulate of [false, true]) {
      it(`backward matches the reference for n=${n}${accumulate ? ', accumulating' : ''}`, async () => {
        const { device } = gpu;
        const x = inputs(n);
        const dOut = Float32Array.from({ length: n }, () => rng.next() * 2 - 1);
        const dx0 = Float32Array.from({ length: n }, () => rng.next() * 2 - 1);
        const b = { x: uploadStorage(device, 'test.x', x), dOut: uploadStorage(device, 'test.dOut', dOut), dx: uploadStorage(device, 'test.dx', dx0) };
        const [launch] = await submitValidated(device, 'test.geluBackward', () => [createGeluBackward(device, n, b, { accumulate })]);
        const want = geluBackwardRef(x, dOut);
        if (accumulate) want.forEach((_, i) => (want[i] += dx0[i]));
        expectClose(await readFloat32(device, b.dx, n), want, { ...TOLERANCE, label: 'gelu backward' });
        releaseLaunches([launch]);
        Object.values(b).forEach((buf) => buf.destroy());
      });
    }
  }
});
