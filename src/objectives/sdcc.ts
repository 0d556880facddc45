// SDCC's KL term (docs/methods.md): at each diverging leaf, the forward KL(π_teacher ‖ π_student) over the
// full vocabulary, teacher under stop-gradient. The objective is L = L_task + λ · mean_{t∈D} KL_t,
// and d KL_t / d z_student = softmax(z_student) − softmax(z_teacher). Float64; src/gpu/kernels/kl-sdcc/kl-sdcc.wgsl
// is the fp32 kernel of the same (src/gpu/kernels/kl-sdcc/kl-sdcc.ts).

import { type Vec, checkLogits, rowLogSoftmax } from './rows';

/** A diverging leaf: its predictor row in the student's logits and in the teachers' logits. */
export interface SdccPair {
  studentRow: number;
  teacherRow: number;
}

/** KL(softmax(teacher[tRow]) ‖ softmax(student[sRow])) = Σ_v p_t(v) (log p_t(v) − log p_s(v)). */
export function forwardKlRow(teacher: Vec, tRow: number, student: Vec, sRow: number, V: number): number {
  const lt = rowLogSoftmax(teacher, V, tRow);
  const ls = rowLogSoftmax(student, V, sRow);
  let kl = 0;
  for (let v = 0; v < V; v++) {
    const p = Math.exp(lt[v]);
    if (p > 0) kl += p * (lt[v] - ls[v]);
  }
  return kl;
}

export interface SdccKlResult {
  kl: Float64Array; // (P) KL per pair
  meanKl: number; // mean over pairs; exactly 0 when there are none (KL_SDCC's gating, docs/metrics.md)
  dStudent: Float64Array; // (Ns, V) d meanKl / d student logits
}

export function checkPairs(pairs: readonly SdccPair[], Ns: number, Nt: number): void {
  pairs.forEach(({ studentRow, teacherRow }, j) => {
    if (!Number.isInteger(studentRow) || studentRow < 0 || studentRow >= Ns) throw new Error(`sdcc pair ${j}: student row ${studentRow} outside [0, ${Ns})`);
    if (!Number.isInteger(teacherRow) || teacherRow < 0 || teacherRow >= Nt) throw new Error(`sdcc pair ${j}: teacher row ${teacherRow} outside [0, ${Nt})`);
  });
}

/** student (Ns, V), teacher (Nt, V). Rows shared by several pairs accumulate. */
export function sdccKl(student: Vec, Ns: number, teacher: Vec, Nt: number, V: number, pairs: readonly SdccPair[]): SdccKlResult {
  checkLogits(student, Ns, V, 'student logits');
  checkLogits(teacher, Nt, V, 'teacher logits');
  checkPairs(pairs, Ns, Nt);
  const P = pairs.length;
  const kl = new Float64Array(P);
  const dStudent = new Float64Array(Ns * V);
  pairs.forEach(({ studentRow: s, teacherRow: t }, j) => {
    kl[j] = forwardKlRow(teacher, t, student, s, V);
    const lt = rowLogSoftmax(teacher, V, t);
    const ls = rowLogSoftmax(student, V, s);
    for (let v = 0; v < V; v++) dStudent[s * V + v] += (Math.exp(ls[v]) - Math.exp(lt[v])) / P;
  });
  return { kl, meanKl: P === 0 ? 0 : kl.reduce((a, b) => a + b, 0) / P, dStudent };
}

export interface SdccObjectiveResult {
  loss: number; // L_task + λ · meanKl
  taskLoss: number;
  meanKl: number;
  dLogits: Float64Array; // (Ns, V) d L / d student logits
}

/**
 * L = L_task + λ · mean KL. λ = 0 returns the task's dLogits unchanged, bit for bit (Naive-Compressed);
 * so does a batch without diverging leaves, whose KL term is exactly 0.
 */
export function sdccObjective(task: { loss: number; dLogits: Vec }, kl: SdccKlResult, lambda: number): SdccObjectiveResult {
  if (!(lambda >= 0 && Number.isFinite(lambda))) throw new Error(`sdcc: λ must be a finite number ≥ 0, got ${lambda}`);
  if (task.dLogits.length !== kl.dStudent.length) throw new Error(`sdcc: task dLogits has ${task.dLogits.length} values, the KL's ${kl.dStudent.length}`);
  const dLogits = Float64Array.from(task.dLogits);
  if (lambda !== 0 && kl.kl.length > 0) for (let i = 0; i < dLogits.length; i++) dLogits[i] += lambda * kl.dStudent[i];
  return { loss: task.loss + lambda * kl.meanKl, taskLoss: task.loss, meanKl: kl.meanKl, dLogits };
}

/**
 * Which diverging leaves SDCC's KL is taken at. `leaves`, the paper's form: every one. `advantage`
 * (the advantage-gated KL): under RL, only the leaves of rollouts whose advantage is non-zero, the
 * ones the policy gradient moves. Why it exists: a GRPO group with equal rewards (a solved prompt, or
 * a weak policy's all-failed one) has advantage 0, so on such a batch the KL is the only gradient;
 * AdamW normalises a gradient's scale away (and clips its norm to 1), so its steps are then as large
 * as the task's would be whatever λ is, and they pull the student towards a teacher whose evidence
 * the compressed context no longer holds (the collapse under `window`, docs/experiments/learning).
 * Gated, λ weighs the KL against a policy gradient it always rides with. SFT gates nothing.
 */
export type SdccGate = 'leaves' | 'advantage';
export const SDCC_GATES: readonly SdccGate[] = ['leaves', 'advantage'];

/** The pairs the KL keeps: all of them, or (advantage) those whose rollout's advantage is non-zero; `advantages` null (SFT) keeps all. */
export function gatedPairs<P>(pairs: readonly P[], rolloutOf: (pair: P) => number, advantages: ArrayLike<number> | null, gate: SdccGate): P[] {
  if (gate === 'leaves' || advantages === null) return pairs.slice();
  return pairs.filter((p) => advantages[rolloutOf(p)] !== 0);
}
