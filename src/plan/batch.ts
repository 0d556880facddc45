// packBatch: several plan sequences (from one or many rollouts) in one flat buffer. Each block's
// `end[]` is shifted by its offset, so blocks never see each other (block-diagonal visibility).

import type { PlanSequence, PlanTarget } from './types';

export interface BatchTarget extends PlanTarget {
  /** Which input sequence the target came from. */
  sequence: number;
}

export interface PackedBatch extends PlanSequence {
  targets: BatchTarget[];
  /** Sequence s occupies indices offsets[s] .. offsets[s + 1] - 1. */
  offsets: Uint32Array;
}

export function packBatch(sequences: readonly PlanSequence[]): PackedBatch {
  const offsets = new Uint32Array(sequences.length + 1);
  sequences.forEach((s, i) => (offsets[i + 1] = offsets[i] + s.ids.length));
  const n = offsets[sequences.length];
  const ids = new Int32Array(n);
  const tokens = new Int32Array(n);
  const positions = new Int32Array(n);
  const end = new Uint32Array(n);
  const targets: BatchTarget[] = [];
  sequences.forEach((s, i) => {
    const o = offsets[i];
    ids.set(s.ids, o);
    tokens.set(s.tokens, o);
    positions.set(s.positions, o);
    for (let k = 0; k < s.end.length; k++) end[o + k] = s.end[k] + o;
    for (const t of s.targets) targets.push({ ...t, index: t.index + o, predictor: t.predictor + o, sequence: i });
  });
  return { ids, tokens, positions, end, targets, offsets };
}

/**
 * SDCC's student batch and its teachers as one grouped forward input: rows 0 .. S-1 are `student`
 * unchanged (packBatch of the final walks, one sequence per rollout) and each rollout's teacher-only
 * rows (the nodes of its union tree after its final walk) follow, rollout after rollout. Blocks of
 * different rollouts interleave, so visibility needs groups: row i sees key k iff k <= i < end[k] and
 * group[k] = group[i] (the rollout). Within a group that is the union tree's own end[].
 */
export interface SdccBatch {
  tokens: Int32Array;
  positions: Int32Array;
  end: Uint32Array;
  group: Uint32Array;
  /** The student's rows: 0 .. studentRows-1 (= student.tokens.length). */
  studentRows: number;
  /** Per teacher target (each union's `tree.targets`, rollout by rollout): its sequence and row. */
  teacherTargets: BatchTarget[];
}

export function packSdccBatch(student: PackedBatch, unions: readonly ({ tree: PlanSequence; studentLength: number } | null)[]): SdccBatch {
  const S = student.tokens.length;
  if (unions.length !== student.offsets.length - 1)
    throw new Error(`packSdccBatch: ${unions.length} unions for ${student.offsets.length - 1} student sequences`);
  let n = S;
  unions.forEach((u, s) => {
    const length = student.offsets[s + 1] - student.offsets[s];
    if (u && u.studentLength !== length) throw new Error(`packSdccBatch: sequence ${s} has ${length} student rows, its union ${u.studentLength}`);
    if (u) n += u.tree.ids.length - u.studentLength;
  });
  const tokens = new Int32Array(n);
  const positions = new Int32Array(n);
  const end = new Uint32Array(n);
  const group = new Uint32Array(n);
  tokens.set(student.tokens);
  positions.set(student.positions);
  end.set(student.end);
  const teacherTargets: SdccBatch['teacherTargets'] = [];
  let teacherAt = S;
  unions.forEach((u, s) => {
    const sOff = student.offsets[s];
    group.fill(s, sOff, student.offsets[s + 1]);
    if (!u) return;
    const L = u.studentLength;
    const tOff = teacherAt;
    const global = (local: number) => (local < L ? sOff + local : tOff + local - L);
    const globalEnd = (local: number) => (local <= L ? sOff + local : tOff + local - L);
    const t = u.tree;
    for (let r = 0; r < t.ids.length; r++) {
      const g = global(r);
      if (r < L && t.tokens[r] !== student.tokens[g]) throw new Error(`packSdccBatch: sequence ${s} row ${r} differs from the student's`);
      tokens[g] = t.tokens[r];
      positions[g] = t.positions[r];
      end[g] = globalEnd(t.end[r]);
      group[g] = s;
    }
    for (const target of t.targets) teacherTargets.push({ ...target, sequence: s, index: global(target.index), predictor: global(target.predictor) });
    teacherAt += t.ids.length - L;
  });
  return { tokens, positions, end, group, studentRows: S, teacherTargets };
}
