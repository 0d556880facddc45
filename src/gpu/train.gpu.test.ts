// Training on the GPU: whole-model gradients against the float64 reference, Theorem 1 on gradients,
// SDCC's gating, RL's ratio, learning, exact resume, and the NaN guard.
import { describe, expect, it } from 'vitest';
import type { Gpu } from './runtime/device';
import { createGpuModel, type GpuModel } from './model';
import { useGpuModel } from './runtime/gpu.testing';
import { assembleStep } from '../plan/step';
import { planStep } from '../objectives/step';
import { computeGradients, createTrainer } from './train';
import { NonFiniteGradientError } from './kernels/adamw/adamw';
import { MODEL_PRESETS } from '../model/config';
import { sftLossAndGrads } from '../model/reference/model';
import { loadCheckpoint, loadOptimizerState } from '../model/checkpoint';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { randomWeights } from '../model/random-weights';
import { readFixture, workedExample } from '../testing/fixtures';
import { compare } from '../testing/close';

const config = MODEL_PRESETS.tiny;
const weights = randomWeights(config, 11);
let gpu: Gpu;
let model: GpuModel;
useGpuModel(weights, (g, m) => ([gpu, model] = [g, m]));

const worked = workedExample();
const random = Array.from({ length: 4 }, (_, i) => validateRollout(generateRandomRollout({ seed: 300 + i, size: 'small' }), { file: `r${i}.json` }));

/** Largest relative difference per tensor, |a - b|_max / max(|b|_max, tiny). */
function relativeByTensor(got: Map<string, ArrayLike<number>>, want: Map<string, ArrayLike<number>>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, w] of want) {
    const g = got.get(name)!;
    let scale = 0;
    for (let i = 0; i < w.length; i++) scale = Math.max(scale, Math.abs(w[i]));
    out.set(name, compare(g, w).maxAbs / Math.max(scale, 1e-12));
  }
  return out;
}

function worst(rel: Map<string, number>): [string, number] {
  return [...rel].reduce((a, b) => (b[1] > a[1] ? b : a));
}

describe('GPU gradients', () => {
  it('match the float64 reference for every tensor (relative ≤ 1e-3), packed-4d SFT on the worked example', async () => {
    const metrics = await computeGradients(model, planStep([worked], { method: 'packed-4d', objective: 'sft', conditioningDrift: false }));
    const step = assembleStep([deriveTree(worked)], { method: 'packed-4d' });
    const ref = sftLossAndGrads(weights, step.batch, step.batch.targets);
    expect(Math.abs(metrics.loss - ref.loss)).toBeLessThan(1e-5);
    const rel = relativeByTensor(await model.readGrads(), ref.grads);
    const [name, value] = worst(rel);
    expect(value, `worst tensor ${name}: ${value.toExponential(3)}`).toBeLessThan(1e-3);
    expect(rel.size).toBe(4 + 12 * config.nLayer);
  });

  it('Theorem 1: logit-tree and packed-4d give the same gradients (relative ≤ 1e-4); the naive methods do not', async () => {
    for (const rollout of [worked, ...random]) {
      const grads = async (method: 'logit-tree' | 'packed-4d' | 'naive-compressed' | 'naive-full') => {
        const m = await computeGradients(model, planStep([rollout], { method, objective: 'sft', conditioningDrift: false }));
        return { loss: m.loss, grads: await model.readGrads() };
      };
      const lt = await grads('logit-tree');
      const p4 = await grads('packed-4d');
      expect(Math.abs(lt.loss - p4.loss)).toBeLessThan(1e-5);
      const [name, value] = worst(relativeByTensor(p4.grads, lt.grads));
      expect(value, `${rollout.id}: worst tensor ${name}`).toBeLessThan(1e-4);
      const tree = deriveTree(rollout);
      const prefixChanged = tree.figures.divergingLeaves > 0 || tree.figures.droppedTargets > 0;
      if (prefixChanged) {
        for (const naive of ['naive-compressed', 'naive-full'] as const) {
          const [, diff] = worst(relativeByTensor((await grads(naive)).grads, lt.grads));
          expect(diff, `${rollout.id}: ${naive} should differ from the exact gradients`).toBeGreaterThan(1e-3);
        }
      }
    }
  });
});

