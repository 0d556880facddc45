// The learning experiment's pure parts: its runs per seed and editor, bands over seeds, group
// summaries (verl's figures included), the reference curves the app draws, and the report files.
import { describe, expect, it } from 'vitest';
import { editorSpec } from '../harness/editors';
import { mismatchFigures } from '../metrics/mismatch';
import { MODEL_PRESETS } from '../model/config';
import { defaultRunConfig } from '../run/config';
import { referencePhase } from '../run/reference';
import {
  bandOf,
  learningJobs,
  learningUnits,
  phaseRunConfig,
  referenceCurves,
  summarizeGroups,
  type LearningConfig,
  type LearningResults,
  type RunResult,
  type UpdateRecord,
} from './learning';
import { learningFigures, learningTable } from './learning-report';

const config: LearningConfig = {
  checkpoint: 'weak.safetensors',
  env: { id: 'collect', pages: 3, decoys: 1, filler: 20 },
  editors: [editorSpec('window', { budget: 100 }), editorSpec('compact', { budget: 100 })],
  methods: ['naive-compressed', 'packed-4d', 'sdcc'],
  seeds: [1, 2],
  lambda: 0.1,
  sweep: [0.01, 0.1, 0.3],
  gated: [0.1],
  maxActTokens: 24,
  sft: { updates: 4, prompts: 4, group: 1, lr: 1e-3, evalEvery: 2 },
  rl: { updates: 3, prompts: 2, group: 4, lr: 1e-3, evalEvery: 2 },
  eval: { prompts: 8 },
};

function update(u: number, loss: number, corr = false): UpdateRecord {
  return {
    update: u,
    loss,
    taskLoss: loss,
    klSdcc: 0.5,
    klFired: u % 2 === 0,
    divergingLeaves: 2,
    logdiff: corr ? 0.1 : null,
    mu: corr ? -0.1 : null,
    conditioningDrift: 0.2,
    rollout_corr: corr ? mismatchFigures([{ train: [-1, -0.5], rollout: [-0.5, -0.5] }]) : null,
    reward: corr ? 0.25 : 1,
    gradNorm: 1,
    stepMs: 10,
    genMs: 0,
    skipped: 0,
  };
}

/** A made-up result set: every run of the config, EM rising by `rate` per evaluation. */
function results(): LearningResults {
  const runs: RunResult[] = [];
  for (const seed of config.seeds)
    for (const editor of config.editors)
      for (const job of learningJobs(config)) {
        const sizes = job.phase === 'sft' ? config.sft : config.rl;
        const rate = job.method === 'naive-compressed' ? -0.1 : 0.1 * seed;
        const updates = Array.from({ length: sizes.updates }, (_, i) => update(i + 1, 1 / (i + 1), job.phase !== 'sft'));
        const evals = [2, 4].filter((u) => u <= sizes.updates).map((u, i) => ({ update: u, em: Math.max(0, 0.25 + rate * (i + 1)), reward: 0 }));
        if (sizes.updates % 2) evals.push({ update: sizes.updates, em: 0.25, reward: 0 });
        const sdcc = job.method === 'sdcc' ? { lambda: job.lambda, gate: job.gate } : { lambda: null, gate: null };
        runs.push({ phase: job.phase, editor: editor.kind, seed, method: job.method, ...sdcc, updates, evals, stopped: null, seconds: 1 });
      }
  const baseline = config.seeds.flatMap((seed) => config.editors.map((e) => ({ editor: e.kind, seed, em: 0.25, reward: 0.25 })));
  return { format: 'memorywalker.experiment-learning/v1', model: { ...MODEL_PRESETS.small }, config, baseline, runs, seconds: 12 };
}

