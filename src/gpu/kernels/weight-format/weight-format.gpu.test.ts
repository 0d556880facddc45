// The two ways the weight kernels read 16-bit words: `unpack` (u32 words, unpack2x16float / shift) and
// `f16` (native f16 loads, WGSL `enable f16`, where the device has `shader-f16`). Each path that this
// device offers runs linear, embed, rmsnorm and rope's q/k norm on F16 weights against the float64
// references within the kernels' own bounds; the choice between them follows the device's features.
// Dawn on SwiftShader (Node) and Chromium on SwiftShader expose no `shader-f16`: there the `f16` runs
// are skipped (reported as skipped) and the selection falls back to `unpack`, which the tests assert.

import { describe, expect, it } from 'vitest';
import { ropeInverseFrequencies } from '../../../model/family/config';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { gpuEntryPoint, type Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { createEmbed } from '../embed/embed';
import { embedReference } from '../embed/embed.reference';
import { randomActivations, randomWeights, uploadBytes } from '../kernels.testing';
import { createLinear } from '../linear/linear';
import { linearRef } from '../linear/linear.reference';
import { createRmsnorm } from '../rmsnorm/rmsnorm';
import { rmsnormRef } from '../rmsnorm/rmsnorm.reference';
import { createRope, ropeRotation } from '../rope/rope';
import { ropeReference } from '../rope/rope.reference';
import { hasShaderF16, weightFormatWgsl, weightReads, type WeightReads } from './weight-format';

let gpu: Gpu;
useGpu((g) => (gpu = g));

/** Whether this machine's adapter offers shader-f16 (createGpu then asks for it). */
const adapterHasF16 = (await (await gpuEntryPoint()).requestAdapter({ powerPreference: 'high-performance' }))?.features.has('shader-f16') ?? false;

describe('weight reads: selection', () => {
  it('asks for shader-f16 exactly when the adapter has it, and reads F16 natively only then', () => {
    const { device } = gpu;
    expect(hasShaderF16(device)).toBe(adapterHasF16);
    expect(weightReads(device, 'F16')).toBe(adapterHasF16 ? 'f16' : 'unpack');
    expect(weightReads(device, 'BF16')).toBe('unpack');
    expect(weightReads(device, 'F32')).toBe('unpack');
    expect(weightReads(device, 'F16', 'unpack')).toBe('unpack');
  });

  it('refuses native f16 loads for BF16 and F32, and on a device without shader-f16, in one line', () => {
    const { device } = gpu;
    expect(() => weightReads(device, 'BF16', 'f16')).toThrow('weight reads: native f16 loads read F16 weights, not BF16');
    expect(() => weightReads(device, 'F32', 'f16')).toThrow('not F32');
    if (!adapterHasF16) {
      expect(() => weightReads(device, 'F16', 'f16')).toThrow('weight reads: native f16 loads need the shader-f16 feature, which this device lacks');
    }
  });

  it('the f16 path declares `enable f16` first and binds words of vec2<f16>; the unpack path binds u32', () => {
    const f16 = weightFormatWgsl('f16');
    expect(f16.startsWith('enable f16;\n')).toBe(true);
    expect(f16).toContain('alias WeightWord = vec2<f16>;');
    expect(weightFormatWgsl('unpack')).not.toContain('f16;');
    expect(weightFormatWgsl('unpack')).toContain('alias WeightWord = u32;');
  });
});

const PATHS: WeightReads[] = ['unpack', 'f16'];

describe.each(PATHS)('F16 weights read by the %s path', (reads) => {
  const runs = reads === 'unpack' || adapterHasF16;

  it.runIf(runs)('linear (70, 128) · (96, 128)ᵀ + bias: within 1e-5 relative', async () => {
    const { device } = gpu;
    const [M, K, N] = [70, 128, 96];
    const rng = createRng(11);
    const x = randomActivations(rng, M * K);
    const w = randomWeights(rng, 'F16', N * K, 0.2);
    const b = randomWeights(rng, 'F16', N, 0.5);
    const y = createStorage(device, 'test.y', M * N * 4);
    await submitValidated(device, 'test.linear', () => [
      createLinear(
        device,
        { M, K, N },
        'F16',
        { x: uploadStorage(device, 'test.x', x), w: uploadBytes(device, 'test.w', w.bytes), bias: uploadBytes(device, 'test.bias', b.bytes), y },
        { reads },
      ),
    ]);
    expectClose(await readFloat32(device, y, M * N), linearRef(x, w.values, b.values, M, K, N), { abs: 1e-5, rel: 1e-5, label: 'y' });
  });

  it.runIf(runs)('embed: rows of a (50, 64) table in two vocabulary blocks, exact', async () => {
    const { device } = gpu;
    const [V, C] = [50, 64];
    const table = randomWeights(createRng(12), 'F16', V * C);
    const tokens = Uint32Array.from([0, 49, 17, 30, 17, 2]);
    const out = createStorage(device, 'test.out', tokens.length * C * 4);
    const split = 30;
    await submitValidated(device, 'test.embed', () =>
      createEmbed(
        device,
        { N: tokens.length, C },
        'F16',
        {
          tokens: uploadStorage(device, 'test.tokens', tokens),
          table: [
            { block: { first: 0, end: split }, ref: uploadBytes(device, 'test.table0', table.bytes.subarray(0, split * C * 2)) },
            { block: { first: split, end: V }, ref: uploadBytes(device, 'test.table1', table.bytes.subarray(split * C * 2)) },
          ],
          out,
        },
        { reads },
      ),
    );
    expect(Array.from(await readFloat32(device, out, tokens.length * C))).toEqual(Array.from(embedReference(table.values, tokens, C)));
  });

  it.runIf(runs)('rmsnorm (33, 256), eps 1e-5: within 2e-6 relative', async () => {
    const { device } = gpu;
    const [N, C, eps] = [33, 256, 1e-5];
    const rng = createRng(13);
    const x = randomActivations(rng, N * C);
    const w = randomWeights(rng, 'F16', C, 0.5, 1);
    const out = createStorage(device, 'test.out', N * C * 4);
    await submitValidated(device, 'test.rmsnorm', () => [
      createRmsnorm(device, { N, C, eps }, 'F16', { x: uploadStorage(device, 'test.x', x), weight: uploadBytes(device, 'test.w', w.bytes), out }, { reads }),
    ]);
    expectClose(await readFloat32(device, out, N * C), rmsnormRef(x, w.values, N, C, eps), { abs: 1e-6, rel: 2e-6, label: 'out' });
  });

  it.runIf(runs)("rope after Qwen3's q/k norm, HS 128, NH/NKV 4/2: within 1e-5", async () => {
    const { device } = gpu;
    const [N, NH, NKV, HS, eps] = [9, 4, 2, 128, 1e-6];
    const rng = createRng(14);
    const W = (NH + 2 * NKV) * HS;
    const qkv = randomActivations(rng, N * W);
    const positions = Uint32Array.from({ length: N }, (_, i) => 3 + (i < 5 ? i : i - 3));
    const invFreq = ropeInverseFrequencies({ headDim: HS, ropeTheta: 1e6, ropeScaling: { type: 'none' } });
    const q = randomWeights(rng, 'F16', HS, 0.5, 1);
    const k = randomWeights(rng, 'F16', HS, 0.5, 1);
    const buffer = uploadStorage(device, 'test.qkv', qkv);
    await submitValidated(device, 'test.rope', () => [
      createRope(
        device,
        { N, NH, NKV, HS },
        {
          qkv: buffer,
          positions: uploadStorage(device, 'test.positions', positions),
          rotation: uploadStorage(device, 'test.rotation', ropeRotation(invFreq, Math.max(...positions) + 1)),
          norm: { q: uploadBytes(device, 'test.qNorm', q.bytes), k: uploadBytes(device, 'test.kNorm', k.bytes), dtype: 'F16', eps },
        },
        { reads },
      ),
    ]);
    const want = ropeReference(qkv, positions, invFreq, { N, NH, NKV, HS }, { q: q.values, k: k.values, eps });
    expectClose(await readFloat32(device, buffer, N * W), want, { abs: 1e-5, rel: 1e-5, label: 'qkv' });
  });
});
