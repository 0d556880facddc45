// rope.wgsl against its float64 reference: head sizes 64 and 128, NH/NKV 4/2 and 2/1, positions that
// do not start at 0 and repeat (a tree's branches), each frequency scaling, and Qwen3's q/k RMSNorm
// before the rotation in F32, F16 and BF16. Values stay put (v heads untouched).

import { describe, expect, it } from 'vitest';
import { type RopeScaling, ropeInverseFrequencies, type WeightDtype } from '../../../model/family/config';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { randomActivations, randomWeights, uploadBytes } from '../kernels.testing';
import { createRope, ropeRotation } from './rope';
import { ropeReference } from './rope.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

const LLAMA3: RopeScaling = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 };

describe('rope', () => {
  const cases: [number, number, number, RopeScaling, WeightDtype | null][] = [
    [64, 4, 2, { type: 'none' }, null],
    [128, 2, 1, LLAMA3, null],
    [64, 2, 1, { type: 'linear', factor: 4 }, 'BF16'],
    [128, 4, 2, { type: 'none' }, 'F16'],
    [64, 4, 2, { type: 'none' }, 'F32'],
  ];
  for (const [HS, NH, NKV, scaling, normDtype] of cases) {
    it(`HS ${HS}, NH/NKV ${NH}/${NKV}, ${scaling.type} scaling${normDtype ? `, q/k norm ${normDtype}` : ''}: within 1e-5`, async () => {
      const { device } = gpu;
      const N = 21;
      const rng = createRng(HS + NH * 10 + NKV);
      const W = (NH + 2 * NKV) * HS;
      const qkv = randomActivations(rng, N * W);
      const positions = Uint32Array.from({ length: N }, (_, i) => 5 + (i < 12 ? i : i - 7)); // two branches of one root
      const invFreq = ropeInverseFrequencies({ headDim: HS, ropeTheta: 10000, ropeScaling: scaling });
      const eps = 1e-6;
      const qNorm = normDtype ? randomWeights(rng, normDtype, HS, 0.5, 1) : null;
      const kNorm = normDtype ? randomWeights(rng, normDtype, HS, 0.5, 1) : null;
      const buffer = uploadStorage(device, 'test.qkv', qkv);
      await submitValidated(device, 'test.rope', () => [
        createRope(
          device,
          { N, NH, NKV, HS },
          {
            qkv: buffer,
            positions: uploadStorage(device, 'test.positions', positions),
            rotation: uploadStorage(device, 'test.rotation', ropeRotation(invFreq, Math.max(...positions) + 1)),
            norm:
              normDtype && qNorm && kNorm
                ? { q: uploadBytes(device, 'test.qNorm', qNorm.bytes), k: uploadBytes(device, 'test.kNorm', kNorm.bytes), dtype: normDtype, eps }
                : undefined,
          },
        ),
      ]);
      const got = await readFloat32(device, buffer, N * W);
      const want = ropeReference(qkv, positions, invFreq, { N, NH, NKV, HS }, qNorm && kNorm ? { q: qNorm.values, k: kNorm.values, eps } : undefined);
      expectClose(got, want, { abs: 1e-5, rel: 1e-5, label: 'qkv' });
      const v0 = (NH + NKV) * HS;
      expect(got.subarray(v0, W)).toEqual(qkv.subarray(v0, W));
    });
  }

  it('rotates rows first .. first + N − 1 of a longer qkv (a decoder cache), leaving the others', async () => {
    const { device } = gpu;
    const [N, NH, NKV, HS, first] = [3, 2, 1, 64, 5];
    const W = (NH + 2 * NKV) * HS;
    const qkv = randomActivations(createRng(3), (first + N + 2) * W);
    const positions = Uint32Array.from([5, 6, 7]);
    const invFreq = ropeInverseFrequencies({ headDim: HS, ropeTheta: 10000, ropeScaling: { type: 'none' } });
    const buffer = uploadStorage(device, 'test.qkv', qkv);
    await submitValidated(device, 'test.rope', () => [
      createRope(
        device,
        { N, NH, NKV, HS, first },
        {
          qkv: buffer,
          positions: uploadStorage(device, 'test.positions', positions),
          rotation: uploadStorage(device, 'test.rotation', ropeRotation(invFreq, 8)),
        },
      ),
    ]);
    const got = await readFloat32(device, buffer, (first + N + 2) * W);
    const want = Float64Array.from(qkv);
    want.set(ropeReference(qkv.subarray(first * W, (first + N) * W), positions, invFreq, { N, NH, NKV, HS }), first * W);
    expectClose(got, want, { abs: 1e-5, rel: 1e-5, label: 'qkv' });
  });

  it('llama3 scaling keeps high frequencies, divides low ones by the factor, and interpolates between', () => {
    const f = ropeInverseFrequencies({
      headDim: 64,
      ropeTheta: 500000,
      ropeScaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
    });
    const plain = ropeInverseFrequencies({ headDim: 64, ropeTheta: 500000, ropeScaling: { type: 'none' } });
    expect(f[0]).toBe(plain[0]);
    expect(f[31]).toBeCloseTo(plain[31] / 32, 15);
    const mid = Array.from(f.keys()).filter((d) => f[d] !== plain[d] && Math.abs(f[d] - plain[d] / 32) > 1e-18);
    expect(mid.length).toBeGreaterThan(0);
    for (const d of mid) expect(f[d] < plain[d] && f[d] > plain[d] / 32).toBe(true);
  });
});
