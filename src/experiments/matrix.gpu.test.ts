// A tiny end-to-end experiment matrix (issue 7): a warm start of a few SFT steps on expert
// demonstrations, then runMatrix under compaction with one RL update per method. No errors, finite
// metrics, and the exact methods at the floor: their replay of the model's own rollouts matches the
// rollout-time logprobs, before training (drift) and in the RL step itself.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { createGpuModelPolicy } from '../gpu/generate';
import type { GpuModel } from '../gpu/model';
import { createTrainer } from '../gpu/train';
import { planStep } from '../objectives/step';
import { generateDataset } from '../harness/dataset';
import { editorSpec } from '../harness/editors';
import { createEnv, type EnvSpec } from '../harness/env';
import { createExpertPolicy } from '../harness/policies/expert';
import { describeSampling, type ModelPolicyOptions } from '../harness/policies/model';
import { MODEL_PRESETS, type ModelConfig } from '../model/config';
import { initWeights, type ModelWeights } from '../model/params';
import { METHODS, SEQUENCE_METHODS } from '../plan/types';
import { validateRollout } from '../rollout/validate';
import { episodeLimits, type MatrixConfig, type MatrixEvent, type MatrixResults } from './matrix';
import { runMatrix } from './run';
import { curvesSvg, driftSvg, matrixTable } from './report';

/**
 * Tiny, with room for whole episodes: naive-full replays the physical tape, which outgrows the
 * live view under compaction, and a rollout is used only when every method fits in the positions.
 */
const config: ModelConfig = { ...MODEL_PRESETS.tiny, nPositions: 1024 };
/** Short lookups (two hops, one distractor, no filler): turns of ~50 tokens, so a budget of 100 compacts every few turns. */
const env: EnvSpec = { id: 'lookup', hops: 2, distractors: 1, filler: 0 };
const compact = editorSpec('compact', { budget: 100, keepTurns: 1 });
const FLOOR = 1e-4;

let gpu: Gpu;
let warm: ModelWeights;
let results: MatrixResults;
const events: MatrixEvent['kind'][] = [];
const samplers: string[] = [];

beforeAll(async () => {
  gpu = await createGpu();
  // Warm start: 20 SFT updates (packed-4d) on 16 expert episodes under the same editor. Enough for
  // newline-terminated actions, so episodes run several turns and compaction fires.
  const expert = await generateDataset({ env, editor: compact, n: 16, seed: 1 }, createExpertPolicy(createEnv(env)));
  const data = expert.rollouts.map((json) => validateRollout(json, { file: json.id }));
  const trainer = createTrainer(gpu, initWeights(config, 3), { schedule: { peak: 1e-2, warmup: 0, total: 20, min: 1e-2 } });
  try {
    for (let step = 0; step < 20; step++) {
      const batch = [0, 1, 2, 3].map((i) => data[(4 * step + i) % data.length]);
      await trainer.trainStep(planStep(batch, { method: 'packed-4d', objective: 'sft', conditioningDrift: false }));
    }
    warm = await trainer.readWeights();
  } finally {
    trainer.destroy();
  }
  const matrix: MatrixConfig = {
    env,
    editors: [compact],
    methods: METHODS,
    n: 2,
    group: 2,
    seed: 5,
    steps: 1,
    evalN: 1,
    lr: 1e-3,
    // The drift batch sampled like a serving engine; the RL batches at temperature 1.
    driftSampling: { temperature: 0.7, topK: 20, topP: 0.8 },
    lambda: 0.1,
    bins: 10,
    episode: { ...episodeLimits(config), maxActTokens: 40 },
  };
  const createPolicy = (model: GpuModel, options: ModelPolicyOptions) => {
    samplers.push(describeSampling(options));
    return createGpuModelPolicy(model, options);
  };
  results = await runMatrix(matrix, warm, { gpu, createPolicy }, { onEvent: (e) => void events.push(e.kind) });
});

afterAll(() => gpu?.destroy());

