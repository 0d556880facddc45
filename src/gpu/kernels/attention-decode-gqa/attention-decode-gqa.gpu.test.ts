// attention-decode-gqa.wgsl against its float64 reference: NH/NKV 4/2 and 2/1, head sizes 64 and 128, one
// new row and a block of them, and a cache longer than one chunk of keys (the online softmax across chunks).

import { describe, it } from 'vitest';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { randomActivations } from '../kernels.testing';
import { createDecodeAttention, DECODE_ATTENTION } from './attention-decode-gqa';
import { decodeAttentionReference } from './attention-decode-gqa.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

describe('decode_attention', () => {
  const cases: [number, number, number, number, number][] = [
    [4, 2, 64, 9, 1],
    [2, 1, 128, 0, 5],
    [4, 2, 64, DECODE_ATTENTION.CHUNK + 37, 3],
    [2, 2, 16, 2 * DECODE_ATTENTION.CHUNK - 1, 1],
  ];
  for (const [NH, NKV, HS, start, M] of cases) {
    it(`NH/NKV ${NH}/${NKV}, HS ${HS}, rows ${start}..${start + M - 1}: within 1e-5`, async () => {
      const { device } = gpu;
      const W = (NH + 2 * NKV) * HS;
      const capacity = start + M + 3; // rows past the view hold garbage the kernel must not read
      const cache = randomActivations(createRng(start * 7 + HS), capacity * W);
      const out = createStorage(device, 'test.out', M * NH * HS * 4);
      await submitValidated(device, 'test.decode', () => [
        createDecodeAttention(device, { NH, NKV, HS, start, M }, { cache: uploadStorage(device, 'test.cache', cache), out }),
      ]);
      expectClose(await readFloat32(device, out, M * NH * HS), decodeAttentionReference(cache, start, M, { NH, NKV, HS }), {
        abs: 1e-5,
        rel: 1e-5,
        label: 'out',
      });
    });
  }
});
