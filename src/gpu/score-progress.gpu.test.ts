// Scoring reports its progress after every forward pass (rows forwarded of the total, per method)
// and stops at the next pass once its signal is aborted: what a progress bar and a cancel button need.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../model/config';
import { buildPlan } from '../plan/build';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import { createGpu, type Gpu } from './runtime/device';
import { createGpuModel, type GpuModel } from './model';
import { scoreRollouts, type ScoreProgress } from './score';

let gpu: Gpu;
let model: GpuModel;
beforeAll(async () => {
  gpu = await createGpu();
  model = createGpuModel(gpu, randomWeights(MODEL_PRESETS.tiny, 2));
});
afterAll(() => {
  model?.destroy();
  gpu?.destroy();
});

const rollouts = [1, 2, 3].map((seed) => validateRollout(generateRandomRollout({ seed, size: 'small' }), { file: `r${seed}` }));
const methods = ['naive-full', 'logit-tree'] as const;
const total = methods.reduce((n, m) => n + rollouts.reduce((k, r) => k + buildPlan(deriveTree(r), m).sequences.reduce((j, s) => j + s.ids.length, 0), 0), 0);

describe('scoreRollouts progress and cancel', () => {
  it('reports rows forwarded, rising to the total, batch by batch', async () => {
    const seen: ScoreProgress[] = [];
    await scoreRollouts(model, rollouts, methods, { maxRows: 40, onProgress: (p) => seen.push(p) });
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.every((p) => p.total === total)).toBe(true);
    expect(seen.map((p) => p.tokens)).toEqual([...seen.map((p) => p.tokens)].sort((a, b) => a - b));
    expect(seen.at(-1)!.tokens).toBe(total);
    expect(seen.map((p) => p.method)).toEqual(
      [...seen.filter((p) => p.method === 'naive-full'), ...seen.filter((p) => p.method === 'logit-tree')].map((p) => p.method),
    );
  });

  it('stops at the next forward pass once aborted', async () => {
    const controller = new AbortController();
    let passes = 0;
    const scoring = scoreRollouts(model, rollouts, methods, {
      maxRows: 40,
      signal: controller.signal,
      onProgress: () => {
        passes++;
        controller.abort(new Error('cancelled'));
      },
    });
    await expect(scoring).rejects.toThrow('cancelled');
    expect(passes).toBe(1);
  });
});
