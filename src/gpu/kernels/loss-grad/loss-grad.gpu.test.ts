import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { submitLaunches } from '../../runtime/kernel';
import { TARGET_OUT_BYTES, createLossGrad, readLossGradOutputs, type LossGradOutputs } from './loss-grad';
import { type ObjectiveTarget, type TokenObjective, rlTargets, sftTargets } from '../../../objectives/tokens';
import { tokenObjective } from './loss-grad.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

// fp32 log-softmax over V = 272 logits of size ~|z| ≤ 30 against float64: ℓ carries ~1e-5 absolute
// (lse ≈ 30 has an ulp of 2e-6); softmax entries and dLogits are ≤ 1 in size, ~1e-7 off.
const LOGPROB = { abs: 2e-5, rel: 1e-6 };
const DLOGITS = { abs: 2e-6, rel: 1e-5 };

const [N, V] = [11, 272];

function randomLogits(seed: number, scale: number): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length: N * V }, () => rng.normal() * scale);
}

/** Rows 2 and 7 score two targets each (7 twice the same token); rows 0, 5, 10 score none. */
const SCORED = [
  { row: 1, token: 3 },
  { row: 2, token: 271 },
  { row: 2, token: 0 },
  { row: 3, token: 64 },
  { row: 4, token: 200 },
  { row: 6, token: 17 },
  { row: 7, token: 99 },
  { row: 7, token: 99 },
  { row: 8, token: 1 },
  { row: 9, token: 128 },
];

interface Run {
  out: LossGradOutputs;
  dLogits: Float32Array;
}

async function run(logits: Float32Array, targets: readonly ObjectiveTarget[], objective: TokenObjective): Promise<Run> {
  const { device } = gpu;
  const L = uploadStorage(device, 'test.logits', logits);
  // Pre-filled with NaN: every row must be written, target or not.
  const D = uploadStorage(device, 'test.dLogits', new Float32Array(N * V).fill(NaN));
  const O = createStorage(device, 'test.outputs', Math.max(1, targets.length) * TARGET_OUT_BYTES);
  device.pushErrorScope('validation');
  const built = createLossGrad(device, { N, V }, objective, targets, { logits: L, dLogits: D, outputs: O });
  submitLaunches(device, 'test.lossGrad', [built.launch]);
  expect((await device.popErrorScope())?.message).toBeUndefined();
  const dLogits = await readFloat32(device, D, N * V);
  const out = await readLossGradOutputs(device, O, targets.length);
  built.destroy();
  for (const b of [L, D, O]) b.destroy();
  return { out, dLogits };
}

function check(got: Run, logits: Float32Array, targets: readonly ObjectiveTarget[], objective: TokenObjective, label: string): void {
  const want = tokenObjective(logits, N, V, targets, objective);
  const lp = expectClose(got.out.logprobs, want.logprobs, { ...LOGPROB, label: `${label} logprobs` });
  const ls = expectClose(got.out.losses, want.losses, { ...LOGPROB, label: `${label} losses` });
  const dl = expectClose(got.out.dLogprobs, want.dLogprobs, { abs: 1e-6, rel: 1e-5, label: `${label} dLogprobs` });
  expectClose(got.out.ratios, want.ratios, { abs: 0, rel: 5e-5, label: `${label} ratios` });
  const dz = expectClose(got.dLogits, want.dLogits, { ...DLOGITS, label: `${label} dLogits` });
  expect(got.out.loss).toBeCloseTo(want.loss, 5);
  console.log(
    `${label}: max abs diff logprob ${lp.maxAbs.toExponential(2)}, loss ${ls.maxAbs.toExponential(2)}, ` +
      `dLogprob ${dl.maxAbs.toExponential(2)}, dLogits ${dz.maxAbs.toExponential(2)}; loss ${got.out.loss} vs ${want.loss}`,
  );
}