describe('SDCC', () => {
  it('λ = 0 gives exactly the naive-compressed gradients; the KL is measured and matches its definition', async () => {
    const nc = await computeGradients(model, planStep([worked], { method: 'naive-compressed', objective: 'sft', conditioningDrift: false }));
    const ncGrads = await model.readGrads();
    const s0 = await computeGradients(model, planStep([worked], { method: 'sdcc', objective: 'sft', lambda: 0, conditioningDrift: false }));
    const s0Grads = await model.readGrads();
    for (const [name, g] of ncGrads) expect(Array.from(s0Grads.get(name)!), name).toEqual(Array.from(g));
    expect(s0.taskLoss).toBe(nc.taskLoss);
    expect(s0.klSdcc).toBeGreaterThan(0); // 13 and 14 see different prefixes under teacher and student
    expect(s0.klFired).toBe(false);
    const s1 = await computeGradients(model, planStep([worked], { method: 'sdcc', objective: 'sft', lambda: 0.5, conditioningDrift: false }));
    expect(s1.klFired).toBe(true);
    expect(s1.loss).toBeCloseTo(s1.taskLoss + 0.5 * s1.klSdcc, 6);
    expect(s1.tokens).toBeGreaterThan(s0.tokens - 1);
  });

  it("the packed teacher riding in the student's forward gives the branch teachers' KL and gradients, through fewer rows", async () => {
    const batch = [worked, ...random];
    const options = { method: 'sdcc', objective: 'sft', lambda: 0.5, conditioningDrift: false } as const;
    const branches = await computeGradients(model, planStep(batch, { ...options, sdccTeacher: 'logit-tree' }));
    const branchGrads = await model.readGrads();
    const union = await computeGradients(model, planStep(batch, options));
    const unionGrads = await model.readGrads();
    expect(union.divergingLeaves).toBeGreaterThan(5); // 9, over several rollouts (groups)
    expect(Math.abs(union.klSdcc - branches.klSdcc)).toBeLessThanOrEqual(1e-5 * Math.max(1, branches.klSdcc));
    expect(union.taskLoss).toBe(branches.taskLoss);
    const rel = relativeByTensor(unionGrads, branchGrads);
    for (const [name, r] of rel) expect(r, name).toBeLessThanOrEqual(1e-4);
    // Rows: the student plus only the teacher nodes the final walk does not share.
    const step = assembleStep(batch.map(deriveTree), options);
    expect(union.tokens).toBe(step.sdcc!.tokens.length);
    expect(union.tokens).toBeLessThan(branches.tokens);
  });

  it("the conditioning drift of SDCC's student comes from its own rows and the teacher's: naive-compressed's, measured by its own live forward", async () => {
    const batch = [worked, ...random];
    const nc = await computeGradients(model, planStep(batch, { method: 'naive-compressed', objective: 'sft' }));
    expect(nc.conditioningDrift).toBeGreaterThan(1e-3);
    for (const sdccTeacher of ['packed-4d', 'logit-tree'] as const) {
      for (const lambda of [0, 0.5]) {
        const m = await computeGradients(model, planStep(batch, { method: 'sdcc', objective: 'sft', lambda, sdccTeacher }));
        expect(Math.abs(m.conditioningDrift! - nc.conditioningDrift!), `${sdccTeacher} λ ${lambda}`).toBeLessThanOrEqual(1e-5);
        expect(Math.abs(m.conditioningMu! - nc.conditioningMu!)).toBeLessThanOrEqual(1e-5);
        expect(m.tokens).toBe(
          (await computeGradients(model, planStep(batch, { method: 'sdcc', objective: 'sft', lambda, sdccTeacher, conditioningDrift: false }))).tokens,
        );
      }
    }
  });

  it('a rollout without diverging leaves runs no teacher and has KL exactly 0', async () => {
    const flat = validateRollout(
      {
        format: 'memorywalker.rollout/v1',
        id: 'flat',
        vocab: 272,
        events: [
          { op: 'append', role: 'prompt', tokens: [1, 2, 3] },
          { op: 'append', role: 'act', tokens: [4, 5], logprobs: [-1, -1] },
        ],
      },
      { file: 'flat.json' },
    );
    const m = await computeGradients(model, planStep([flat], { method: 'sdcc', objective: 'sft', lambda: 1 }));
    expect(m.conditioningDrift).toBe(0); // every target sees its live prefix
    expect(m.klSdcc).toBe(0);
    expect(m.klFired).toBe(false);
    expect(m.tokens).toBe(5); // student rows only: no teacher pass
  });
});

