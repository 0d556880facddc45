// The optimizer's math, pure TypeScript: AdamW hyper-parameters, the warm-up + cosine learning-rate
// schedule and the weight-decay mask over the flat parameter layout. One step (global-norm clipping,
// non-finite guard, bias-corrected AdamW with decoupled weight decay) runs in adamw.wgsl, in fp32;
// its float64 reference is beside it, src/gpu/kernels/adamw/adamw.reference.ts.

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

export interface AdamwStepReport {
  normSq: number; // Σ g² over the finite gradient elements
  nonFinite: number; // gradient elements that are NaN or ±Inf
  scale: number; // min(1, clip / ‖g‖), the factor applied to g
  applied: boolean; // false when the gradient had a non-finite element or Σ g² overflowed float32
}

/** The largest finite float32: Σ g² is summed in fp32 on the GPU, so beyond this it overflows there. */
export const FLOAT32_MAX = 3.4028234663852886e38;
