// SDCC examined (issue 20): the GPU step's gradient is the float64 reference of
// L = L_task(student) + λ · mean_{t∈D} KL(π_teacher ‖ π_student) with the teacher's logits held
// constant: forward KL (teacher first), gated to the diverging leaves, λ / |D| on the student's rows
// and no gradient through the teacher's rows, whether the teacher rides in the student's forward
// (the packed union) or runs its own branches.
import { describe, expect, it } from 'vitest';
import type { Gpu } from './runtime/device';
import type { GpuModel } from './model';
import { useGpuModel } from './runtime/gpu.testing';
import { planStep } from '../objectives/step';
import { computeGradients } from './train';
import { assembleStep } from '../plan/step';
import { MODEL_PRESETS } from '../model/config';
import { referenceBackward, referenceForward, sftLossAndGrads } from '../model/reference/model';
import { forwardKlRow, sdccKl } from './kernels/kl-sdcc/kl-sdcc.reference';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { randomWeights } from '../model/random-weights';
import { readFixture, workedExample } from '../testing/fixtures';
import type { Rollout } from '../rollout/rollout';
import { compare } from '../testing/close';

const config = MODEL_PRESETS.tiny;
const weights = randomWeights(config, 23);
const V = config.vocabSize;
let gpu: Gpu;
let model: GpuModel;
useGpuModel(weights, (g, m) => ([gpu, model] = [g, m]));

const batch = [
  workedExample(),
  ...Array.from({ length: 3 }, (_, i) => validateRollout(generateRandomRollout({ seed: 410 + i, size: 'small' }), { file: `r${i}.json` })),
];
const trees = batch.map(deriveTree);
const LAMBDA = 0.7;

/** The reference: student and teacher forwards in float64, the KL's gradient on the student's rows only, one backward of the student. */
function reference() {
  const step = assembleStep(trees, { method: 'sdcc', sdccTeacher: 'logit-tree', conditioningDrift: false });
  const student = referenceForward(weights, step.batch);
  const teacher = referenceForward(weights, step.teacher!);
  const kl = sdccKl(student.logits, student.cache.N, teacher.logits, teacher.cache.N, V, step.pairs);
  const task = sftLossAndGrads(weights, step.batch, step.batch.targets);
  const klGrads = referenceBackward(weights, student.cache, kl.dStudent);
  const grads = new Map([...task.grads].map(([name, g]) => [name, Float64Array.from(g, (v, i) => v + LAMBDA * klGrads.get(name)![i])]));
  // The other direction, KL(student ‖ teacher), for a test that can tell the two apart.
  const reverse = step.pairs.reduce((s, p) => s + forwardKlRow(student.logits, p.studentRow, teacher.logits, p.teacherRow, V), 0) / step.pairs.length;
  return { step, kl, task, grads, reverse };
}

function worstRelative(got: Map<string, ArrayLike<number>>, want: Map<string, ArrayLike<number>>): [string, number] {
  let worst: [string, number] = ['', 0];
  for (const [name, w] of want) {
    let scale = 0;
    for (let i = 0; i < w.length; i++) scale = Math.max(scale, Math.abs(w[i]));
    const rel = compare(got.get(name)!, w).maxAbs / Math.max(scale, 1e-12);
    if (rel > worst[1]) worst = [name, rel];
  }
  return worst;
}

describe('SDCC gradient against the float64 reference (teacher under stop-gradient)', () => {
  const ref = reference();

  it('the batch has diverging leaves in several rollouts (the KL fires)', () => {
    expect(ref.step.pairs.length).toBeGreaterThan(4);
    expect(ref.kl.meanKl).toBeGreaterThan(1e-3);
  });

  for (const sdccTeacher of ['packed-4d', 'logit-tree'] as const) {
    it(`${sdccTeacher} teacher: KL(teacher ‖ student), not the reverse; every parameter's gradient matches (relative ≤ 1e-3)`, async () => {
      const m = await computeGradients(model, planStep(batch, { method: 'sdcc', objective: 'sft', lambda: LAMBDA, sdccTeacher, conditioningDrift: false }));
      expect(m.klFired).toBe(true);
      expect(Math.abs(m.klSdcc - ref.kl.meanKl)).toBeLessThan(1e-4 * Math.max(1, ref.kl.meanKl));
      expect(Math.abs(m.klSdcc - ref.reverse)).toBeGreaterThan(1e-2 * ref.kl.meanKl);
      expect(Math.abs(m.taskLoss - ref.task.loss)).toBeLessThan(1e-5);
      expect(m.loss).toBeCloseTo(ref.task.loss + LAMBDA * ref.kl.meanKl, 4);
      const [name, rel] = worstRelative(await model.readGrads(), ref.grads);
      expect(rel, `worst tensor ${name}: ${rel.toExponential(3)}`).toBeLessThan(1e-3);
    });
  }

  it('a gradient through the teacher would show: its rows pulled towards the student move the parameters elsewhere', () => {
    // What a missing stop-gradient adds (d KL / d teacher logits = p_t ⊙ (log p_t − log p_s − KL) per pair): not small.
    const { step } = ref;
    const teacher = referenceForward(weights, step.teacher!);
    const student = referenceForward(weights, step.batch);
    const dTeacher = new Float64Array(teacher.cache.N * V);
    for (const p of step.pairs) {
      const row = (logits: ArrayLike<number>, r: number) => {
        const z = Array.from({ length: V }, (_, v) => logits[r * V + v]);
        const max = Math.max(...z);
        const lse = max + Math.log(z.reduce((s, x) => s + Math.exp(x - max), 0));
        return z.map((x) => x - lse);
      };
      const lt = row(teacher.logits, p.teacherRow);
      const ls = row(student.logits, p.studentRow);
      const klRow = lt.reduce((s, l, v) => s + Math.exp(l) * (l - ls[v]), 0);
      for (let v = 0; v < V; v++) dTeacher[p.teacherRow * V + v] = (Math.exp(lt[v]) * (lt[v] - ls[v] - klRow)) / step.pairs.length;
    }
    const leak = referenceBackward(weights, teacher.cache, dTeacher);
    const withLeak = new Map([...ref.grads].map(([name, g]) => [name, Float64Array.from(g, (v, i) => v + LAMBDA * leak.get(name)![i])]));
    const [, rel] = worstRelative(withLeak, ref.grads);
    expect(rel).toBeGreaterThan(1e-2); // far above the 1e-3 the GPU gradients meet
  });
});