function rolloutFor(logits: Float32Array, shifts: number[], advantages: number[], refShift = 0): ObjectiveTarget[] {
  const ref = tokenObjective(logits, N, V, sftTargets(SCORED), { kind: 'sft' }).logprobs;
  return rlTargets(
    SCORED.map((t, j) => ({
      ...t,
      rolloutLogprob: Math.fround(Math.min(0, ref[j] - shifts[j])),
      advantage: Math.fround(advantages[j]),
      refLogprob: Math.fround(Math.min(0, ref[j] + refShift * (j % 2 ? -1 : 0.5))),
    })),
  );
}

describe('loss-grad.wgsl sft', () => {
  for (const scale of [1, 30]) {
    it(`matches tokenObjective (logits × ${scale})`, async () => {
      const logits = randomLogits(scale, scale);
      const targets = sftTargets(SCORED);
      const got = await run(logits, targets, { kind: 'sft' });
      check(got, logits, targets, { kind: 'sft' }, `sft ×${scale}`);
      for (const r of [0, 5, 10]) expect(got.dLogits.subarray(r * V, (r + 1) * V).every((x) => x === 0)).toBe(true);
    });
  }

  it('writes zeros everywhere without targets', async () => {
    const got = await run(randomLogits(3, 1), [], { kind: 'sft' });
    expect(got.dLogits.every((x) => x === 0)).toBe(true);
    expect(got.out.loss).toBe(0);
  });
});

describe('loss-grad.wgsl ppo', () => {
  const advantages = [1.25, -0.5, 2, -1.5, 0.75, -0.25, 1, 0.5, -2, 0];
  const CASES: [string, TokenObjective, number[], number][] = [
    ['inside the clip range', { kind: 'ppo', epsilon: 0.2 }, [0.1, -0.05, 0.15, -0.1, 0.02, 0.08, 0, 0.12, -0.15, 0.05], 0],
    ['clipped and unclipped mixed', { kind: 'ppo', epsilon: 0.2 }, [0.5, -0.6, 0.5, -0.6, 0.1, 0.7, -0.5, 0.4, 0.6, -0.3], 0],
    ['with the k3 KL', { kind: 'ppo', epsilon: 0.1, klCoef: 0.3 }, [0.3, -0.3, 0.05, 0.2, -0.5, 0, 0.01, -0.2, 0.3, 0.5], 0.4],
  ];
  for (const [name, objective, shifts, refShift] of CASES) {
    it(`matches tokenObjective (${name})`, async () => {
      const logits = randomLogits(4, 2);
      const targets = rolloutFor(logits, shifts, advantages, refShift);
      const got = await run(logits, targets, objective);
      check(got, logits, targets, objective, `ppo ${name}`);
      if (name.startsWith('clipped')) expect(Array.from(got.out.dLogprobs).filter((d, j) => d === 0 && advantages[j] !== 0).length).toBeGreaterThan(1);
    });
  }

  it('at ratio 1 gives exactly the plain policy gradient (SFT with weights w·A)', async () => {
    const logits = randomLogits(5, 2);
    const scored = SCORED.slice(0, 8); // T = 8: w = 1/8 and w·A are exact in fp32
    const sft = await run(logits, sftTargets(scored), { kind: 'sft' });
    const targets = rlTargets(scored.map((t, j) => ({ ...t, rolloutLogprob: sft.out.logprobs[j], advantage: advantages[j] })));
    const ppo = await run(logits, targets, { kind: 'ppo', epsilon: 0.2 });
    expect(Array.from(ppo.out.ratios)).toEqual(Array(8).fill(1));
    const pg = await run(
      logits,
      targets.map((t) => ({ row: t.row, token: t.token, weight: t.weight * t.advantage! })),
      { kind: 'sft' },
    );
    expect(Array.from(ppo.dLogits)).toEqual(Array.from(pg.dLogits));
    expect(ppo.dLogits.some((x) => x !== 0)).toBe(true);
  });
});