describe('learning experiment', () => {
  it('runs per seed and editor: every method under SFT and RL, then SDCC at the sweep’s other λ values; units count updates and evaluations', () => {
    expect(learningJobs(config).map((j) => `${j.phase}:${j.method}:${j.lambda}:${j.gate}`)).toEqual([
      'sft:naive-compressed:0.1:leaves',
      'sft:packed-4d:0.1:leaves',
      'sft:sdcc:0.1:leaves',
      'rl:naive-compressed:0.1:leaves',
      'rl:packed-4d:0.1:leaves',
      'rl:sdcc:0.1:leaves',
      'sweep:sdcc:0.01:leaves',
      'sweep:sdcc:0.3:leaves',
      'sweep:sdcc:0.1:advantage',
    ]);
    // Per seed and editor: a baseline, 3 SFT runs of 4 updates + 2 evaluations, 6 RL runs of 3 updates + 2.
    expect(learningUnits(config)).toBe(2 * 2 * (1 + 3 * 6 + 6 * 5));
  });

  it("builds each run from the browser's run config of the phase", () => {
    const run = phaseRunConfig(config, 'rl', config.editors[1], 2, ['sdcc'], 0.3);
    expect(run).toMatchObject({
      checkpoint: 'weak.safetensors',
      env: 'collect',
      difficulty: 3,
      distractors: 1,
      filler: 20,
      editor: 'compact',
      budget: 100,
      methods: ['sdcc'],
      lambda: 0.3,
      objective: 'rl',
      lr: 1e-3,
      batch: 2,
      group: 4,
      seed: 2,
      steps: 3,
      evalEvery: 2,
      evalPrompts: 8,
    });
    expect(Object.keys(run).sort()).toEqual(Object.keys(defaultRunConfig('small')).sort());
  });

  it('bands over seeds: mean, lowest and highest at the updates every seed evaluated', () => {
    const band = bandOf([
      [
        { update: 0, em: 0.25, reward: 0 },
        { update: 2, em: 0.5, reward: 0 },
        { update: 4, em: 1, reward: 0 },
      ],
      [
        { update: 0, em: 0.25, reward: 0 },
        { update: 2, em: 0.25, reward: 0 },
      ],
    ]);
    expect(band).toEqual([
      { update: 0, mean: 0.25, min: 0.25, max: 0.25 },
      { update: 2, mean: 0.375, min: 0.25, max: 0.5 },
    ]);
  });

  it("summarises each method, phase, editor and λ over seeds: final EM with its range, gain, verl's figures on the RL batches", () => {
    const groups = summarizeGroups(results());
    const p4 = groups.find((g) => g.phase === 'sft' && g.editor === 'window' && g.method === 'packed-4d')!;
    // Seeds 1 and 2 rise 0.1 and 0.2 per evaluation from 0.25: 0.45 and 0.65 after two.
    expect(p4.final!.mean).toBeCloseTo(0.55, 12);
    expect(p4.final!.min).toBeCloseTo(0.45, 12);
    expect(p4.final!.max).toBeCloseTo(0.65, 12);
    expect(p4.gain).toBeCloseTo(0.3, 12);
    expect(p4.k3).toBeNull(); // demonstrations: no rollout logprobs
    expect(p4.klSdcc).toBeNull();
    const rl = groups.find((g) => g.phase === 'rl' && g.editor === 'compact' && g.method === 'sdcc')!;
    expect(rl.k3).toBeCloseTo(mismatchFigures([{ train: [-1, -0.5], rollout: [-0.5, -0.5] }])!.k3_kl, 12);
    expect(rl.klSdcc).toBe(0.5);
    expect(rl.klFiredShare).toBeCloseTo(1 / 3, 12);
    expect(rl.reward).toBe(0.25);
    expect(groups.filter((g) => g.phase === 'sweep').map((g) => `${g.editor}:${g.lambda}:${g.gate}`)).toEqual([
      'window:0.01:leaves',
      'window:0.3:leaves',
      'window:0.1:advantage',
      'compact:0.01:leaves',
      'compact:0.3:leaves',
      'compact:0.1:advantage',
    ]);
  });

  it("gives the app the SFT and RL phases' curves, and a browser run of a phase's config finds its phase", () => {
    const reference = referenceCurves(results(), 'mw experiment learning --out x');
    expect(reference.phases.map((p) => `${p.objective}:${p.editor}`)).toEqual(['sft:window', 'sft:compact', 'rl:window', 'rl:compact']);
    for (const objective of ['sft', 'rl'] as const) {
      for (const editor of config.editors) {
        const run = phaseRunConfig(config, objective, editor, 1, config.methods, config.lambda);
        const phase = referencePhase(run, reference)!;
        expect(phase, `${objective} ${editor.kind}`).not.toBeNull();
        expect(phase.objective).toBe(objective);
        expect(phase.editor).toBe(editor.kind);
        expect(phase.curves.map((c) => c.method)).toEqual(config.methods);
        expect(phase.curves[0].points[0]).toEqual({ update: 0, mean: 0.25, min: 0.25, max: 0.25 });
      }
    }
  });

  it('a partial experiment: a phase lists the seeds its runs have, and the table says a cell holds fewer seeds', () => {
    const partial = results();
    partial.runs = partial.runs.filter((r) => r.phase === 'sft' || r.seed === 1);
    const phases = referenceCurves(partial, 'mw experiment learning --out x').phases;
    expect(phases.find((p) => p.objective === 'sft' && p.editor === 'window')!.seeds).toEqual([1, 2]);
    expect(phases.find((p) => p.objective === 'rl' && p.editor === 'window')!.seeds).toEqual([1]);
    const table = learningTable(partial, { command: 'mw experiment learning --out x' });
    expect(table).toContain('(1 of 2 seeds)');
    expect(table.split('## Held-out EM after on-policy RL')[0]).not.toContain('of 2 seeds');
  });

  it('writes a table and one SVG per phase and editor, and per editor for the sweep', () => {
    const r = results();
    const table = learningTable(r, { command: 'mw experiment learning --out x', load: 'load average 1.0' });
    expect(table).toContain('| Packed 4D mask | 0.55 [0.45–0.65] | +0.30 |');
    expect(table).toContain('SDCC λ 0.01');
    expect(table).toContain('load average 1.0');
    const figures = learningFigures(r);
    expect([...figures.keys()].sort()).toEqual([
      'learning-rl-compact.svg',
      'learning-rl-window.svg',
      'learning-sft-compact.svg',
      'learning-sft-window.svg',
      'sweep-compact.svg',
      'sweep-window.svg',
    ]);
    for (const svg of figures.values()) {
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).not.toContain('NaN');
    }
    expect(figures.get('sweep-window.svg')).toContain('SDCC λ 0.3');
    expect(figures.get('sweep-window.svg')).toContain('SDCC λ 0.1 gated');
    expect(table).toContain('| window | SDCC λ 0.1 gated |');
  });
});
