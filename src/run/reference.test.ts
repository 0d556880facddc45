// Which shipped experiment a browser run is compared with: only a run that trains as the phase did
// (start, task, editor, objective, optimiser), SDCC's curve only at the phase's λ; and the shipped
// results (docs/experiments/learning/reference.json) hold the app's "The paper's claim" run.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultRunConfig, PAPER_CLAIM, WEAK_MODEL, type RunConfig } from './config';
import { referenceCurvesFor, referencePhase, type ReferenceCurves, type ReferencePhase } from './reference';

const points = [
  { update: 0, mean: 0.2, min: 0.1, max: 0.3 },
  { update: 5, mean: 0.4, min: 0.3, max: 0.5 },
];
const phase: ReferencePhase = {
  objective: 'sft',
  checkpoint: 'weak.safetensors',
  env: 'collect:decoys=1,filler=20',
  editor: 'window',
  budget: 100,
  lr: 1e-3,
  prompts: 4,
  group: 1,
  lambda: 0.1,
  actTokens: 24,
  evalEvery: 5,
  evalPrompts: 12,
  seeds: [1, 2, 3],
  curves: (['naive-compressed', 'packed-4d', 'sdcc'] as const).map((method) => ({ method, points })),
};
const reference: ReferenceCurves = {
  format: 'memorywalker.reference-curves/v1',
  command: 'mw experiment learning --out x',
  phases: [phase, { ...phase, editor: 'compact' }],
};
const run: RunConfig = {
  ...defaultRunConfig('small'),
  checkpoint: 'weak.safetensors',
  env: 'collect',
  difficulty: 3,
  distractors: 1,
  filler: 20,
  editor: 'window',
  budget: 100,
  actTokens: 24,
  methods: ['naive-compressed', 'packed-4d', 'sdcc'],
  lambda: 0.1,
  objective: 'sft',
  lr: 1e-3,
  batch: 4,
  evalEvery: 5,
};

describe('referencePhase', () => {
  it('finds the phase a run reproduces, per editor', () => {
    expect(referencePhase(run, reference)).toBe(phase);
    expect(referencePhase({ ...run, editor: 'compact' }, reference)!.editor).toBe('compact');
  });

  it('finds none for a run that trains otherwise: another start, task, rate, batch, objective, schedule of evaluations', () => {
    for (const patch of [
      { checkpoint: null },
      { checkpoint: 'demo.safetensors' },
      { distractors: 0 },
      { budget: 120 },
      { lr: 3e-3 },
      { batch: 2 },
      { objective: 'rl' as const },
      { evalEvery: 10 },
      { editor: 'stack' as const },
    ]) {
      expect(referencePhase({ ...run, ...patch }, reference), JSON.stringify(patch)).toBeNull();
    }
    expect(referencePhase(run, null)).toBeNull();
  });

  it("draws the run's own methods, SDCC only at the phase's λ", () => {
    expect(referenceCurvesFor(run, phase).map((c) => c.method)).toEqual(['naive-compressed', 'packed-4d', 'sdcc']);
    expect(referenceCurvesFor({ ...run, methods: ['packed-4d'] }, phase).map((c) => c.method)).toEqual(['packed-4d']);
    expect(referenceCurvesFor({ ...run, lambda: 0.3 }, phase).map((c) => c.method)).toEqual(['naive-compressed', 'packed-4d']);
    expect(referenceCurvesFor(run, null)).toEqual([]);
  });
});

describe('the shipped learning experiment', () => {
  const shipped = JSON.parse(readFileSync(new URL('../../docs/experiments/learning/reference.json', import.meta.url), 'utf8')) as ReferenceCurves;
  const claim: RunConfig = { ...defaultRunConfig('small'), ...PAPER_CLAIM, methods: [...PAPER_CLAIM.methods], checkpoint: WEAK_MODEL.name };

  it('has the app\'s "The paper\'s claim" run among its phases, with a curve for each of its lanes over every seed', () => {
    const found = referencePhase(claim, shipped);
    expect(found, 'a phase with the preset’s settings').not.toBeNull();
    expect(found!.seeds.length).toBeGreaterThanOrEqual(3);
    expect(referenceCurvesFor(claim, found).map((c) => c.method)).toEqual([...PAPER_CLAIM.methods]);
    for (const curve of found!.curves) {
      expect(curve.points[0].update).toBe(0);
      expect(curve.points.at(-1)!.update).toBe(PAPER_CLAIM.steps);
      for (const p of curve.points) expect(p.min <= p.mean && p.mean <= p.max && p.min >= 0 && p.max <= 1).toBe(true);
    }
  });
});
