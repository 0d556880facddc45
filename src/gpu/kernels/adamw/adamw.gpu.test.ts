import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { readFloat32, uploadStorage } from '../../runtime/buffers';
import {
  type Adamw,
  NonFiniteGradientError,
  SKIP_NON_FINITE,
  SKIP_OVERFLOW,
  createAdamw,
  encodeAdamwStep,
  finishAdamwStep,
  readAdamwState,
  writeAdamwState,
} from './adamw';
import { type AdamwHyper, DEFAULT_ADAMW, decayMask, lrAt } from '../../../objectives/adamw';
import { type AdamwReferenceState, adamwReferenceStep } from './adamw.reference';
import { loadOptimizerState, saveOptimizerState } from '../../../model/checkpoint';
import { presetConfig } from '../../../model/config';
import { initWeights, packParameters, parameterLayout } from '../../../model/params';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

// The tiny GPT-2 layout: ~39k floats in 10 reduction chunks, padding between tensors.
const config = presetConfig('tiny');
const layout = parameterLayout(config);
const n = layout.totalSize;
const initial = packParameters(initWeights(config, 3));
const schedule = { peak: 1e-3, warmup: 2, total: 10, min: 1e-4 };

// fp32 update against float64: params are rounded to fp32 each step (rel 1e-6) and move by ~lr = 1e-3
// per step; near-zero params (biases) get 1e-9 absolute, 1e-6 of one step's move.
const PARAMS = { abs: 1e-9, rel: 1e-6 };
// m and v are ~1e-3 and ~1e-5 in size; m can cancel (0.9·m + 0.1·g), so it gets an absolute bound of
// 1e-6 of its scale, v (a sum of positive terms) a relative one.
const MOMENTS = { abs: 1e-9, rel: 1e-5 };

/** Gradients N(0, 0.01²) on real floats, zero on padding (what the backward writes): ‖g‖ ≈ 1.9. */
function gradients(seed: number, std = 0.01): Float32Array {
  const rng = createRng(seed);
  const g = new Float32Array(n);
  for (const e of layout.entries) for (let i = e.offset; i < e.offset + e.size; i++) g[i] = rng.normal() * std;
  return g;
}

interface Trainer {
  adamw: Adamw;
  weights: GPUBuffer;
  grads: GPUBuffer;
  destroy(): void;
}

function trainer(hyper: AdamwHyper, start: Float32Array = initial): Trainer {
  const { device } = gpu;
  const weights = uploadStorage(device, 'test.weights', start);
  const grads = uploadStorage(device, 'test.grads', new Float32Array(n));
  const adamw = createAdamw(device, { layout, weights, grads, hyper });
  const destroy = () => {
    weights.destroy();
    grads.destroy();
    adamw.destroy();
  };
  return { adamw, weights, grads, destroy };
}

/** One optimizer step as the engine runs it: gradients in place, then encode, submit, finish. */
async function step(t: Trainer, g: Float32Array): Promise<ReturnType<typeof finishAdamwStep>> {
  const { device } = gpu;
  device.queue.writeBuffer(t.grads, 0, g);
  device.pushErrorScope('validation');
  const encoder = device.createCommandEncoder({ label: 'test.adamw.encoder' });
  const pass = encoder.beginComputePass({ label: 'test.adamw.pass' });
  encodeAdamwStep(device, pass, t.adamw, lrAt(t.adamw.step, schedule));
  pass.end();
  device.queue.submit([encoder.finish()]);
  expect((await device.popErrorScope())?.message).toBeUndefined();
  return finishAdamwStep(device, t.adamw);
}

async function snapshot(t: Trainer): Promise<{ weights: Float32Array; m: Float32Array; v: Float32Array }> {
  const { device } = gpu;
  return { weights: await readFloat32(device, t.weights, n), m: await readFloat32(device, t.adamw.m, n), v: await readFloat32(device, t.adamw.v, n) };
}

