// Float64 reference of kl-sdcc.wgsl: SDCC's KL term (src/objectives/sdcc.ts, docs/methods.md), the forward
// KL(π_teacher ‖ π_student) over the full vocabulary at each pair, its mean and its gradient
// d KL_t / d z_student = softmax(z_student) − softmax(z_teacher); and L = L_task + λ · mean KL.

import { type SdccPair, checkPairs } from '../../../objectives/sdcc';
import { type Vec, checkLogits, rowLogSoftmax } from '../logsoftmax/logsoftmax.reference';

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
