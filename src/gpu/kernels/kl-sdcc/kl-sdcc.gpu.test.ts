import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { submitLaunches } from '../../runtime/kernel';
import { createKlSdcc, readKlSdcc } from './kl-sdcc';
import { TARGET_OUT_BYTES, createLossGrad } from '../loss-grad/loss-grad';
import type { SdccPair } from '../../../objectives/sdcc';
import { sdccKl, sdccObjective } from './kl-sdcc.reference';
import { sftTargets } from '../../../objectives/tokens';
import { tokenObjective } from '../loss-grad/loss-grad.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

// KL sums V = 272 fp32 terms p_t·(log p_t − log p_s) with |log p| ≲ 15: ~1e-6 absolute.
const KL = { abs: 1e-5, rel: 1e-5 };
const DLOGITS = { abs: 2e-6, rel: 1e-5 };

const [Ns, Nt, V] = [9, 6, 272];
const PAIRS: SdccPair[] = [
  { studentRow: 4, teacherRow: 0 },
  { studentRow: 7, teacherRow: 3 },
  { studentRow: 4, teacherRow: 5 }, // student row 4 carries two pairs: accumulated in one workgroup
  { studentRow: 8, teacherRow: 2 },
];
const SCORED = [
  { row: 3, token: 10 },
  { row: 4, token: 271 },
  { row: 7, token: 5 },
  { row: 8, token: 64 },
];

function randomLogits(seed: number, rows: number, scale = 2): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length: rows * V }, () => rng.normal() * scale);
}

interface Run {
  dStudent: Float32Array;
  kl: Float32Array;
  meanKl: number;
  dispatched: boolean;
}

/** The SDCC student objective on the GPU: SFT dLogits (loss_grad) then the KL term, in one pass. */
async function runSdcc(student: Float32Array, teacher: Float32Array, pairs: readonly SdccPair[], lambda: number): Promise<Run> {
  const { device } = gpu;
  const S = uploadStorage(device, 'test.student', student);
  const T = uploadStorage(device, 'test.teacher', teacher);
  const D = createStorage(device, 'test.dStudent', Ns * V * 4);
  const O = createStorage(device, 'test.outputs', SCORED.length * TARGET_OUT_BYTES);
  const K = createStorage(device, 'test.kl', Math.max(1, pairs.length) * 4);
  device.pushErrorScope('validation');
  const task = createLossGrad(device, { N: Ns, V }, { kind: 'sft' }, sftTargets(SCORED), { logits: S, dLogits: D, outputs: O });
  const kl = createKlSdcc(device, { Ns, Nt, V }, pairs, lambda, { student: S, teacher: T, kl: K, dStudent: D });
  submitLaunches(device, 'test.sdcc', kl.launch ? [task.launch, kl.launch] : [task.launch]);
  expect((await device.popErrorScope())?.message).toBeUndefined();
  const dStudent = await readFloat32(device, D, Ns * V);
  const outputs = await readKlSdcc(device, K, kl.P);
  task.destroy();
  kl.destroy();
  for (const b of [S, T, D, O, K]) b.destroy();
  return { dStudent, ...outputs, dispatched: kl.launch !== null };
}

describe('kl-sdcc.wgsl', () => {
  for (const scale of [2, 25]) {
    it(`matches sdccKl and sdccObjective (λ = 0.6, logits × ${scale})`, async () => {
      const student = randomLogits(1, Ns, scale);
      const teacher = randomLogits(2, Nt, scale);
      const got = await runSdcc(student, teacher, PAIRS, 0.6);
      const kl = sdccKl(student, Ns, teacher, Nt, V, PAIRS);
      const want = sdccObjective(tokenObjective(student, Ns, V, sftTargets(SCORED), { kind: 'sft' }), kl, 0.6);
      const k = expectClose(got.kl, kl.kl, { ...KL, label: 'kl per pair' });
      const d = expectClose(got.dStudent, want.dLogits, { ...DLOGITS, label: 'dStudent' });
      expect(got.meanKl).toBeCloseTo(kl.meanKl, 4);
      console.log(
        `kl_sdcc ×${scale}: KL ${Array.from(got.kl, (x) => x.toFixed(4)).join(', ')}; max abs diff KL ${k.maxAbs.toExponential(2)}, dStudent ${d.maxAbs.toExponential(2)}`,
      );
    });
  }

  it('with λ = 0 leaves the task dLogits bit for bit and still measures the KL', async () => {
    const student = randomLogits(3, Ns);
    const teacher = randomLogits(4, Nt);
    const got = await runSdcc(student, teacher, PAIRS, 0);
    const taskOnly = await runSdcc(student, teacher, [], 0.6);
    expect(Array.from(got.dStudent)).toEqual(Array.from(taskOnly.dStudent));
    expectClose(got.kl, sdccKl(student, Ns, teacher, Nt, V, PAIRS).kl, { ...KL, label: 'kl at λ = 0' });
    expect(got.meanKl).toBeGreaterThan(0.1);
  });

  it('without pairs dispatches nothing: KL exactly 0 and the task dLogits unchanged', async () => {
    const student = randomLogits(5, Ns);
    const got = await runSdcc(student, randomLogits(6, Nt), [], 0.6);
    expect(got.dispatched).toBe(false);
    expect(got.meanKl).toBe(0);
    expect(got.kl.length).toBe(0);
    expectClose(got.dStudent, tokenObjective(student, Ns, V, sftTargets(SCORED), { kind: 'sft' }).dLogits, { ...DLOGITS, label: 'task dLogits' });
    // No teacher forward ran: none is needed.
    const { device } = gpu;
    const S = uploadStorage(device, 'test.student', student);
    const K = createStorage(device, 'test.kl', 4);
    const built = createKlSdcc(device, { Ns, Nt: 0, V }, [], 0.6, { student: S, kl: K });
    expect(built.launch).toBeNull();
    expect((await readKlSdcc(device, K, built.P)).meanKl).toBe(0);
    S.destroy();
    K.destroy();
  });

  it('is 0 where teacher and student rows are identical', async () => {
    const student = randomLogits(7, Ns);
    const teacher = student.slice(0, Nt * V);
    const got = await runSdcc(student, teacher, [{ studentRow: 2, teacherRow: 2 }], 1);
    expect(Math.abs(got.kl[0])).toBeLessThan(1e-6);
  });
});
