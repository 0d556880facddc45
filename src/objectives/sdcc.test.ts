import { describe, expect, it } from 'vitest';
import { finiteDifference, randomNormal } from '../model/reference/gradcheck';
import { expectClose } from '../testing/close';
import { createRng } from '../util/prng';
import { type SdccPair, gatedPairs } from './sdcc';
import { forwardKlRow, sdccKl, sdccObjective } from '../gpu/kernels/kl-sdcc/kl-sdcc.reference';
import { sftTargets } from './tokens';
import { tokenObjective } from '../gpu/kernels/loss-grad/loss-grad.reference';

const FD = { abs: 1e-7, rel: 1e-6 };
const [Ns, Nt, V] = [5, 4, 9];
const PAIRS: SdccPair[] = [
  { studentRow: 3, teacherRow: 0 },
  { studentRow: 1, teacherRow: 2 },
  { studentRow: 3, teacherRow: 3 }, // a student row shared by two pairs accumulates
];

function logits(seed: number, rows: number): Float64Array {
  return randomNormal(createRng(seed), rows * V, 1.5);
}

describe('forwardKlRow', () => {
  it('is KL(teacher ‖ student) on a hand-worked pair', () => {
    // p_t = (1/2, 1/2), p_s = (3/4, 1/4): KL = ½ ln(2/3) + ½ ln 2 = ½ ln(4/3).
    expect(forwardKlRow([0, 0], 0, [Math.log(3), 0], 0, 2)).toBeCloseTo(0.5 * Math.log(4 / 3), 15);
    // The other direction differs: forward KL weights by the teacher.
    expect(forwardKlRow([Math.log(3), 0], 0, [0, 0], 0, 2)).toBeCloseTo(0.75 * Math.log(1.5) + 0.25 * Math.log(0.5), 15);
  });

  it('is 0 for identical rows and positive otherwise', () => {
    const s = logits(1, Ns);
    expect(forwardKlRow(s, 2, s, 2, V)).toBe(0);
    expect(forwardKlRow(logits(2, Nt), 1, s, 2, V)).toBeGreaterThan(0);
  });
});

describe('sdccKl', () => {
  it('has the gradient softmax(z_s) − p_t (mean over pairs), against finite differences', () => {
    const student = logits(3, Ns);
    const teacher = logits(4, Nt);
    const got = sdccKl(student, Ns, teacher, Nt, V, PAIRS);
    PAIRS.forEach(({ studentRow, teacherRow }, j) => expect(got.kl[j]).toBeCloseTo(forwardKlRow(teacher, teacherRow, student, studentRow, V), 15));
    expect(got.meanKl).toBeCloseTo((got.kl[0] + got.kl[1] + got.kl[2]) / 3, 15);
    const numeric = finiteDifference((z) => sdccKl(z, Ns, teacher, Nt, V, PAIRS).meanKl, Float64Array.from(student));
    const report = expectClose(got.dStudent, numeric, { ...FD, label: 'd meanKl / d student' });
    console.log(`sdccKl gradient vs finite differences: max abs diff ${report.maxAbs.toExponential(2)}`);
    // Rows 0, 2, 4 hold no pair: no gradient.
    for (const r of [0, 2, 4]) expect(got.dStudent.subarray(r * V, (r + 1) * V).every((x) => x === 0)).toBe(true);
  });

  it('is exactly 0, with zero gradient, when there are no diverging leaves', () => {
    const got = sdccKl(logits(5, Ns), Ns, logits(6, Nt), Nt, V, []);
    expect(got.meanKl).toBe(0);
    expect(got.kl.length).toBe(0);
    expect(got.dStudent.every((x) => x === 0)).toBe(true);
  });

  it('rejects a pair outside the logits', () => {
    expect(() => sdccKl(logits(5, Ns), Ns, logits(6, Nt), Nt, V, [{ studentRow: 0, teacherRow: 4 }])).toThrow('sdcc pair 0: teacher row 4 outside [0, 4)');
  });
});

describe('sdccObjective', () => {
  const student = logits(7, Ns);
  const teacher = logits(8, Nt);
  const scored = [
    { row: 0, token: 2 },
    { row: 1, token: 5 },
    { row: 3, token: 8 },
    { row: 4, token: 0 },
  ];
  const task = tokenObjective(student, Ns, V, sftTargets(scored), { kind: 'sft' });

  it('with λ = 0 is the task loss and the task dLogits, bit for bit', () => {
    const got = sdccObjective(task, sdccKl(student, Ns, teacher, Nt, V, PAIRS), 0);
    expect(got.loss).toBe(task.loss);
    expect(Array.from(got.dLogits)).toEqual(Array.from(task.dLogits));
  });

  it('without pairs is the task, bit for bit, whatever λ', () => {
    const got = sdccObjective(task, sdccKl(student, Ns, teacher, Nt, V, []), 0.7);
    expect(got.loss).toBe(task.loss);
    expect(got.meanKl).toBe(0);
    expect(Array.from(got.dLogits)).toEqual(Array.from(task.dLogits));
  });

  it('is L_task + λ·mean KL, with a gradient that matches finite differences', () => {
    const lambda = 0.7;
    const f = (z: Float64Array) =>
      sdccObjective(tokenObjective(z, Ns, V, sftTargets(scored), { kind: 'sft' }), sdccKl(z, Ns, teacher, Nt, V, PAIRS), lambda).loss;
    const got = sdccObjective(task, sdccKl(student, Ns, teacher, Nt, V, PAIRS), lambda);
    const kl = sdccKl(student, Ns, teacher, Nt, V, PAIRS);
    expect(got.loss).toBeCloseTo(task.loss + lambda * kl.meanKl, 14);
    expect(kl.meanKl).toBeGreaterThan(0.01); // the KL term is not negligible in the check below
    const report = expectClose(got.dLogits, finiteDifference(f, Float64Array.from(student)), { ...FD, label: 'd L_sdcc / d student' });
    console.log(`sdccObjective gradient vs finite differences: max abs diff ${report.maxAbs.toExponential(2)}`);
  });
});

describe('gatedPairs (the advantage-gated KL)', () => {
  const pairs = [
    { studentRow: 3, teacherRow: 10, rollout: 0 },
    { studentRow: 7, teacherRow: 12, rollout: 1 },
    { studentRow: 9, teacherRow: 15, rollout: 1 },
    { studentRow: 11, teacherRow: 20, rollout: 2 },
  ];
  const of = (p: (typeof pairs)[number]) => p.rollout;
  it("the paper's form keeps every diverging leaf, whatever the advantages", () => {
    expect(gatedPairs(pairs, of, Float64Array.from([0, 0, 0]), 'leaves')).toEqual(pairs);
  });
  it('gated, keeps the leaves of rollouts with a non-zero advantage only: none when every group had equal rewards', () => {
    expect(gatedPairs(pairs, of, Float64Array.from([0, -1, 1]), 'advantage').map((p) => p.studentRow)).toEqual([7, 9, 11]);
    expect(gatedPairs(pairs, of, Float64Array.from([0, 0, 0]), 'advantage')).toEqual([]);
  });
  it('SFT (no advantages) keeps every leaf', () => {
    expect(gatedPairs(pairs, of, null, 'advantage')).toEqual(pairs);
  });
});
