// SDCC's KL term (docs/methods.md): at each diverging leaf, the forward KL(π_teacher ‖ π_student) over the
// full vocabulary, teacher under stop-gradient. The objective is L = L_task + λ · mean_{t∈D} KL_t,
// and d KL_t / d z_student = softmax(z_student) − softmax(z_teacher). Its float64 reference is
// src/gpu/kernels/kl-sdcc/kl-sdcc.reference.ts, beside kl-sdcc.wgsl, the fp32 kernel of the same.

/** A diverging leaf: its predictor row in the student's logits and in the teachers' logits. */
export interface SdccPair {
  studentRow: number;
  teacherRow: number;
}

export function checkPairs(pairs: readonly SdccPair[], Ns: number, Nt: number): void {
  pairs.forEach(({ studentRow, teacherRow }, j) => {
    if (!Number.isInteger(studentRow) || studentRow < 0 || studentRow >= Ns) throw new Error(`sdcc pair ${j}: student row ${studentRow} outside [0, ${Ns})`);
    if (!Number.isInteger(teacherRow) || teacherRow < 0 || teacherRow >= Nt) throw new Error(`sdcc pair ${j}: teacher row ${teacherRow} outside [0, ${Nt})`);
  });
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
