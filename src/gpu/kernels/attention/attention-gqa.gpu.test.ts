// shaders/attention.wgsl's forward with grouped-query attention and head sizes 64 and 128 against the
// float64 reference: NH/NKV 4/2 and 2/1, a packed tree batch, both variants (rows read from storage, and
// tiles staged in workgroup memory, fitted to the device's workgroup memory).

import { describe, it } from 'vitest';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { attentionConfig, createAttentionForward, createAttentionMask, fitAttentionConfig, qkvWidth, type AttentionConfig } from './attention';
import { attentionGqaReference } from './attention-gqa.reference';
import { causalEnd, packEnds, randomTreeEnd } from './attention-test-masks';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';

let gpu: Gpu;
useGpu((g) => (gpu = g));

const ROWS: AttentionConfig = { BQ: 16, BK: 16, shared: false };
const SHARED: AttentionConfig = { BQ: 16, BK: 16, shared: true };

describe('attention forward, grouped-query', () => {
  const cases: [number, number, number, AttentionConfig][] = [
    [4, 2, 64, ROWS],
    [2, 1, 128, ROWS],
    [4, 2, 128, SHARED],
    [2, 2, 64, SHARED],
  ];
  for (const [NH, NKV, HS, base] of cases) {
    it(`NH ${NH}, NKV ${NKV}, HS ${HS}, ${base.shared ? 'staged tiles' : 'rows from storage'}: out and lse within 1e-5`, async () => {
      const { device } = gpu;
      const end = packEnds([randomTreeEnd(createRng(HS + NH), 30, 0.2), causalEnd(11)]);
      const N = end.length;
      const rng = createRng(NH * 100 + NKV * 10 + HS);
      const qkv = Float32Array.from({ length: N * qkvWidth({ NH, NKV, HS }) }, () => rng.normal());
      const config = fitAttentionConfig(base, HS, device);
      const mask = createAttentionMask(device, end, config);
      const out = createStorage(device, 'test.out', N * NH * HS * 4);
      const lse = createStorage(device, 'test.lse', NH * N * 4);
      await submitValidated(device, 'test.attention', () => [
        createAttentionForward(device, mask, { NH, NKV, HS }, { qkv: uploadStorage(device, 'test.qkv', qkv), out, lse }),
      ]);
      const want = attentionGqaReference(qkv, end, { NH, NKV, HS });
      expectClose(await readFloat32(device, out, N * NH * HS), want.out, { abs: 1e-5, rel: 1e-5, label: 'out' });
      expectClose(await readFloat32(device, lse, NH * N), want.lse, { abs: 1e-5, rel: 1e-5, label: 'lse' });
      mask.destroy();
    });
  }

  it('a GPU config fits head_dim 128 into the workgroup memory', () => {
    const fitted = fitAttentionConfig(attentionConfig({ ...gpu.info, isSoftware: false }), 128, gpu.device);
    const bytes = 2 * Math.max(fitted.BQ, fitted.BK) * 128 * 4 + 2 * fitted.BQ * 4;
    if (bytes > gpu.device.limits.maxComputeWorkgroupStorageSize) throw new Error(`${bytes} bytes of workgroup memory`);
  });
});
