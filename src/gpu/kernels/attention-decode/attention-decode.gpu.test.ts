import { afterAll, beforeAll, describe, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { encodeLaunches } from '../../runtime/kernel';
import { createAttentionDecode } from './attention-decode';
import { attentionRef } from '../attention/attention.reference';
import { randomNormal } from '../../../model/reference/gradcheck';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

describe('attention-decode.wgsl', () => {
  // (NH, HS, P, start, M): one new row, a prefix-reuse block, a block from 0, rows past a workgroup.
  const cases = [
    [1, 8, 16, 0, 1],
    [2, 8, 64, 5, 1],
    [4, 16, 128, 37, 9],
    [2, 32, 256, 0, 70],
    [3, 12, 300, 130, 3],
  ] as const;
  for (const [NH, HS, P, start, M] of cases) {
    it(`equals causal attention of the last ${M} rows at start ${start} (NH ${NH}, HS ${HS})`, async () => {
      const C = NH * HS;
      const n = start + M;
      const qkv = Float32Array.from(randomNormal(createRng(start * 31 + M), P * 3 * C));
      const ref = attentionRef(qkv.subarray(0, n * 3 * C), new Array(n).fill(n), n, C, NH).out;
      const { device } = gpu;
      const cache = uploadStorage(device, 'test.qkv', qkv);
      const out = createStorage(device, 'test.out', M * C * 4);
      const launch = createAttentionDecode(device, { NH, HS, P, start, M }, { qkv: cache, out });
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      encodeLaunches(pass, [launch]);
      pass.end();
      device.queue.submit([encoder.finish()]);
      const got = await readFloat32(device, out, M * C);
      expectClose(got, ref.subarray(start * C, n * C), { abs: 2e-5, rel: 1e-5, label: 'decode attention' });
    });
  }
});
