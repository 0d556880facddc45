// Float64 reference of adamw.wgsl: one AdamW update with global-norm clipping, the optimizer of
// src/objectives/adamw.ts (hyperparameters, schedule, which parameters decay).

import { type AdamwHyper, type AdamwStepReport, FLOAT32_MAX, decayBit, validateHyper } from '../../../objectives/adamw';

/** The float64 optimizer state a reference step updates in place. */
export interface AdamwReferenceState {
  params: Float64Array;
  m: Float64Array;
  v: Float64Array;
  step: number; // updates applied
}

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
