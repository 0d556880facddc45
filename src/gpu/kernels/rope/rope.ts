// Binding of rope.wgsl: RoPE (rotate_half) in place on the query and key heads of qkv at each row's
// logical position, after Qwen3's per-head q/k RMSNorm when the model has it.

import reduce from '../common/reduce.wgsl?raw';
import type { WeightDtype } from '../../../model/family/config';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, unusedBinding, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';
import { dtypeBytes, WEIGHT_FORMAT, weightFormatWgsl, weightReads, type WeightReads } from '../weight-format/weight-format';
import kernel from './rope.wgsl?raw';

const code = (reads: WeightReads) => `${weightFormatWgsl(reads)}\n${reduce}\n${kernel}`;
/** Invocations per (row, head): the WG override, a power of two. */
export const ROPE_WG = 64;

export interface RopeShape {
  N: number; // rows
  NH: number; // query heads
  NKV: number; // key/value heads
  HS: number; // head size (even)
  /** qkv row of row 0, default 0 (a decoder rotates its new rows in place in its cache). */
  first?: number;
}

export interface RopeBuffers {
  qkv: BufferRef; // (N, (NH + 2·NKV)·HS), rotated in place
  positions: BufferRef; // (N) u32
  /** (P, HS / 2) pairs (cos, sin) for positions 0 .. P − 1 (ropeRotation), P above every position of the batch. */
  rotation: BufferRef;
  /** Qwen3: q_norm and k_norm (HS each, in `dtype`), applied before the rotation. */
  norm?: { q: BufferRef; k: BufferRef; dtype: WeightDtype; eps: number };
}

/** The table rope.wgsl reads: (P, HS / 2) pairs (cos a, sin a), a = p · invFreq[d], in float64 then rounded to f32. */
export function ropeRotation(invFreq: ArrayLike<number>, P: number): Float32Array {
  const half = invFreq.length;
  const out = new Float32Array(P * half * 2);
  for (let p = 0; p < P; p++) {
    for (let d = 0; d < half; d++) {
      const a = p * invFreq[d];
      out[2 * (p * half + d)] = Math.cos(a);
      out[2 * (p * half + d) + 1] = Math.sin(a);
    }
  }
  return out;
}

/** Mirror of `struct Params` in rope.wgsl: N: u32 @ 0, eps: f32 @ 4, first: u32 @ 8. */
export function ropeParams(N: number, eps: number, first = 0): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setFloat32(4, eps, true);
  view.setUint32(8, first, true);
  return bytes;
}

export function createRope(device: GPUDevice, shape: RopeShape, b: RopeBuffers, options: { reads?: WeightReads } = {}): Launch {
  const { N, NH, NKV, HS, first = 0 } = shape;
  if (HS % 2 !== 0) throw new Error(`rope: head size ${HS} is odd`);
  if (NH % NKV !== 0) throw new Error(`rope: ${NH} query heads are not a multiple of ${NKV} key/value heads`);
  checkLength(b.qkv, (first + N) * (NH + 2 * NKV) * HS, 'qkv');
  checkLength(b.positions, N, 'positions');
  checkLength(b.rotation, HS, 'rotation');
  const dtype = b.norm?.dtype ?? 'F32';
  if (b.norm) {
    checkLength(b.norm.q, Math.ceil((HS * dtypeBytes(dtype)) / 4), 'qNorm');
    checkLength(b.norm.k, Math.ceil((HS * dtypeBytes(dtype)) / 4), 'kNorm');
  }
  const constants = { NH, NKV, HS, WG: ROPE_WG, QK_NORM: Number(!!b.norm), WFMT: WEIGHT_FORMAT[dtype] };
  const reads = weightReads(device, dtype, options.reads);
  const label = b.norm ? `rope.qkNorm.${dtype}${reads === 'f16' ? '.f16' : ''}` : 'rope';
  const pipeline = computePipeline(device, label, code(reads), constants);
  const params = uploadUniform(device, `${label}.params`, ropeParams(N, b.norm?.eps ?? 0, first));
  const group = bindBuffers(device, `${label}.bindGroup`, pipeline, {
    0: b.qkv,
    1: b.positions,
    2: b.rotation,
    3: b.norm?.q ?? unusedBinding(device, 'read'),
    4: b.norm?.k ?? unusedBinding(device, 'read'),
    5: params,
  });
  const [y, z] = groups1d(N, 1, device.limits.maxComputeWorkgroupsPerDimension);
  return { label, pipeline, group, workgroups: N === 0 ? [0, 0, 0] : [NH + NKV, y, z], uniforms: [params] };
}
