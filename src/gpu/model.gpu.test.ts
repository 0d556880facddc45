// The whole model on the GPU against the float64 CPU reference, and Theorem 1 (docs/methods.md) on logits:
// logit-tree and packed-4d give the same log-probability at every target, equal to the live-prefix score.
import { describe, expect, it } from 'vitest';
import type { Gpu } from './runtime/device';
import type { GpuModel } from './model';
import { useGpuModel } from './runtime/gpu.testing';
import { scoreBatch, scorePlan } from './score';
import { MODEL_PRESETS } from '../model/config';
import { referenceLogprobs } from '../model/reference/model';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { buildPlan } from '../plan/build';
import { packBatch } from '../plan/batch';
import type { PlanSequence } from '../plan/types';
import { randomWeights } from '../model/random-weights';
import { workedExample } from '../testing/fixtures';
import { expectClose } from '../testing/close';

const config = MODEL_PRESETS.tiny;
const weights = randomWeights(config, 7);
let gpu: Gpu;
let model: GpuModel;
useGpuModel(weights, (g, m) => ([gpu, model] = [g, m]));

const worked = workedExample();
const randomRollouts = Array.from({ length: 8 }, (_, i) =>
  validateRollout(generateRandomRollout({ seed: 100 + i, size: 'small' }), { file: `random-${i}.json` }),
);

/** The CPU reference's score of each target of one sequence. */
function referenceScores(seq: PlanSequence): Map<number, number> {
  const lp = referenceLogprobs(weights, seq, seq.targets);
  return new Map(seq.targets.map((t, i) => [t.id, lp[i]]));
}

/** Exact live-prefix score of every target: each branch as its own causal sequence, on the CPU. */
function liveScores(plan: { sequences: PlanSequence[] }): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of plan.sequences) for (const [id, lp] of referenceScores(s)) out.set(id, lp);
  return out;
}

describe('GPU model forward', () => {
  it('matches the float64 reference at every target of the worked example, for every method (≤ 1e-4)', async () => {
    const tree = deriveTree(worked);
    for (const method of ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const) {
      const plan = buildPlan(tree, method);
      for (const seq of plan.sequences) {
        const got = await scoreBatch(model, seq);
        const want = referenceLogprobs(weights, seq, seq.targets);
        expectClose(got, want, { abs: 1e-4, label: `${method} logprobs` });
      }
    }
  });

  it('Theorem 1: logit-tree and packed-4d agree (≤ 1e-5) and equal the live-prefix score, on the worked example and random rollouts', async () => {
    let compared = 0;
    for (const rollout of [worked, ...randomRollouts]) {
      const tree = deriveTree(rollout);
      const lt = await scorePlan(model, buildPlan(tree, 'logit-tree'));
      const p4 = await scorePlan(model, buildPlan(tree, 'packed-4d'));
      const live = liveScores(buildPlan(tree, 'logit-tree'));
      const byId = new Map(p4.targets.map((t) => [t.id, t.logprob]));
      expect(p4.targets.length).toBe(lt.targets.length);
      const a = lt.targets.map((t) => t.logprob);
      const b = lt.targets.map((t) => byId.get(t.id)!);
      expectClose(b, a, { abs: 1e-5, label: `${rollout.id}: packed-4d vs logit-tree` });
      expectClose(
        a,
        lt.targets.map((t) => live.get(t.id)!),
        { abs: 1e-4, label: `${rollout.id}: logit-tree vs CPU live prefix` },
      );
      compared += a.length;
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('scores several rollouts packed in one batch exactly as each alone', async () => {
    const seqs = randomRollouts.slice(0, 5).map((r) => buildPlan(deriveTree(r), 'packed-4d').sequences[0]);
    const together = await scoreBatch(model, packBatch(seqs));
    const alone = (await Promise.all(seqs.map((s) => scoreBatch(model, s)))).flatMap((a) => Array.from(a));
    expectClose(together, alone, { abs: 1e-6, label: 'batched vs alone' });
  });
});
