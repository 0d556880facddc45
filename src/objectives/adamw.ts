// The optimizer's math, pure TypeScript: AdamW hyper-parameters, the warm-up + cosine learning-rate
// schedule, the weight-decay mask over the flat parameter layout, and a float64 reference of one
// step (global-norm clipping, non-finite guard, bias-corrected AdamW with decoupled weight decay).
// src/gpu/kernels/adamw/adamw.wgsl runs the same step in fp32 (src/gpu/kernels/adamw/adamw.ts); this is its oracle.

import type { LayoutEntry, ParameterLayout } from '../model/params';

export interface AdamwHyper {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number; // decoupled: p -= lr · weightDecay · p, on decaying tensors only
  clip: number; // largest global gradient norm; 0 turns clipping off
}

/** GPT-2 / nanoGPT practice: β2 0.95, weight decay 0.1, gradients clipped to norm 1. */
export const DEFAULT_ADAMW: AdamwHyper = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, clip: 1 };

export function validateHyper(h: AdamwHyper): AdamwHyper {
  const problems: string[] = [];
  if (!(h.beta1 >= 0 && h.beta1 < 1)) problems.push(`beta1 must be in [0, 1), got ${h.beta1}`);
  if (!(h.beta2 >= 0 && h.beta2 < 1)) problems.push(`beta2 must be in [0, 1), got ${h.beta2}`);
  if (!(h.eps > 0 && Number.isFinite(h.eps))) problems.push(`eps must be a finite number > 0, got ${h.eps}`);
  if (!(h.weightDecay >= 0 && Number.isFinite(h.weightDecay))) problems.push(`weightDecay must be a finite number ≥ 0, got ${h.weightDecay}`);
  if (!(h.clip >= 0 && Number.isFinite(h.clip))) problems.push(`clip must be a finite number ≥ 0 (0: off), got ${h.clip}`);
  if (problems.length) throw new Error(`invalid AdamW settings: ${problems.join('; ')}`);
  return h;
}

export interface LrSchedule {
  peak: number; // learning rate at the end of the warm-up
  warmup: number; // updates of linear warm-up
  total: number; // updates until the cosine reaches `min`
  min: number; // learning rate from update `total` on
}

/**
 * Learning rate of update `step` (0-based: the first update is step 0), llm.c's schedule: linear
 * warm-up peak·(step+1)/warmup for step < warmup, then a half cosine from peak down to min over
 * [warmup, total), then min.
 */
export function lrAt(step: number, { peak, warmup, total, min }: LrSchedule): number {
  if (!Number.isInteger(step) || step < 0) throw new Error(`lrAt: step must be a non-negative integer, got ${step}`);
  if (!(peak >= 0 && min >= 0 && min <= peak && Number.isFinite(peak))) throw new Error(`lrAt: needs 0 ≤ min ≤ peak, got min ${min}, peak ${peak}`);
  if (!Number.isInteger(warmup) || !Number.isInteger(total) || warmup < 0 || total < warmup) {
    throw new Error(`lrAt: needs integers 0 ≤ warmup ≤ total, got warmup ${warmup}, total ${total}`);
  }
  if (step < warmup) return (peak * (step + 1)) / warmup;
  if (step >= total) return min;
  const progress = (step - warmup) / (total - warmup); // in [0, 1)
  return min + 0.5 * (1 + Math.cos(Math.PI * progress)) * (peak - min);
}

/**
 * Weight decay applies to tensors of two or more dimensions, the matmul weights and the two
 * embeddings (wte doubles as the tied output head), as in nanoGPT and llm.c; biases and LayerNorm
 * gains and biases (1-D) are not decayed.
 */
export function decays(entry: Pick<LayoutEntry, 'shape'>): boolean {
  return entry.shape.length >= 2;
}

/** One bit per float of the flat layout, little-endian within each u32: bit i set iff float i decays. */
export function decayMask(layout: Pick<ParameterLayout, 'entries' | 'totalSize'>): Uint32Array {
  const mask = new Uint32Array(Math.ceil(layout.totalSize / 32));
  for (const e of layout.entries) {
    if (!decays(e)) continue;
    for (let i = e.offset; i < e.offset + e.size; i++) mask[i >>> 5] |= 1 << (i & 31);
  }
  return mask;
}

export function decayBit(mask: Uint32Array, i: number): number {
  return (mask[i >>> 5] >>> (i & 31)) & 1;
}

/** The float64 optimizer state a reference step updates in place. */
export interface AdamwReferenceState {
  params: Float64Array;
  m: Float64Array;
  v: Float64Array;
  step: number; // updates applied
}

export interface AdamwStepReport {
  normSq: number; // Σ g² over the finite gradient elements
  nonFinite: number; // gradient elements that are NaN or ±Inf
  scale: number; // min(1, clip / ‖g‖), the factor applied to g
  applied: boolean; // false when the gradient had a non-finite element or Σ g² overflowed float32
}

/** The largest finite float32: Σ g² is summed in fp32 on the GPU, so beyond this it overflows there. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/** Global-norm statistics of a gradient: what adamw.wgsl's reduction computes. */
export function gradientNorm(grads: ArrayLike<number>, clip: number): Omit<AdamwStepReport, 'applied'> {
  let normSq = 0;
  let nonFinite = 0;
  for (let i = 0; i < grads.length; i++) {
    if (Number.isFinite(grads[i])) normSq += grads[i] * grads[i];
    else nonFinite++;
  }
  const norm = Math.sqrt(normSq);
  return { normSq, nonFinite, scale: clip > 0 && norm > clip ? clip / norm : 1 };
}

/**
 * One AdamW update t = step + 1 at learning rate `lr`:
 *   g = grad · scale;  m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²
 *   p = p − lr · ( (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps) + weightDecay · decay(i) · p )
 * A gradient with a non-finite element, or whose Σ g² overflows float32, leaves params, m, v and
 * step untouched (`applied: false`).
 */
export function adamwReferenceStep(state: AdamwReferenceState, grads: ArrayLike<number>, mask: Uint32Array, hyper: AdamwHyper, lr: number): AdamwStepReport {
  const { beta1, beta2, eps, weightDecay, clip } = validateHyper(hyper);
  const n = state.params.length;
  if (grads.length !== n || state.m.length !== n || state.v.length !== n) {
    throw new Error(`adamwReferenceStep: params ${n}, grads ${grads.length}, m ${state.m.length}, v ${state.v.length} floats (must be equal)`);
  }
  const norm = gradientNorm(grads, clip);
  const applied = norm.nonFinite === 0 && norm.normSq <= FLOAT32_MAX;
  if (!applied) return { ...norm, applied };
  const t = state.step + 1;
  const bc1 = 1 - beta1 ** t;
  const bc2 = 1 - beta2 ** t;
  for (let i = 0; i < n; i++) {
    const g = grads[i] * norm.scale;
    state.m[i] = beta1 * state.m[i] + (1 - beta1) * g;
    state.v[i] = beta2 * state.v[i] + (1 - beta2) * g * g;
    const mHat = state.m[i] / bc1;
    const vHat = state.v[i] / bc2;
    const p = state.params[i];
    state.params[i] = p - lr * (mHat / (Math.sqrt(vHat) + eps) + weightDecay * decayBit(mask, i) * p);
  }
  state.step = t;
  return { ...norm, applied };
}
