// Scoring keeps two layers' activations and one block of targets' logits at a time (src/gpu/score.ts,
// createHiddenForward), and gives every target exactly what the full forward gives: the same
// log-probabilities and rows bit for bit, over several head blocks, with rows of a subset; a
// forward-only createForward gives the kept forward's logits and refuses a backward.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildPlan } from '../plan/build';
import { packBatch } from '../plan/batch';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import { createStorage, readFloat32, uploadStorage } from './runtime/buffers';
import { createGpu, type Gpu } from './runtime/device';
import { encodeLaunches, releaseLaunches } from './runtime/kernel';
import { setBindingLimit } from './runtime/limits';
import { createLogsoftmaxGather, createLogsoftmaxRows } from './kernels/logsoftmax/logsoftmax';
import { createForward, createGpuModel, type BatchInput, type GpuModel } from './model';
import { headBlockRows, scoreSequences } from './score';

let gpu: Gpu;
let model: GpuModel;
/**
 * Three layers, so the forward-only pass reuses a set (layer 2 writes over layer 0's); a vocabulary
 * wide enough that a binding of 64 logit rows still holds every activation of the batch.
 */
const config = { vocabSize: 4096, nEmbd: 32, nLayer: 3, nHead: 2, nPositions: 512 };
beforeAll(async () => {
  gpu = await createGpu();
  model = createGpuModel(gpu, randomWeights(config, 5));
});
afterEach(() => setBindingLimit(gpu.device, undefined));
afterAll(() => {
  model?.destroy();
  gpu?.destroy();
});

const rollout = validateRollout(generateRandomRollout({ seed: 4, size: 'large', tokens: 300, edits: 4 }), { file: 'r4' });
const plan = buildPlan(deriveTree(rollout), 'packed-4d');
const batch = packBatch(plan.sequences);

function run(encode: (pass: GPUComputePassEncoder) => void): void {
  const encoder = gpu.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  encode(pass);
  pass.end();
  gpu.device.queue.submit([encoder.finish()]);
}

/** The kept forward's (N, V) logits, and each target's log-probability and row computed from them. */
async function fullForward(input: BatchInput, forwardOnly = false) {
  const { device } = gpu;
  const V = config.vocabSize;
  const forward = createForward(model, input, { forwardOnly });
  const R = batch.targets.length;
  const rows = uploadStorage(
    device,
    'test.rows',
    Uint32Array.from(batch.targets, (t) => t.predictor),
  );
  const tokens = uploadStorage(
    device,
    'test.tokens',
    Uint32Array.from(batch.targets, (t) => t.token),
  );
  const lse = createStorage(device, 'test.lse', R * 4);
  const rowLse = createStorage(device, 'test.rowLse', R * 4);
  const logprobs = createStorage(device, 'test.logprobs', R * 4);
  const out = createStorage(device, 'test.out', R * V * 4);
  const shape = { R, V, M: forward.N };
  const launches = [
    ...createLogsoftmaxGather(device, shape, { logits: forward.logits, rows, tokens, lse, logprobs }),
    ...createLogsoftmaxRows(device, shape, { logits: forward.logits, rows, lse: rowLse, out }),
  ];
  run((pass) => {
    forward.encode(pass);
    encodeLaunches(pass, launches);
  });
  const result = {
    logits: await readFloat32(device, forward.logits, forward.N * V),
    logprobs: await readFloat32(device, logprobs, R),
    rows: await readFloat32(device, out, R * V),
    forward,
  };
  releaseLaunches(launches);
  [rows, tokens, lse, rowLse, logprobs, out].forEach((b) => b.destroy());
  return result;
}

/** Index of the first element where two arrays differ as floats, bit for bit; -1 when none. */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

describe('scoring without a batch of logits', () => {
  it('the batch has targets enough for several head blocks of 64', () => {
    expect(batch.targets.length).toBeGreaterThan(128);
  });

  it('a forward-only pass gives the kept forward logits bit for bit, and refuses a backward', async () => {
    const kept = await fullForward(batch);
    const only = await fullForward(batch, true);
    const i = firstDifference(only.logits, kept.logits);
    expect(i, i >= 0 ? `logit ${i}: ${only.logits[i]} vs ${kept.logits[i]}` : '').toBe(-1);
    expect(() => only.forward.encodeBackward(gpu.device.createCommandEncoder().beginComputePass(), createStorage(gpu.device, 'd', 4))).toThrow(/forward-only/);
    kept.forward.destroy();
    only.forward.destroy();
  });

  it('gives every target its full-forward log-probability and row, bit for bit, in blocks of 64 and with rows of a subset', async () => {
    const full = await fullForward(batch);
    full.forward.destroy();
    const V = config.vocabSize;
    // A binding of 64 logit rows: the head runs in ceil(R / 64) blocks.
    setBindingLimit(gpu.device, 64 * V * 4 + 256);
    expect(headBlockRows(model)).toBe(64);
    const scored = await scoreSequences(model, plan.sequences, { rows: true, maxRows: batch.tokens.length });
    expect(scored.map((t) => t.id)).toEqual(batch.targets.map((t) => t.id));
    let i = firstDifference(
      Float32Array.from(scored, (t) => t.logprob),
      full.logprobs,
    );
    expect(i, i >= 0 ? `target ${i}: ${scored[i].logprob} vs ${full.logprobs[i]}` : '').toBe(-1);
    const rows = new Float32Array(scored.length * V);
    scored.forEach((t, j) => rows.set(t.row!, j * V));
    i = firstDifference(rows, full.rows);
    expect(i, i >= 0 ? `row value ${i}: ${rows[i]} vs ${full.rows[i]}` : '').toBe(-1);

    // Rows of every third target only: the same values at those, none elsewhere, log-probabilities unchanged.
    const some = new Set(batch.targets.filter((_, j) => j % 3 === 0).map((t) => t.id));
    const subset = await scoreSequences(model, plan.sequences, { rows: (id) => some.has(id), maxRows: batch.tokens.length });
    expect(subset.map((t) => t.logprob)).toEqual(scored.map((t) => t.logprob));
    subset.forEach((t, j) => {
      if (some.has(t.id)) expect(firstDifference(t.row!, scored[j].row!)).toBe(-1);
      else expect(t.row).toBeUndefined();
    });
  });

  it('allocates two layers of activations and one block of logits, never a layer per layer nor (N, V) logits', async () => {
    const created: { label: string; size: number }[] = [];
    const device = gpu.device;
    const create = device.createBuffer.bind(device);
    device.createBuffer = (descriptor: GPUBufferDescriptor) => {
      created.push({ label: descriptor.label ?? '', size: descriptor.size });
      return create(descriptor);
    };
    try {
      setBindingLimit(device, 64 * config.vocabSize * 4 + 256);
      await scoreSequences(model, plan.sequences, { maxRows: batch.tokens.length });
    } finally {
      device.createBuffer = create;
    }
    const labels = new Set(created.map((b) => b.label));
    const layerBuffers = [...labels].filter((l) => /^Forward\.h\d+\./.test(l));
    expect(new Set(layerBuffers.map((l) => l.split('.')[1]))).toEqual(new Set(['h0', 'h1'])); // of 3 layers
    expect(layerBuffers.filter((l) => l.endsWith('.fcPre'))).toEqual([]);
    expect(labels.has('Forward.logits')).toBe(false);
    const logits = created.find((b) => b.label === 'Score.logits')!;
    expect(logits.size).toBe(64 * config.vocabSize * 4);
  });
});
