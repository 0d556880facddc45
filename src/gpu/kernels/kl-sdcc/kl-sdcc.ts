// Binding of kl-sdcc.wgsl: SDCC's forward KL at diverging leaves (src/objectives/sdcc.ts)
// between student logits (Ns, V) and teacher logits (Nt, V), adding λ/|D| · (p_student − p_teacher)
// into the student's dLogits. Encode it after the task objective (loss_grad) that wrote dLogits.
// Without pairs nothing is dispatched and the mean KL is exactly 0.
// Reference: sdccKl in kl-sdcc.reference.ts beside it, float64; the objective's pairs and gating are src/objectives/sdcc.ts.

import code from './kl-sdcc.wgsl?raw';
import reduce from '../common/reduce.wgsl?raw';
import { type SdccPair, checkPairs } from '../../../objectives/sdcc';
import { readFloat32, uploadStorage, uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, inverseIndex, unusedBinding, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

/** Invocations per workgroup (one workgroup per student row with pairs). */
export const KL_SDCC_WG = 64;

export interface KlSdccShape {
  Ns: number; // student rows
  Nt: number; // teacher rows
  V: number;
}

/** The gradient scale of λ · mean KL: λ / |D|, and 0 without pairs. */
export function klSdccCoefficient(lambda: number, P: number): number {
  if (!(lambda >= 0 && Number.isFinite(lambda))) throw new Error(`sdcc: λ must be a finite number ≥ 0, got ${lambda}`);
  return P === 0 ? 0 : lambda / P;
}

/**
 * Mirror of `struct Params` in kl-sdcc.wgsl: Ns: u32 @ 0, Nt: u32 @ 4, V: u32 @ 8, R: u32 @ 12,
 * P: u32 @ 16, coef: f32 @ 20.
 */
export function klSdccParams({ Ns, Nt, V }: KlSdccShape, R: number, P: number, coef: number): ArrayBuffer {
  const bytes = new ArrayBuffer(32);
  const view = new DataView(bytes);
  view.setUint32(0, Ns, true);
  view.setUint32(4, Nt, true);
  view.setUint32(8, V, true);
  view.setUint32(12, R, true);
  view.setUint32(16, P, true);
  view.setFloat32(20, coef, true);
  return bytes;
}

/** Binding 3: rows (R) | start (R + 1) | teacherRow (P) | pair (P), pairs grouped by student row in pair order. */
export function pairIndexWords(pairs: readonly SdccPair[], Ns: number): { words: Uint32Array; R: number } {
  const P = pairs.length;
  const { order, start } = inverseIndex(
    pairs.map((p) => p.studentRow),
    Ns,
  );
  const rows: number[] = [];
  const rowStart: number[] = [];
  for (let s = 0; s < Ns; s++) {
    if (start[s] === start[s + 1]) continue;
    rows.push(s);
    rowStart.push(start[s]);
  }
  const R = rows.length;
  rowStart.push(P);
  const words = new Uint32Array(2 * R + 1 + 2 * P);
  words.set(rows, 0);
  words.set(rowStart, R);
  order.forEach((pair, k) => {
    words[2 * R + 1 + k] = pairs[pair].teacherRow;
    words[2 * R + 1 + P + k] = pair;
  });
  return { words, R };
}

export interface KlSdccBuffers {
  student: GPUBuffer; // (Ns, V) student logits
  /** (Nt, V) teacher logits; not needed without pairs (a batch with no diverging leaf runs no teacher). */
  teacher?: GPUBuffer;
  kl: GPUBuffer; // (P) KL per pair, written
  /** (Ns, V) the student's dLogits, accumulated into; omit to compute the KL only (then λ must be 0). */
  dStudent?: GPUBuffer;
}

export interface KlSdcc {
  /** null when there are no pairs: nothing to dispatch, the KL term is exactly 0. */
  launch: Launch | null;
  P: number;
  destroy(): void;
}

export function createKlSdcc(device: GPUDevice, shape: KlSdccShape, pairs: readonly SdccPair[], lambda: number, buffers: KlSdccBuffers): KlSdcc {
  const { Ns, Nt, V } = shape;
  const P = pairs.length;
  const coef = klSdccCoefficient(lambda, P);
  if (P === 0) return { launch: null, P, destroy() {} };
  if (!buffers.teacher) throw new Error(`sdcc: ${P} pairs need the teacher logits`);
  if (coef !== 0 && !buffers.dStudent) throw new Error('sdcc: λ > 0 needs dStudent (the student dLogits the KL gradient is added to)');
  checkPairs(pairs, Ns, Nt);
  checkLength(buffers.student, Ns * V, 'student');
  checkLength(buffers.teacher, Nt * V, 'teacher');
  checkLength(buffers.kl, P, 'kl');
  if (buffers.dStudent) checkLength(buffers.dStudent, Ns * V, 'dStudent');
  const { words, R } = pairIndexWords(pairs, Ns);
  const pipeline = computePipeline(device, 'klSdcc', reduce + code, { WG: KL_SDCC_WG });
  const params = uploadUniform(device, 'KlSdcc.params', klSdccParams(shape, R, P, coef));
  const pairIndex = uploadStorage(device, 'KlSdcc.pairIndex', words);
  // Bindings 0 .. 5 in order.
  const dStudent = buffers.dStudent ?? unusedBinding(device, 'write');
  const group = bindBuffers(device, 'KlSdcc.bindGroup', pipeline, [params, buffers.student, buffers.teacher, pairIndex, dStudent, buffers.kl]);
  const [x, y] = groups1d(R, 1, device.limits.maxComputeWorkgroupsPerDimension);
  return {
    launch: { label: 'klSdcc', pipeline, group, workgroups: [x, y, 1], uniforms: [params] },
    P,
    destroy: () => [params, pairIndex].forEach((b) => b.destroy()),
  };
}

/** The KL of each pair (P) and their float64 mean, exactly 0 without pairs. */
export function klSdccOutputs(kl: Float32Array) {
  return { kl, meanKl: kl.length === 0 ? 0 : kl.reduce((a, b) => a + b, 0) / kl.length };
}

export async function readKlSdcc(device: GPUDevice, kl: GPUBuffer, P: number) {
  return klSdccOutputs(P === 0 ? new Float32Array(0) : await readFloat32(device, kl, P));
}
