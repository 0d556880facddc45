// Float64 reference of rope.wgsl, and the inverse frequencies its rotation table is built from: RoPE in the
// `rotate_half` convention over the query and key heads of qkv (N, (NH + 2·NKV)·HS), optionally after a
// per-head RMSNorm (Qwen3's q_norm / k_norm), with Hugging Face's frequency scalings (none, linear, llama3).

import type { RopeScaling } from '../../../model/family/config';
import { rmsnormReference } from '../rmsnorm/rmsnorm.reference';

/**
 * invFreq[d] = θ^(−2d / HS) for d < HS/2, scaled as `rope_scaling` says: `linear` divides every
 * frequency by the factor; `llama3` divides the low frequencies (wavelength above
 * original_max_position_embeddings / low_freq_factor) by it, keeps the high ones (below … /
 * high_freq_factor) and interpolates smoothly between the two.
 */
export function ropeInverseFrequencies(HS: number, theta: number, scaling: RopeScaling = { type: 'none' }): Float64Array {
  const out = new Float64Array(HS / 2);
  for (let d = 0; d < HS / 2; d++) out[d] = 1 / theta ** ((2 * d) / HS);
  if (scaling.type === 'linear') return out.map((f) => f / scaling.factor);
  if (scaling.type === 'llama3') {
    const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: old } = scaling;
    const lowWavelength = old / lowFreqFactor;
    const highWavelength = old / highFreqFactor;
    return out.map((f) => {
      const wavelength = (2 * Math.PI) / f;
      if (wavelength < highWavelength) return f;
      if (wavelength > lowWavelength) return f / factor;
      const smooth = (old / wavelength - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      return (1 - smooth) * (f / factor) + smooth * f;
    });
  }
  return out;
}

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
      if (norm) head = rmsnormReference(head, j < NH ? norm.q : norm.k, 1, HS, norm.eps);
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