describe('the advantage-gated KL (RL)', () => {
  /** The worked example with a reward and a group, for GRPO. */
  const member = (id: string, reward: number, group: string): Rollout => {
    const json = JSON.parse(readFixture('worked-example.json'));
    Object.assign(json, { id, reward, group });
    return validateRollout(json, { file: `${id}.json` });
  };
  const grads = async (rollouts: Rollout[], sdccGate: 'leaves' | 'advantage', sdccTeacher: 'packed-4d' | 'logit-tree' = 'packed-4d') => {
    const m = await computeGradients(
      model,
      planStep(rollouts, { method: 'sdcc', objective: 'rl', lambda: LAMBDA, sdccGate, sdccTeacher, conditioningDrift: false }),
    );
    let max = 0;
    for (const t of (await model.readGrads()).values()) for (const v of t) max = Math.max(max, Math.abs(v));
    return { m, max };
  };

  it("a group with equal rewards: the paper's KL is the only gradient; gated, nothing moves", async () => {
    const solved = [member('a', 1, 'g'), member('b', 1, 'g')];
    const paper = await grads(solved, 'leaves');
    expect(paper.m.taskLoss).toBe(0); // every advantage is 0
    expect(paper.m.klFired).toBe(true);
    expect(paper.max).toBeGreaterThan(1e-4);
    const gated = await grads(solved, 'advantage');
    expect(gated.m.klFired).toBe(false);
    expect(gated.m.klSdcc).toBe(0);
    expect(gated.max).toBe(0);
    expect(gated.m.divergingLeaves).toBe(paper.m.divergingLeaves);
  });

  it('gated to no pair with branch teachers: no teacher forward runs, the step counts the student rows only, and nothing moves', async () => {
    const solved = [member('a', 1, 'g'), member('b', 1, 'g')];
    const paper = await grads(solved, 'leaves', 'logit-tree');
    expect(paper.m.klFired).toBe(true);
    expect(paper.m.tokens).toBeGreaterThan(paper.m.nFinal); // the student's final walks and the teachers' branches
    const gated = await grads(solved, 'advantage', 'logit-tree');
    expect(gated.m.klFired).toBe(false);
    expect(gated.m.taskLoss).toBe(paper.m.taskLoss);
    expect(gated.max).toBe(0);
    expect(gated.m.tokens).toBe(gated.m.nFinal); // the student's final walks alone
  });

  it('mixed groups: gated, the KL keeps the leaves of the rollouts with an advantage, and is their mean', async () => {
    // a and b: a group with rewards 1 and 0 (advantages ±1); c, another rollout, alone (advantage 0).
    const json = { ...generateRandomRollout({ seed: 411, size: 'small' }), id: 'c', reward: 1, group: 'h' };
    for (const e of json.events) if (e.op === 'append' && e.role === 'act' && !e.logprobs && e.tokens) e.logprobs = e.tokens.map(() => -1);
    const other = validateRollout(json, { file: 'c.json' });
    const batch = [member('a', 1, 'g'), member('b', 0, 'g'), other];
    const gated = await grads(batch, 'advantage');
    const pair = await grads(batch.slice(0, 2), 'leaves');
    const paper = await grads(batch, 'leaves');
    expect(gated.m.klFired).toBe(true);
    expect(Math.abs(gated.m.klSdcc - pair.m.klSdcc)).toBeLessThan(1e-5); // a's and b's leaves only
    expect(Math.abs(gated.m.klSdcc - paper.m.klSdcc)).toBeGreaterThan(1e-3); // c's leaves count in the paper's mean
  });
});
