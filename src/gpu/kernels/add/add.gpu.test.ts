import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { readFloat32, uploadStorage, createStorage } from '../../runtime/buffers';
import { createAdd } from './add';
import { addReference } from './add.reference';
import { encodeLaunches } from '../../runtime/kernel';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

async function runAdd(a: Float32Array, b: Float32Array): Promise<Float32Array> {
  const { device } = gpu;
  const A = uploadStorage(device, 'test.a', a);
  const B = uploadStorage(device, 'test.b', b);
  const out = createStorage(device, 'test.out', a.byteLength);
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  encodeLaunches(pass, [createAdd(device, a.length, { a: A, b: B, out })]);
  pass.end();
  device.queue.submit([encoder.finish()]);
  return readFloat32(device, out, a.length);
}

describe('add.wgsl', () => {
  it('reports the SwiftShader adapter in Node', () => {
    expect(gpu.info.isSoftware).toBe(true);
    expect(`${gpu.info.vendor} ${gpu.info.architecture} ${gpu.info.description}`.toLowerCase()).toContain('swiftshader');
  });

  for (const n of [1, 255, 257, 1000, 70001 * 256 + 3]) {
    it(`matches the reference for n=${n}`, async () => {
      // Periods 65521 and 65519 (primes; their sums repeat only after 4e9 elements): sin and cos of a small argument, so
      // the 18-million-element case is not seconds of range reduction.
      const a = new Float32Array(n);
      const b = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        a[i] = Math.sin(i % 65521) * 3;
        b[i] = Math.cos((i % 65519) * 0.7) - 0.5;
      }
      const got = await runAdd(a, b);
      expectClose(got, addReference(a, b), { abs: 1e-6, label: `add n=${n}` });
    });
  }
});
