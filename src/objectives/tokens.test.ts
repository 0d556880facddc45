import { describe, expect, it } from 'vitest';
import { dot, finiteDifference, randomNormal } from '../model/reference/gradcheck';
import { logsoftmaxGatherBackwardRef, logsoftmaxGatherRef } from '../gpu/kernels/logsoftmax/logsoftmax.reference';
import { expectClose } from '../testing/close';
import { createRng } from '../util/prng';
import { type ObjectiveTarget, type TokenObjective, k3, rlTargets, sftTargets, targetTerm } from './tokens';
import { tokenObjective } from '../gpu/kernels/loss-grad/loss-grad.reference';

// Finite differences in float64 with h = 1e-5 (gradcheck.ts): truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

const [N, V] = [6, 11];

function randomLogits(seed: number): Float64Array {
  return randomNormal(createRng(seed), N * V, 2);
}

/** Rows 1 and 4 hold two targets each; row 0, 3 hold none. */
const SCORED = [
  { row: 1, token: 3 },
  { row: 2, token: 0 },
  { row: 4, token: 10 },
  { row: 1, token: 7 },
  { row: 5, token: 3 },
  { row: 4, token: 10 },
];

describe('tokenObjective sft', () => {
  it('is the mean NLL, with the model reference logsoftmaxGather backward as its dLogits', () => {
    const logits = randomLogits(1);
    const targets = sftTargets(SCORED);
    const got = tokenObjective(logits, N, V, targets, { kind: 'sft' });
    const rows = SCORED.map((t) => t.row);
    const tokens = SCORED.map((t) => t.token);
    const logprobs = logsoftmaxGatherRef(logits, V, rows, tokens);
    expectClose(got.logprobs, logprobs, { abs: 1e-15, label: 'logprobs' });
    expect(got.loss).toBeCloseTo(-logprobs.reduce((a, b) => a + b, 0) / SCORED.length, 14);
    const want = logsoftmaxGatherBackwardRef(logits, V, N, rows, tokens, new Float64Array(SCORED.length).fill(-1 / SCORED.length));
    const report = expectClose(got.dLogits, want, { abs: 1e-15, label: 'sft dLogits' });
    console.log(`sft dLogits vs logsoftmaxGatherBackwardRef: max abs diff ${report.maxAbs.toExponential(2)}`);
    for (const r of [0, 3]) expect(Array.from(got.dLogits.subarray(r * V, (r + 1) * V)).every((x) => x === 0)).toBe(true);
  });

  it('has no loss and zero gradients without targets', () => {
    const got = tokenObjective(randomLogits(2), N, V, sftTargets([]), { kind: 'sft' });
    expect(got.loss).toBe(0);
    expect(got.dLogits.every((x) => x === 0)).toBe(true);
  });
});

function rlBatch(logits: Float64Array, shifts: number[], advantages: number[], refShift = 0): ObjectiveTarget[] {
  const ref = tokenObjective(logits, N, V, sftTargets(SCORED), { kind: 'sft' }).logprobs;
  return rlTargets(
    SCORED.map((t, j) => ({
      ...t,
      rolloutLogprob: Math.min(0, ref[j] - shifts[j]), // r = exp(shift) unless the min bites
      advantage: advantages[j],
      refLogprob: Math.min(0, ref[j] + refShift * (j % 2 === 0 ? 1 : -0.5)),
    })),
  );
}

