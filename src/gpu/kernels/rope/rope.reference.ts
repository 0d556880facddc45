// Float64 reference of rope.wgsl: RoPE in the `rotate_half` convention over the query and key heads of
// qkv (N, (NH + 2·NKV)·HS), optionally after a per-head RMSNorm (Qwen3's q_norm / k_norm). The inverse
// frequencies (Hugging Face's none, linear and llama3 scalings) are the model's: ropeInverseFrequencies
// in model/family/config.

import { rmsnormRef } from '../rmsnorm/rmsnorm.reference';

export interface RopeReferenceShape {
  N: number;
  NH: number;
  NKV: number;
  HS: number;
}

/** qkv after the kernel: a copy with each query and key head normalised (when `norm`) and rotated. */
export function ropeReference(
  qkv: ArrayLike<number>,
  positions: ArrayLike<number>,
  invFreq: ArrayLike<number>,
  shape: RopeReferenceShape,
  norm?: { q: ArrayLike<number>; k: ArrayLike<number>; eps: number },
): Float64Array {
  const { N, NH, NKV, HS } = shape;
  const W = (NH + 2 * NKV) * HS;
  const out = Float64Array.from(qkv);
  const half = HS / 2;
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < NH + NKV; j++) {
      const at = i * W + j * HS;
      let head: Float64Array = out.slice(at, at + HS);
      if (norm) head = rmsnormRef(head, j < NH ? norm.q : norm.k, 1, HS, norm.eps);
      for (let d = 0; d < half; d++) {
        const a = positions[i] * invFreq[d];
        const c = Math.cos(a);
        const s = Math.sin(a);
        const x1 = head[d];
        const x2 = head[d + half];
        out[at + d] = x1 * c - x2 * s;
        out[at + d + half] = x2 * c + x1 * s;
      }
    }
  }
  return out;
}
