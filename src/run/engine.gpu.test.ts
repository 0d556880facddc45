// The run engine on Dawn + SwiftShader, tiny model: lanes from one start, the exact lane at the
// conditioning-drift floor and the naive one off it, exact resume, refusals, the NaN guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { loadCheckpoint, loadOptimizerState } from '../model/checkpoint';
import { MODEL_PRESETS } from '../model/config';
import { initWeights, type ModelWeights } from '../model/params';
import { defaultRunConfig, runSpecOf, type RunConfig } from './config';
import { createRunEngine as createEngine, RunRefusedError, StepFailedError, type MetricRecord, type RunOptions, type StepHooks } from './engine';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const config: RunConfig = { ...defaultRunConfig('tiny'), methods: ['naive-compressed', 'packed-4d'], batch: 2, steps: 40, lr: 3e-3, evalEvery: 0 };
const weights = initWeights(MODEL_PRESETS.tiny, config.seed);

/** A browser run's engine, and its step as the records the page stores. */
function createRunEngine(gpu: Gpu, c: RunConfig, options: RunOptions & { weights: ModelWeights }) {
  const engine = createEngine(gpu, runSpecOf(c), options);
  return Object.assign(engine, { records: async (hooks?: StepHooks): Promise<MetricRecord[]> => (await engine.next(hooks)).map((s) => s.record!) });
}

describe('run engine', () => {
  it('two lanes from one start: loss falls in both; packed-4d sits at the drift floor, naive-compressed does not', async () => {
    const engine = createRunEngine(gpu, config, { weights });
    await engine.preflight();
    const records: MetricRecord[] = [];
    for (let i = 0; i < 12; i++) records.push(...(await engine.records()));
    engine.destroy();
    const of = (m: string) => records.filter((r) => r.method === m);
    for (const m of ['naive-compressed', 'packed-4d']) {
      const lane = of(m);
      expect(lane.map((r) => r.step)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(lane[11].loss).toBeLessThan(lane[0].loss * 0.9);
      expect(lane.every((r) => r.logdiff === null)).toBe(true); // SFT demonstrations: no rollout-logprob drift
    }
    // Same weights, same batch at step 1: the methods differ only in their plans.
    expect(of('packed-4d')[0].K).toBeGreaterThan(0);
    for (const r of of('packed-4d')) expect(r.conditioningDrift).toBe(0);
    for (const r of of('naive-compressed')) expect(r.conditioningDrift!).toBeGreaterThan(1e-3);
    expect(of('naive-compressed')[0].nPacked).toBeGreaterThan(of('naive-compressed')[0].nFinal);
  });

  it('evaluates every evalEvery steps: each lane model plays the held-out prompts greedily', async () => {
    const engine = createRunEngine(gpu, { ...config, evalEvery: 2 }, { weights });
    const lanes: string[] = [];
    const first = await engine.records({ lane: (m, phase) => lanes.push(`${m}:${phase ?? 'train'}`) });
    const second = await engine.records({ lane: (m, phase) => lanes.push(`${m}:${phase ?? 'train'}`) });
    engine.destroy();
    expect(first.every((r) => r.evalEm === null && r.evalReward === null)).toBe(true);
    for (const r of second) {
      // Mean exact match over `evalPrompts` prompts: a multiple of 1 / evalPrompts in [0, 1].
      expect(Number.isInteger(r.evalEm! * config.evalPrompts) && r.evalEm! >= 0 && r.evalEm! <= 1).toBe(true);
      expect(r.evalReward).not.toBeNull();
    }
    expect(lanes.slice(-2)).toEqual(['naive-compressed:eval', 'packed-4d:eval']);
  });

  it('a lane resumed from its checkpoint continues with the same losses', async () => {
    const straight = createRunEngine(gpu, { ...config, methods: ['packed-4d'] }, { weights });
    const losses: number[] = [];
    for (let i = 0; i < 4; i++) losses.push((await straight.records())[0].loss);
    straight.destroy();
    const first = createRunEngine(gpu, { ...config, methods: ['packed-4d'] }, { weights });
    await first.records();
    await first.records();
    const [saved] = await first.checkpoint();
    first.destroy();
    expect(saved.step).toBe(2);
    const w = loadCheckpoint(saved.weights);
    const resumed = createRunEngine(
      gpu,
      { ...config, methods: ['packed-4d'] },
      {
        weights,
        resume: { 'packed-4d': { weights: w, optimizer: loadOptimizerState(saved.optimizer, w.config) } },
      },
    );
    expect(resumed.step).toBe(2);
    for (let i = 2; i < 4; i++) expect((await resumed.records())[0].loss).toBe(losses[i]); // bit for bit
    resumed.destroy();
  });

  it('refuses naive-full when the physical tape is longer than the model positions, naming the limit', async () => {
    const engine = createRunEngine(gpu, { ...config, methods: ['naive-full'] }, { weights });
    const err = await engine.preflight().catch((e: unknown) => e);
    engine.destroy();
    expect(err).toBeInstanceOf(RunRefusedError);
    expect((err as Error).message).toMatch(/n_positions 128/);
  });

  it('refuses a batch beyond the adapter buffer limit, naming it', async () => {
    // Rows x 4C floats (the MLP activations) outgrow the largest storage binding.
    const limit = Math.min(gpu.device.limits.maxStorageBufferBindingSize, gpu.device.limits.maxBufferSize);
    const big = { ...defaultRunConfig('default'), methods: ['packed-4d' as const], batch: Math.ceil(limit / (4 * 4 * 128) / 250) };
    const engine = createRunEngine(gpu, big, { weights: initWeights(MODEL_PRESETS.default, 1) });
    const started = performance.now();
    const err = await engine.preflight().catch((e: unknown) => e);
    console.log(`preflight of ${big.batch} rollouts: ${(performance.now() - started).toFixed(0)} ms`);
    engine.destroy();
    expect(err).toBeInstanceOf(RunRefusedError);
    expect((err as Error).message).toMatch(/maxStorageBufferBindingSize/);
  });

  it('a non-finite gradient fails the lane without an update; the other lane advances', async () => {
    const poisoned = initWeights(MODEL_PRESETS.tiny, 3);
    poisoned.tensors.get('h.0.mlp.c_fc.weight')![5] = NaN;
    const engine = createRunEngine(gpu, { ...config, methods: ['packed-4d'] }, { weights: poisoned });
    const err = await engine.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepFailedError);
    expect((err as StepFailedError).nonFinite).toBe(true);
    expect((err as Error).message).toMatch(/not applied/);
    expect(engine.step).toBe(0);
    const after = await engine.lanes[0].trainer.readWeights();
    expect(Number.isNaN(after.tensors.get('h.0.mlp.c_fc.weight')![5])).toBe(true);
    expect(after.tensors.get('h.0.mlp.c_fc.weight')![6]).toBe(poisoned.tensors.get('h.0.mlp.c_fc.weight')![6]);
    engine.destroy();
  });
});