describe('tokenObjective ppo', () => {
  it('at ratio 1 (logprobs equal the rollout) has the plain policy gradient −A·w·∇ℓ, bit for bit', () => {
    const logits = randomLogits(3);
    const advantages = [1.5, -0.7, 0.3, -2, 0.9, 0];
    const targets = rlBatch(logits, Array(SCORED.length).fill(0), advantages);
    const ref = tokenObjective(logits, N, V, sftTargets(SCORED), { kind: 'sft' }).logprobs;
    targets.forEach((t, j) => (t.rolloutLogprob = ref[j])); // exactly ℓ_θ
    const ppo = tokenObjective(logits, N, V, targets, { kind: 'ppo', epsilon: 0.2 });
    expect(Array.from(ppo.ratios)).toEqual(Array(SCORED.length).fill(1));
    // The policy gradient of Σ w·A·ℓ is the SFT gradient with weights w·A.
    const pg = tokenObjective(
      logits,
      N,
      V,
      targets.map((t) => ({ row: t.row, token: t.token, weight: t.weight * t.advantage! })),
      { kind: 'sft' },
    );
    expect(Array.from(ppo.dLogits)).toEqual(Array.from(pg.dLogits));
    expect(ppo.loss).toBeCloseTo(-advantages.reduce((a, b) => a + b, 0) / SCORED.length, 14);
  });

  it('stops the gradient exactly where the clipped branch is the minimum', () => {
    const w = 0.5;
    const t = (A: number, logprob: number): ReturnType<typeof targetTerm> =>
      targetTerm({ kind: 'ppo', epsilon: 0.2 }, { row: 0, token: 0, weight: w, rolloutLogprob: -1, advantage: A }, logprob);
    const up = Math.log(1.5) - 1; // r = 1.5 > 1.2
    const down = Math.log(0.5) - 1; // r = 0.5 < 0.8
    const inside = Math.log(1.1) - 1; // r = 1.1
    // A > 0: r > 1+ε is clipped (loss −w·1.2·A, no gradient); r < 1−ε is not (loss −w·r·A).
    expect(t(2, up)).toEqual({ loss: -w * 1.2 * 2, dLogprob: 0, ratio: expect.closeTo(1.5, 14) });
    expect(t(2, down).dLogprob).toBeCloseTo(-w * 0.5 * 2, 14);
    expect(t(2, down).loss).toBeCloseTo(-w * 0.5 * 2, 14);
    // A < 0: r < 1−ε is clipped, r > 1+ε is not.
    expect(t(-2, down)).toEqual({ loss: expect.closeTo(-w * 0.8 * -2, 14), dLogprob: 0, ratio: expect.closeTo(0.5, 14) });
    expect(t(-2, up).dLogprob).toBeCloseTo(-w * 1.5 * -2, 14);
    // Inside the range both branches agree.
    expect(t(2, inside).dLogprob).toBeCloseTo(-w * 1.1 * 2, 14);
    expect(t(-2, inside).loss).toBeCloseTo(-w * 1.1 * -2, 14);
  });

  const CASES: [string, TokenObjective, number[], number][] = [
    ['inside the clip range', { kind: 'ppo', epsilon: 0.2 }, [0.1, -0.05, 0.15, -0.1, 0.02, 0.08], 0],
    ['clipped and unclipped targets mixed', { kind: 'ppo', epsilon: 0.2 }, [0.5, -0.6, 0.5, -0.6, 0.1, 0.7], 0],
    ['with the k3 KL to a reference', { kind: 'ppo', epsilon: 0.1, klCoef: 0.3 }, [0.3, -0.3, 0.05, 0.2, -0.5, 0], 0.4],
  ];
  for (const [name, objective, shifts, refShift] of CASES) {
    it(`matches finite differences of its loss (${name})`, () => {
      const logits = randomLogits(4);
      const advantages = [1.2, -0.8, -1.5, 0.6, 2, -0.4];
      const targets = rlBatch(logits, shifts, advantages, refShift);
      const got = tokenObjective(logits, N, V, targets, objective);
      // Ratios stay off the clip boundaries, where the loss has a kink and differences mean nothing.
      const epsilon = objective.kind === 'ppo' ? (objective.epsilon ?? 0.2) : 0;
      for (const r of got.ratios) expect(Math.min(Math.abs(r - 1 - epsilon), Math.abs(r - 1 + epsilon))).toBeGreaterThan(1e-3);
      const clipped = got.dLogprobs.filter((d) => d === 0).length;
      expect(clipped).toBe(name.startsWith('clipped') ? 2 : 0);
      const numeric = finiteDifference((z) => tokenObjective(z, N, V, targets, objective).loss, Float64Array.from(logits));
      const report = expectClose(got.dLogits, numeric, { ...FD, label: `ppo dLogits (${name})` });
      console.log(`ppo ${name}: max abs diff vs finite differences ${report.maxAbs.toExponential(2)}`);
    });
  }

  it('k3 is zero at the reference, positive elsewhere, and its derivative is 1 − exp(ℓ_ref − ℓ)', () => {
    expect(k3(-1.3, -1.3)).toBe(0);
    for (const l of [-3, -1, -0.2]) {
      expect(k3(l, -1.3)).toBeGreaterThan(0);
      const numeric = (k3(l + 1e-6, -1.3) - k3(l - 1e-6, -1.3)) / 2e-6;
      expect(numeric).toBeCloseTo(1 - Math.exp(-1.3 - l), 8);
    }
    // KL(π_θ ‖ π_ref) exactly: with ℓ − ℓ_ref = log 2, k3 = 1/2 − log(1/2) − 1.
    expect(k3(Math.log(0.5), Math.log(0.25))).toBeCloseTo(0.5 + Math.log(2) - 1, 15);
  });

  it('rejects a target without the rollout logprob or a KL without the reference logprob', () => {
    const logits = randomLogits(5);
    expect(() => tokenObjective(logits, N, V, [{ row: 0, token: 1, weight: 1, advantage: 1 }], { kind: 'ppo' })).toThrow("ppo needs the rollout's logprob");
    expect(() => tokenObjective(logits, N, V, [{ row: 0, token: 1, weight: 1, advantage: 1, rolloutLogprob: -2 }], { kind: 'ppo', klCoef: 0.1 })).toThrow(
      "needs the reference's logprob",
    );
    expect(() => tokenObjective(logits, N, V, [{ row: 6, token: 1, weight: 1 }], { kind: 'sft' })).toThrow('target 0: row 6 outside [0, 6)');
  });
});

describe('tokenObjective gradient', () => {
  it('dLogits is the gradient of the loss in any direction (directional derivative)', () => {
    const logits = randomLogits(6);
    const targets = rlBatch(logits, [0.1, -0.1, 0.05, 0, 0.12, -0.02], [1, -1, 0.5, 2, -0.3, 0.7], 0.2);
    const objective: TokenObjective = { kind: 'ppo', epsilon: 0.2, klCoef: 0.05 };
    const dir = randomNormal(createRng(7), N * V);
    const h = 1e-6;
    const f = (s: number) =>
      tokenObjective(
        logits.map((z, i) => z + s * dir[i]),
        N,
        V,
        targets,
        objective,
      ).loss;
    const numeric = (f(h) - f(-h)) / (2 * h);
    expect(dot(tokenObjective(logits, N, V, targets, objective).dLogits, dir)).toBeCloseTo(numeric, 8);
  });
});
