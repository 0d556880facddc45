// The tied head and the token embedding bound in blocks (src/gpu/runtime/limits.ts): the head against the
// float64 reference with one and with several vocabulary blocks, and a whole model whose wte must
// be split giving the logits of the unsplit model.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStorage, readFloat32, uploadStorage } from './runtime/buffers';
import { createGpu, type Gpu } from './runtime/device';
import { createHead } from './head';
import { releaseLaunches, submitValidated } from './runtime/kernel';
import { setBindingLimit } from './runtime/limits';
import { createForward, createGpuModel } from './model';
import { matmulRef } from './kernels/matmul/matmul.reference';
import { randomWeights } from '../model/random-weights';
import { expectClose } from '../testing/close';
import { createRng } from '../util/prng';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterEach(() => setBindingLimit(gpu.device, undefined));
afterAll(() => gpu?.destroy());

const rng = createRng(11);
const uniform = (n: number) => Float32Array.from({ length: n }, () => rng.next() * 2 - 1);

/** wte (V, C) transposed to (C, V), so the reference's x · W is x · wteᵀ. */
function transpose(wte: Float32Array, V: number, C: number): Float32Array {
  const out = new Float32Array(V * C);
  for (let v = 0; v < V; v++) for (let c = 0; c < C; c++) out[c * V + v] = wte[v * C + c];
  return out;
}

describe('createHead', () => {
  for (const { N, C, V, limit, blocks } of [
    { N: 37, C: 24, V: 300, limit: undefined, blocks: 1 },
    { N: 37, C: 24, V: 300, limit: 128 * 24 * 4, blocks: 3 }, // 128 + 128 + 44 vocabulary rows
    { N: 5, C: 8, V: 129, limit: 64 * 8 * 4, blocks: 3 }, // the last block holds one row
  ]) {
    it(`logits (N=${N}, V=${V}) = x · wteᵀ in ${blocks} block${blocks > 1 ? 's' : ''} of wte`, async () => {
      const { device } = gpu;
      setBindingLimit(device, limit);
      const x = uniform(N * C);
      const wte = uniform(V * C);
      const b = { x: uploadStorage(device, 'test.x', x), wte: uploadStorage(device, 'test.wte', wte), logits: createStorage(device, 'test.logits', N * V * 4) };
      const launches = await submitValidated(device, 'test.head', () => createHead(device, { N, C, V }, b));
      expect(launches).toHaveLength(blocks);
      expectClose(await readFloat32(device, b.logits, N * V), matmulRef(x, transpose(wte, V, C), null, N, C, V), { abs: 1e-5, label: 'logits' });
      releaseLaunches(launches);
      Object.values(b).forEach((buf) => buf.destroy());
    });
  }
});

describe('a model whose token embedding exceeds one binding', () => {
  it('gives the logits of the same model bound whole', async () => {
    const config = { vocabSize: 600, nEmbd: 32, nLayer: 1, nHead: 2, nPositions: 64 };
    const model = createGpuModel(gpu, randomWeights(config, 3));
    const tokens = [0, 130, 260, 390, 520, 599]; // one in each block of 128 rows; logits (6, 600) bind whole
    const input = { tokens, positions: tokens.map((_, i) => i), end: tokens.map(() => tokens.length) };
    const logitsOf = async () => {
      const forward = createForward(model, input);
      const encoder = gpu.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      forward.encode(pass);
      pass.end();
      gpu.device.queue.submit([encoder.finish()]);
      const logits = await readFloat32(gpu.device, forward.logits, tokens.length * config.vocabSize);
      const launches = forward.launches.length;
      forward.destroy();
      return { logits, launches };
    };
    const whole = await logitsOf();
    setBindingLimit(gpu.device, 128 * 32 * 4); // wte (600, 32) in 5 blocks
    const split = await logitsOf();
    // The embedding and the head each launch once per block: 4 more launches each.
    expect(split.launches - whole.launches).toBe(8);
    expectClose(split.logits, whole.logits, { abs: 1e-6, label: 'logits' });
    expect(() => createForward(model, input).encodeBackward(gpu.device.createCommandEncoder().beginComputePass(), createStorage(gpu.device, 'd', 4))).toThrow(
      /model does not fit the adapter for training: its 0\.1 MiB of parameters must bind whole/,
    );
    model.destroy();
  });
});