describe('runMatrix, tiny, under compaction', () => {
  it("generates the checkpoint's rollouts with edits and diverging leaves, all replayable", () => {
    expect(results.editors).toHaveLength(1);
    const r = results.editors[0];
    expect(r.editor).toBe('compact');
    expect(r.rollouts.batch).toMatchObject({ rollouts: 4, usable: 4 });
    expect(r.rollouts.batch.K).toBeGreaterThan(0);
    expect(r.rollouts.batch.divergingLeaves).toBeGreaterThan(0);
    expect(events).toEqual(['rollouts', 'baseline', ...METHODS.flatMap(() => ['step', 'run'])]);
    // Drift batch as configured, the baseline greedy, one temperature-1 batch for every run's update 1, each run's evaluation greedy.
    expect(samplers).toEqual(['T=0.7, top-k=20, top-p=0.8', 'T=0', 'T=1', ...METHODS.map(() => 'T=0')]);
  });

  it('drift: the exact methods reproduce the rollout logprobs; the naive ones do not', () => {
    const { drift, rollouts } = results.editors[0];
    for (const method of ['logit-tree', 'packed-4d'] as const) {
      expect(drift.methods[method].n).toBe(rollouts.batch.targets);
      expect(drift.methods[method].logdiff).toBeLessThan(FLOOR);
    }
    // Compaction moves the diverging leaves' prefixes: naive-compressed leaves the floor.
    expect(drift.methods['naive-compressed'].logdiff).toBeGreaterThan(10 * FLOOR);
    expect(drift.methods['naive-compressed'].sign.rollout.diverging).toBeGreaterThan(0);
    for (const method of SEQUENCE_METHODS) expect(drift.methods[method].histogram.rollout.counts.reduce((a, b) => a + b, 0)).toBe(drift.methods[method].n);
    // The expected drift under the batch's own sampler: none for the exact methods, some for naive-compressed.
    const { expected } = results.editors[0];
    expect(expected.sampling).toEqual({ temperature: 0.7, topK: 20, topP: 0.8 });
    for (const method of SEQUENCE_METHODS) expect(expected.methods[method]!.n).toBe(drift.methods[method].scored);
    for (const method of ['logit-tree', 'packed-4d'] as const) expect(Math.abs(expected.methods[method]!.mu!)).toBeLessThan(1e-5);
    expect(expected.methods['naive-compressed']!.sign.diverging).toBeGreaterThan(0);
  });

  it('one RL update per method: finite metrics, the exact methods at the floor, SDCC fires on diverging leaves', () => {
    const { runs, rollouts } = results.editors[0];
    for (const method of METHODS) {
      const run = runs[method]!;
      expect(run.stopped).toBeNull();
      expect(run.steps).toHaveLength(1);
      const [step] = run.steps;
      expect(step.skipped).toBeNull();
      const m = step.metrics!;
      for (const v of [m.loss, m.taskLoss, m.klSdcc, m.gradNorm, m.stepMs, m.logdiff!, m.mu!]) expect(Number.isFinite(v)).toBe(true);
      expect(m).toMatchObject({ method, objective: 'rl', step: 1 });
      expect(m.tokens).toBeGreaterThan(0);
      expect(run.final.em).toBeGreaterThanOrEqual(0);
      expect(run.final.em).toBeLessThanOrEqual(1);
      expect(run.summary.updates).toBe(1);
    }
    // Every run's update 1 trains on the same temperature-1 batch of the checkpoint (not the drift batch,
    // which was sampled otherwise): logit-tree scores every target of it, on-policy at the floor.
    const first = runs[METHODS[0]]!.steps[0];
    expect(first.generateMs).toBeGreaterThan(0);
    for (const method of METHODS.slice(1)) expect(runs[method]!.steps[0]).toMatchObject({ batch: first.batch, generateMs: 0 });
    expect(first.batch).not.toEqual(rollouts.batch);
    expect(runs['logit-tree']!.steps[0].metrics!.targets).toBe(first.batch.targets);
    expect(runs['logit-tree']!.steps[0].metrics!.logdiff).toBeLessThan(FLOOR);
    expect(runs['packed-4d']!.steps[0].metrics!.logdiff).toBeLessThan(FLOOR);
    expect(runs['naive-compressed']!.steps[0].metrics!.logdiff).toBeGreaterThan(10 * FLOOR);
    const sdcc = runs.sdcc!.steps[0].metrics!;
    expect(sdcc.klFired).toBe(true);
    expect(sdcc.klSdcc).toBeGreaterThan(0);
    // SDCC's student is the compressed walk: its drift is naive-compressed's on the same batch and weights.
    expect(sdcc.logdiff).toBeCloseTo(runs['naive-compressed']!.steps[0].metrics!.logdiff!, 5);
  });

  it('writes a table with every cell and SVGs in the method colours', () => {
    const table = matrixTable(results);
    for (const method of METHODS) expect(table).toMatch(new RegExp(`^\\| compact \\| ${method} \\| `, 'm'));
    const drift = driftSvg(results.editors[0]);
    const curves = curvesSvg(results.editors[0], METHODS);
    for (const svg of [drift, curves]) {
      expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      expect(svg).not.toMatch(/NaN|undefined/);
    }
    expect(drift).toContain('#ff6b6b'); // naive-compressed's bars
    expect(curves).toContain('#c792ea'); // sdcc's points
  });
});
