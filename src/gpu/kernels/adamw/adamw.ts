// Binding of adamw.wgsl: the optimizer of the GPU engine. createAdamw owns m, v and the
// reduction scratch for the flat parameter and gradient buffers (parameterLayout); each step is
//   encodeAdamwStep(device, pass, adamw, lrAt(adamw.step, schedule))   // into the step's compute pass, after the backward
//   queue.submit(...)
//   await finishAdamwStep(device, adamw)   // reads the 16-byte status: step += 1, or throws NonFiniteGradientError
// Clipping reads ‖g‖ from a GPU buffer: no CPU round trip inside a step. Math: src/objectives/adamw.ts.
// Reference: adamwReferenceStep in adamw.reference.ts beside it, float64; the optimizer's hyperparameters and schedule are src/objectives/adamw.ts.

import code from './adamw.wgsl?raw';
import type { OptimizerState } from '../../../model/checkpoint';
import type { ParameterLayout } from '../../../model/params';
import { type AdamwHyper, DEFAULT_ADAMW, decayMask, validateHyper } from '../../../objectives/adamw';
import { createStorage, readBuffer, readFloat32, uploadStorage } from '../../runtime/buffers';
import { bindBuffers, checkLength, encodeLaunches, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

/** Invocations per workgroup of every entry point. */
export const ADAMW_WG = 256;
/** Floats summed by each invocation of normPartials: a partial covers ADAMW_WG · ADAMW_ITEMS floats. */
export const ADAMW_ITEMS = 16;

export const ADAMW_PARAMS_BYTES = 48;

/**
 * Mirror of `struct Params` in adamw.wgsl: n: u32 @ 0, partials: u32 @ 4, lr: f32 @ 8,
 * beta1: f32 @ 12, oneMinusBeta1: f32 @ 16, beta2: f32 @ 20, oneMinusBeta2: f32 @ 24,
 * biasCorrection1: f32 @ 28, biasCorrection2: f32 @ 32, eps: f32 @ 36, weightDecay: f32 @ 40,
 * clip: f32 @ 44. The bias corrections of update t are taken in float64 and rounded once.
 */
export function adamwParams(n: number, partials: number, hyper: AdamwHyper, lr: number, t: number): ArrayBuffer {
  const bytes = new ArrayBuffer(ADAMW_PARAMS_BYTES);
  const view = new DataView(bytes);
  view.setUint32(0, n, true);
  view.setUint32(4, partials, true);
  view.setFloat32(8, lr, true);
  view.setFloat32(12, hyper.beta1, true);
  view.setFloat32(16, 1 - hyper.beta1, true);
  view.setFloat32(20, hyper.beta2, true);
  view.setFloat32(24, 1 - hyper.beta2, true);
  view.setFloat32(28, 1 - hyper.beta1 ** t, true);
  view.setFloat32(32, 1 - hyper.beta2 ** t, true);
  view.setFloat32(36, hyper.eps, true);
  view.setFloat32(40, hyper.weightDecay, true);
  view.setFloat32(44, hyper.clip, true);
  return bytes;
}

/** `Status.skip` bits (SKIP_* in adamw.wgsl). */
export const SKIP_NON_FINITE = 1;
export const SKIP_OVERFLOW = 2;

export const ADAMW_STATUS_BYTES = 16;

export interface AdamwStatus {
  normSq: number; // Σ g² over the finite gradient elements, before clipping
  norm: number; // √normSq: the global gradient norm
  nonFinite: number; // gradient elements that were NaN or ±Inf
  scale: number; // min(1, clip / ‖g‖), applied to g
  skip: number; // SKIP_* bits; 0 when the update was applied
}

/** Mirror of `struct Status` in adamw.wgsl: normSq: f32 @ 0, nonFinite: u32 @ 4, scale: f32 @ 8, skip: u32 @ 12. */
export function adamwStatusFromBytes(bytes: ArrayBuffer): AdamwStatus {
  const view = new DataView(bytes);
  const normSq = view.getFloat32(0, true);
  return { normSq, norm: Math.sqrt(normSq), nonFinite: view.getUint32(4, true), scale: view.getFloat32(8, true), skip: view.getUint32(12, true) };
}

/** The update was not applied: params, m, v and the step count are as before it. */
export class NonFiniteGradientError extends Error {
  override readonly name = 'NonFiniteGradientError';
  constructor(
    readonly step: number,
    readonly status: AdamwStatus,
  ) {
    const reasons: string[] = [];
    if (status.skip & SKIP_NON_FINITE) reasons.push(`${status.nonFinite} gradient values are NaN or ±Inf`);
    if (status.skip & SKIP_OVERFLOW) reasons.push(`the squared gradient norm overflowed float32 (Σ g² = ${status.normSq})`);
    super(`AdamW update ${step + 1} was not applied: ${reasons.join('; ')}. Parameters, moments and the step count are unchanged.`);
  }
}

export interface Adamw {
  layout: ParameterLayout;
  n: number; // floats in every flat buffer: layout.totalSize
  hyper: AdamwHyper;
  weights: GPUBuffer; // (n) the caller's parameters, updated in place
  grads: GPUBuffer; // (n) the caller's gradients, read
  m: GPUBuffer; // (n) first moments
  v: GPUBuffer; // (n) second moments
  status: GPUBuffer; // struct Status, ADAMW_STATUS_BYTES
  params: GPUBuffer; // struct Params, rewritten by every encodeAdamwStep
  partials: number; // workgroups of normPartials
  /** Updates applied. A step is pending between encodeAdamwStep and finishAdamwStep / commitAdamwStep. */
  step: number;
  pending: boolean;
  /** normPartials, normFinalize, update: in this order, after the backward, in one pass. */
  launches: Launch[];
  destroy(): void;
}

export interface CreateAdamwOptions {
  layout: ParameterLayout;
  weights: GPUBuffer;
  grads: GPUBuffer;
  hyper?: AdamwHyper;
}

export function createAdamw(device: GPUDevice, { layout, weights, grads, hyper = DEFAULT_ADAMW }: CreateAdamwOptions): Adamw {
  validateHyper(hyper);
  const n = layout.totalSize;
  checkLength(weights, n, 'weights');
  checkLength(grads, n, 'grads');
  const partials = Math.ceil(n / (ADAMW_WG * ADAMW_ITEMS));
  const m = createStorage(device, 'Adamw.m', n * 4);
  const v = createStorage(device, 'Adamw.v', n * 4);
  const partialBuffer = createStorage(device, 'Adamw.partials', partials * 8);
  const status = createStorage(device, 'Adamw.status', ADAMW_STATUS_BYTES);
  const mask = uploadStorage(device, 'Adamw.decayMask', decayMask(layout));
  const params = device.createBuffer({ label: 'Adamw.params', size: ADAMW_PARAMS_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const constants = { WG: ADAMW_WG, ITEMS: ADAMW_ITEMS };
  const launch = (entry: 'normPartials' | 'normFinalize' | 'update', buffers: Record<number, GPUBuffer>, workgroups: [number, number, number]): Launch => {
    const pipeline = computePipeline(device, `adamw.${entry}`, code, constants, entry);
    return { label: `adamw.${entry}`, pipeline, group: bindBuffers(device, `Adamw.${entry}.bindGroup`, pipeline, buffers), workgroups, uniforms: [] };
  };
  const max = device.limits.maxComputeWorkgroupsPerDimension;
  const launches = [
    launch('normPartials', { 0: params, 1: grads, 2: partialBuffer }, [...groups1d(partials, 1, max), 1]),
    launch('normFinalize', { 0: params, 2: partialBuffer, 3: status }, [1, 1, 1]),
    launch('update', { 0: params, 1: grads, 3: status, 4: weights, 5: m, 6: v, 7: mask }, [...groups1d(n, ADAMW_WG, max), 1]),
  ];
  const owned = [m, v, partialBuffer, status, mask, params];
  return {
    layout,
    n,
    hyper,
    weights,
    grads,
    m,
    v,
    status,
    params,
    partials,
    step: 0,
    pending: false,
    launches,
    destroy: () => owned.forEach((b) => b.destroy()),
  };
}

/**
 * Encodes update t = adamw.step + 1 at learning rate `lr` (e.g. lrAt(adamw.step, schedule)) into
 * `pass`. Its settings go through queue.writeBuffer, so submit one optimizer step per submit and
 * finish it before encoding the next.
 */
export function encodeAdamwStep(device: GPUDevice, pass: GPUComputePassEncoder, adamw: Adamw, lr: number): void {
  if (adamw.pending) throw new Error(`AdamW: update ${adamw.step + 1} is still pending; finish it (finishAdamwStep) before encoding the next`);
  if (!(lr >= 0 && Number.isFinite(lr))) throw new Error(`AdamW: learning rate must be a finite number ≥ 0, got ${lr}`);
  device.queue.writeBuffer(adamw.params, 0, adamwParams(adamw.n, adamw.partials, adamw.hyper, lr, adamw.step + 1));
  encodeLaunches(pass, adamw.launches);
  adamw.pending = true;
}

/** Takes the status of the pending update (read by the caller, e.g. with its loss): step += 1, or throws. */
export function commitAdamwStep(adamw: Adamw, status: AdamwStatus): AdamwStatus {
  if (!adamw.pending) throw new Error('AdamW: no update is pending (encodeAdamwStep first)');
  adamw.pending = false;
  if (status.skip !== 0) throw new NonFiniteGradientError(adamw.step, status);
  adamw.step += 1;
  return status;
}

/** Reads the status after the submit that holds the pending update, then commitAdamwStep. */
export async function finishAdamwStep(device: GPUDevice, adamw: Adamw): Promise<AdamwStatus> {
  return commitAdamwStep(adamw, adamwStatusFromBytes(await readBuffer(device, adamw.status, ADAMW_STATUS_BYTES)));
}

/** m and v per canonical parameter name, and the step count: what saveOptimizerState writes. */
export async function readAdamwState(device: GPUDevice, adamw: Adamw): Promise<OptimizerState> {
  if (adamw.pending) throw new Error('AdamW: finish the pending update before reading the optimizer state');
  const [m, v] = [await readFloat32(device, adamw.m, adamw.n), await readFloat32(device, adamw.v, adamw.n)];
  const state: OptimizerState = { step: adamw.step, m: new Map(), v: new Map() };
  for (const e of adamw.layout.entries) {
    state.m.set(e.name, m.slice(e.offset, e.offset + e.size));
    state.v.set(e.name, v.slice(e.offset, e.offset + e.size));
  }
  return state;
}

/** Restores m, v and the step count (e.g. from loadOptimizerState), so a resumed run continues exactly. */
export function writeAdamwState(device: GPUDevice, adamw: Adamw, state: OptimizerState): void {
  if (adamw.pending) throw new Error('AdamW: finish the pending update before restoring the optimizer state');
  if (!Number.isSafeInteger(state.step) || state.step < 0) throw new Error(`AdamW: step must be a non-negative integer, got ${state.step}`);
  const flat = { m: new Float32Array(adamw.n), v: new Float32Array(adamw.n) };
  for (const moment of ['m', 'v'] as const) {
    for (const e of adamw.layout.entries) {
      const data = state[moment].get(e.name);
      if (!data) throw new Error(`AdamW: optimizer state has no ${moment} for ${e.name}`);
      if (data.length !== e.size) throw new Error(`AdamW: ${moment} of ${e.name} has ${data.length} values, expected ${e.size}`);
      flat[moment].set(data, e.offset);
    }
  }
  device.queue.writeBuffer(adamw.m, 0, flat.m);
  device.queue.writeBuffer(adamw.v, 0, flat.v);
  adamw.step = state.step;
}