describe('RL', () => {
  it('PPO ratio 1 (logprobs from the model itself) gives the plain policy gradient: SFT gradients times -advantage', async () => {
    // Rewrite the worked example's logprobs with the model's own packed-4d scores, in a group of two.
    const own = await computeGradients(model, planStep([worked], { method: 'packed-4d', objective: 'sft', conditioningDrift: false }));
    const withOwn = (reward: number, id: string): Rollout => {
      const json = JSON.parse(readFixture('worked-example.json'));
      json.id = id;
      json.reward = reward;
      json.group = 'g';
      let next = 0;
      for (const e of json.events) {
        if (e.op === 'append') {
          if (e.role === 'act') e.logprobs = e.tokens.map((_: number, k: number) => own.logprobs[0].get(next + k)!);
          next += e.tokens.length;
        } else
          next += e.view
            .filter((p: { insert?: { tokens: number[] } }) => p.insert)
            .reduce((n: number, p: { insert?: { tokens: number[] } }) => n + p.insert!.tokens.length, 0);
      }
      return validateRollout(json, { file: `${id}.json` });
    };
    const good = withOwn(1, 'good');
    const bad = withOwn(0, 'bad');
    const rl = await computeGradients(model, planStep([good], { method: 'packed-4d', objective: 'rl', conditioningDrift: false }));
    expect(rl.taskLoss).toBeCloseTo(0, 12); // advantage 0: a group of one
    const pair = await computeGradients(model, planStep([good, bad], { method: 'packed-4d', objective: 'rl', conditioningDrift: false }));
    // Advantages ±1 (group of two, rewards 1 and 0): the two halves' policy gradients cancel exactly.
    const g = await model.readGrads();
    let max = 0;
    for (const t of g.values()) for (const v of t) max = Math.max(max, Math.abs(v));
    expect(max).toBeLessThan(1e-6);
    expect(pair.logdiff!).toBeLessThan(1e-5); // ratio 1: the rollout logprobs are the model's own
  });
});