function referenceState(): AdamwReferenceState {
  return { params: Float64Array.from(initial), m: new Float64Array(n), v: new Float64Array(n), step: 0 };
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

describe('adamw.wgsl', () => {
  const CASES: [string, AdamwHyper, number][] = [
    ['clipping active (‖g‖ ≈ 1.9 > 1)', { ...DEFAULT_ADAMW, clip: 1 }, 1],
    ['clipping inactive (‖g‖ ≈ 1.9 < 5)', { ...DEFAULT_ADAMW, clip: 5 }, 5],
    ['clipping off, β2 0.999, no decay', { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, clip: 0 }, 0],
  ];
  for (const [name, hyper, clip] of CASES) {
    it(`matches adamwReferenceStep over 4 steps (${name})`, async () => {
      const t = trainer(hyper);
      const ref = referenceState();
      const mask = decayMask(layout);
      for (let k = 0; k < 4; k++) {
        const g = gradients(100 + k);
        const lr = lrAt(ref.step, schedule);
        const want = adamwReferenceStep(ref, g, mask, hyper, lr);
        const status = await step(t, g);
        expect(status.normSq).toBeCloseTo(want.normSq, 4);
        expect(Math.abs(status.scale - want.scale)).toBeLessThan(1e-6);
        expect(want.scale < 1).toBe(clip === 1);
        const got = await snapshot(t);
        const p = expectClose(got.weights, ref.params, { ...PARAMS, label: `${name} step ${k + 1} params` });
        const m = expectClose(got.m, ref.m, { ...MOMENTS, label: `${name} step ${k + 1} m` });
        const v = expectClose(got.v, ref.v, { ...MOMENTS, label: `${name} step ${k + 1} v` });
        console.log(
          `${name} step ${k + 1}: lr ${lr.toExponential(2)}, ‖g‖ ${status.norm.toFixed(6)} (ref ${Math.sqrt(want.normSq).toFixed(6)}), scale ${status.scale.toFixed(6)}; ` +
            `max abs diff params ${p.maxAbs.toExponential(2)}, m ${m.maxAbs.toExponential(2)}; max rel diff v ${v.maxRel.toExponential(2)}`,
        );
      }
      expect(t.adamw.step).toBe(4);
      // The parameters did move: by about lr per step, far above the tolerance.
      const moved = (await snapshot(t)).weights.reduce((s, x, i) => Math.max(s, Math.abs(x - initial[i])), 0);
      expect(moved).toBeGreaterThan(1e-3);
      t.destroy();
    });
  }

  it('leaves params, m, v and the step bit for bit on a NaN / Inf gradient, and reports it', async () => {
    const t = trainer(DEFAULT_ADAMW);
    await step(t, gradients(1));
    await step(t, gradients(2));
    const before = await snapshot(t);
    const bad = gradients(3);
    bad[123] = NaN;
    bad[layout.byName.get('h.1.mlp.c_fc.weight')!.offset + 7] = -Infinity;
    const error = await step(t, bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonFiniteGradientError);
    const status = (error as NonFiniteGradientError).status;
    expect(status.nonFinite).toBe(2);
    expect(status.skip).toBe(SKIP_NON_FINITE);
    expect((error as Error).message).toContain('update 3 was not applied: 2 gradient values are NaN or ±Inf');
    const after = await snapshot(t);
    expect(bits(after.weights)).toEqual(bits(before.weights));
    expect(bits(after.m)).toEqual(bits(before.m));
    expect(bits(after.v)).toEqual(bits(before.v));
    expect(t.adamw.step).toBe(2);
    // The run can go on (a caller that skips the batch): the next good step is update 3.
    expect((await step(t, gradients(4))).skip).toBe(0);
    expect(t.adamw.step).toBe(3);
    t.destroy();
  });

  it('skips a step whose Σ g² overflows fp32 though every value is finite', async () => {
    const t = trainer(DEFAULT_ADAMW);
    const before = await snapshot(t);
    const huge = gradients(5, 1e18); // Σ g² ≈ 39k · 1e36 > 3.4e38
    const error = await step(t, huge).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonFiniteGradientError);
    expect((error as NonFiniteGradientError).status).toMatchObject({ nonFinite: 0, skip: SKIP_OVERFLOW });
    expect(bits((await snapshot(t)).weights)).toEqual(bits(before.weights));
    t.destroy();
  });

  it('is deterministic: two runs give bit-identical params and moments', async () => {
    const runs = [];
    for (let r = 0; r < 2; r++) {
      const t = trainer(DEFAULT_ADAMW);
      for (let k = 0; k < 3; k++) await step(t, gradients(200 + k));
      runs.push(await snapshot(t));
      t.destroy();
    }
    expect(bits(runs[1].weights)).toEqual(bits(runs[0].weights));
    expect(bits(runs[1].m)).toEqual(bits(runs[0].m));
    expect(bits(runs[1].v)).toEqual(bits(runs[0].v));
  });

  it('resumes exactly: 3 steps + save + load + 2 steps == 5 steps, bit for bit', async () => {
    const grads = [0, 1, 2, 3, 4].map((k) => gradients(300 + k));
    const straight = trainer(DEFAULT_ADAMW);
    for (const g of grads) await step(straight, g);
    const want = await snapshot(straight);
    straight.destroy();

    const first = trainer(DEFAULT_ADAMW);
    for (const g of grads.slice(0, 3)) await step(first, g);
    const saved = saveOptimizerState(config, await readAdamwState(gpu.device, first.adamw));
    const weights = (await snapshot(first)).weights;
    first.destroy();

    const resumed = trainer(DEFAULT_ADAMW, weights);
    writeAdamwState(gpu.device, resumed.adamw, loadOptimizerState(saved, config));
    expect(resumed.adamw.step).toBe(3);
    for (const g of grads.slice(3)) await step(resumed, g);
    const got = await snapshot(resumed);
    expect(bits(got.weights)).toEqual(bits(want.weights));
    expect(bits(got.m)).toEqual(bits(want.m));
    expect(bits(got.v)).toEqual(bits(want.v));
    expect(resumed.adamw.step).toBe(5);
    resumed.destroy();
  });

  it('refuses to encode a second update before the first is finished', async () => {
    const t = trainer(DEFAULT_ADAMW);
    const { device } = gpu;
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    encodeAdamwStep(device, pass, t.adamw, 1e-3);
    expect(() => encodeAdamwStep(device, pass, t.adamw, 1e-3)).toThrow('update 1 is still pending');
    pass.end();
    device.queue.submit([encoder.finish()]);
    await finishAdamwStep(device, t.adamw);
    t.destroy();
  });
});
