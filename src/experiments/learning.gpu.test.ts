// The learning experiment's machinery end to end on Dawn + SwiftShader with a tiny model (issue 20):
// every method, seed and editor gets its SFT and RL runs and the sweep its SDCC runs, each with
// finite figures and held-out EM at the start, every evaluation and the end; the RL runs of a seed
// share their first batch; the report and the app's reference curves come out of the results.
// The real `--quick` run on the weak start is a bench (npm run bench -- learning).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { editorSpec } from '../harness/editors';
import { MODEL_PRESETS, type ModelConfig } from '../model/config';
import { initWeights } from '../model/params';
import { METHODS } from '../plan/types';
import { referencePhase } from '../run/reference';
import { learningJobs, learningUnits, phaseRunConfig, referenceCurves, summarizeGroups, type LearningConfig, type LearningResults } from './learning';
import { runLearning, type LearningEvent } from './learning-run';
import { learningFigures, learningTable } from './learning-report';

/** Tiny, with room for whole episodes (naive-full replays the physical tape). */
const model: ModelConfig = { ...MODEL_PRESETS.tiny, nPositions: 1024 };
const config: LearningConfig = {
  checkpoint: 'tiny.safetensors',
  env: { id: 'lookup', hops: 2, distractors: 1, filler: 0 },
  editors: [editorSpec('window', { budget: 60 }), editorSpec('compact', { budget: 60 })],
  methods: METHODS,
  seeds: [1, 2],
  lambda: 0.1,
  sweep: [0.01, 0.1, 0.3],
  gated: [0.1],
  maxActTokens: 8,
  sft: { updates: 2, prompts: 1, group: 1, lr: 1e-3, evalEvery: 2 },
  rl: { updates: 2, prompts: 1, group: 2, lr: 1e-3, evalEvery: 2 },
  eval: { prompts: 1 },
};

let gpu: Gpu;
let results: LearningResults;
const events: LearningEvent[] = [];
let units = 0;

beforeAll(async () => {
  gpu = await createGpu();
  results = await runLearning(config, initWeights(model, 4), gpu, {
    onEvent(event, progress) {
      events.push(event);
      units = progress.done;
      expect(progress.total).toBe(learningUnits(config));
    },
  });
}, 600_000);
afterAll(() => gpu?.destroy());

const finite = (v: number | null) => v === null || Number.isFinite(v);

describe('learning experiment (tiny model)', () => {
  it('runs every method, seed and editor under SFT and RL, and SDCC at every other λ of the sweep', () => {
    const expected = config.seeds.length * config.editors.length * learningJobs(config).length;
    expect(results.runs).toHaveLength(expected);
    for (const seed of config.seeds)
      for (const editor of config.editors) {
        for (const phase of ['sft', 'rl'] as const)
          for (const method of METHODS)
            expect(results.runs.filter((r) => r.seed === seed && r.editor === editor.kind && r.phase === phase && r.method === method)).toHaveLength(1);
        expect(results.runs.filter((r) => r.seed === seed && r.editor === editor.kind && r.phase === 'sweep').map((r) => `${r.lambda} ${r.gate}`)).toEqual([
          '0.01 leaves',
          '0.3 leaves',
          '0.1 advantage',
        ]);
      }
    expect(results.baseline).toHaveLength(config.seeds.length * config.editors.length);
    expect(units).toBe(learningUnits(config));
    expect(events.filter((e) => e.kind === 'run')).toHaveLength(expected);
  });

  it('every update has finite figures; RL updates carry the rollouts’ drift and verl’s mismatch figures, SFT updates none', () => {
    for (const run of results.runs) {
      expect(run.stopped, `${run.phase} ${run.method}`).toBeNull();
      const sizes = run.phase === 'sft' ? config.sft : config.rl;
      expect(run.updates.map((u) => u.update)).toEqual(Array.from({ length: sizes.updates }, (_, i) => i + 1));
      for (const u of run.updates) {
        for (const v of [u.loss, u.taskLoss, u.klSdcc, u.gradNorm, u.stepMs, u.logdiff, u.mu, u.conditioningDrift])
          expect(finite(v), `${run.phase} ${run.method} update ${u.update}`).toBe(true);
        if (run.phase === 'sft') expect(u.rollout_corr).toBeNull();
        else {
          expect(u.rollout_corr, `${run.method}`).not.toBeNull();
          for (const [name, v] of Object.entries(u.rollout_corr!)) expect(Number.isFinite(v), `${run.method} rollout_corr/${name}`).toBe(true);
          // On-policy: the exact methods score the rollout as it was played.
          if (run.method === 'packed-4d' || run.method === 'logit-tree') expect(u.logdiff!).toBeLessThan(1e-4);
        }
        if (run.method !== 'sdcc') expect(u.klSdcc).toBe(0);
      }
      expect(run.evals.map((e) => e.update)).toEqual([2]);
      for (const e of run.evals) expect(e.em >= 0 && e.em <= 1).toBe(true);
    }
  });

  it("the RL runs of one seed and editor share their first batch (the start's own episodes)", () => {
    for (const seed of config.seeds)
      for (const editor of config.editors) {
        const rl = results.runs.filter((r) => r.seed === seed && r.editor === editor.kind && r.phase !== 'sft');
        const firstReward = new Set(rl.map((r) => r.updates[0].reward));
        expect(firstReward.size, `seed ${seed} ${editor.kind}`).toBe(1);
        expect(rl.every((r) => r.updates[0].genMs === 0)).toBe(true);
      }
  });

  it('summaries, the report and the reference curves of every phase come out of the results', () => {
    const groups = summarizeGroups(results);
    expect(groups.filter((g) => g.phase !== 'sweep')).toHaveLength(2 * config.editors.length * METHODS.length);
    for (const g of groups) {
      expect(g.seeds).toBe(config.seeds.length);
      expect(g.band.map((p) => p.update)).toEqual([0, 2]);
      expect(g.final).not.toBeNull();
    }
    const table = learningTable(results, { command: 'test' });
    for (const method of ['Naive-Compressed', 'Naive-Full', 'LogitTree', 'Packed 4D mask', 'SDCC']) expect(table).toContain(`| ${method} |`);
    expect(learningFigures(results).size).toBe(3 * config.editors.length);
    const reference = referenceCurves(results, 'test');
    const run = phaseRunConfig(config, 'rl', config.editors[0], 1, METHODS, config.lambda);
    expect(referencePhase(run, reference)!.curves.map((c) => c.method)).toEqual([...METHODS]);
  });
});