describe('training', () => {
  const data = [worked, ...random.slice(0, 2)];
  const schedule = { peak: 3e-3, warmup: 5, total: 400, min: 3e-4 };

  it('SFT drives the target loss below 0.05 within 150 steps', async () => {
    const trainer = createTrainer(gpu, randomWeights(config, 5, 0.05), { schedule });
    let loss = Infinity;
    let steps = 0;
    while (loss >= 0.05 && steps < 150) {
      loss = (await trainer.trainStep(planStep(data, { method: 'packed-4d', objective: 'sft', conditioningDrift: false }))).loss;
      steps++;
    }
    trainer.destroy();
    expect(loss, `after ${steps} steps`).toBeLessThan(0.05);
  });

  it('a run resumed from its checkpoint continues with the same losses (≤ 1e-6)', async () => {
    const start = randomWeights(config, 6, 0.05);
    const step = (t: ReturnType<typeof createTrainer>) => t.trainStep(planStep(data, { method: 'logit-tree', objective: 'sft', conditioningDrift: false }));
    const straight = createTrainer(gpu, start, { schedule });
    const losses: number[] = [];
    for (let i = 0; i < 6; i++) losses.push((await step(straight)).loss);
    straight.destroy();
    const first = createTrainer(gpu, start, { schedule });
    for (let i = 0; i < 3; i++) await step(first);
    const saved = await first.checkpoint();
    first.destroy();
    const resumed = createTrainer(gpu, loadCheckpoint(saved.weights), { schedule, optimizerState: loadOptimizerState(saved.optimizer, config) });
    expect(resumed.step).toBe(3);
    for (let i = 3; i < 6; i++) expect(Math.abs((await step(resumed)).loss - losses[i])).toBeLessThanOrEqual(1e-6);
    resumed.destroy();
  });

  it('an infinite gradient stops the step with a clear error and leaves the weights untouched', async () => {
    const json = JSON.parse(readFixture('worked-example.json'));
    json.events[8].logprobs = [-1e30, -1e30]; // ratio exp(ℓ + 1e30) overflows
    json.group = 'g';
    const a = validateRollout({ ...json, id: 'a', reward: 1 }, { file: 'a.json' });
    const b = validateRollout({ ...json, id: 'b', reward: 0 }, { file: 'b.json' });
    const trainer = createTrainer(gpu, weights, { schedule });
    const before = await trainer.readWeights();
    const err = await trainer.trainStep(planStep([a, b], { method: 'packed-4d', objective: 'rl', conditioningDrift: false })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonFiniteGradientError);
    expect((err as Error).message).toMatch(/not applied/);
    const after = await trainer.readWeights();
    for (const [name, w] of before.tensors) expect(Buffer.from(after.tensors.get(name)!.buffer).equals(Buffer.from(w.buffer)), name).toBe(true);
    expect(trainer.step).toBe(0);
    trainer.destroy();
  });
});

describe('RL with a KL to a frozen reference', () => {
  it('adds klCoef · mean k3 to the loss: zero against the same weights, positive against others', async () => {
    const grouped = (id: string, reward: number) => {
      const json = JSON.parse(readFixture('worked-example.json'));
      return validateRollout({ ...json, id, reward, group: 'g' }, { file: `${id}.json` });
    };
    const batch = [grouped('a', 1), grouped('b', 0)];
    const options = { method: 'packed-4d', objective: 'rl', conditioningDrift: false } as const;
    const plain = await computeGradients(model, planStep(batch, options));
    const same = createGpuModel(gpu, weights);
    const other = createGpuModel(gpu, randomWeights(config, 12));
    const withSame = await computeGradients(model, planStep(batch, { ...options, klCoef: 0.5 }), { reference: same });
    expect(Math.abs(withSame.loss - plain.loss)).toBeLessThan(1e-6);
    const withOther = await computeGradients(model, planStep(batch, { ...options, klCoef: 0.5 }), { reference: other });
    // Expected: 0.5 · mean over targets of k3(ℓ_θ, ℓ_ref) with k3 = exp(d) − d − 1, d = ℓ_ref − ℓ_θ.
    const step = assembleStep(batch.map(deriveTree), options);
    const { scoreBatch } = await import('./score');
    const ref = await scoreBatch(other, step.batch);
    const own = await scoreBatch(model, step.batch);
    let k3 = 0;
    own.forEach((lp, j) => {
      const d = Math.min(0, ref[j]) - lp;
      k3 += Math.exp(d) - d - 1;
    });
    expect(withOther.loss - plain.loss).toBeGreaterThan(1e-4);
    expect(withOther.loss - plain.loss).toBeCloseTo((0.5 * k3) / own.length, 4);
    same.destroy();
    other.destroy();
  });
});
