// Binding of loss-grad.wgsl: a token objective (SFT or PPO-clipped RL, src/objectives/tokens.ts)
// at scored targets over logits (N, V): per-target outputs and the whole dLogits (N, V) the model
// backward starts from. Built once per batch (the targets change); encode its launch into the step's pass.
// Reference: tokenObjective in loss-grad.reference.ts beside it, float64; the objectives' per-target terms are src/objectives/tokens.ts.

import code from './loss-grad.wgsl?raw';
import reduce from '../common/reduce.wgsl?raw';
import { type ObjectiveTarget, type TokenObjective, DEFAULT_PPO_EPSILON, validateTargets } from '../../../objectives/tokens';
import { readBuffer, uploadStorage, uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, inverseIndex, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

/** Invocations per workgroup (one workgroup per logits row). */
export const LOSS_GRAD_WG = 64;

export interface LossGradShape {
  N: number; // logits rows
  V: number; // vocabulary
}

/** Mirror of `struct Params` in loss-grad.wgsl: N: u32 @ 0, V: u32 @ 4, T: u32 @ 8, epsilon: f32 @ 12, klCoef: f32 @ 16. */
export function lossGradParams({ N, V }: LossGradShape, T: number, objective: TokenObjective): ArrayBuffer {
  const bytes = new ArrayBuffer(32);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setUint32(4, V, true);
  view.setUint32(8, T, true);
  view.setFloat32(12, objective.kind === 'ppo' ? (objective.epsilon ?? DEFAULT_PPO_EPSILON) : 0, true);
  view.setFloat32(16, objective.kind === 'ppo' ? (objective.klCoef ?? 0) : 0, true);
  return bytes;
}

/** Bytes of one `struct Target` (array stride in storage). */
export const TARGET_BYTES = 24;

/**
 * Mirror of `struct Target` in loss-grad.wgsl, one per target: row: u32 @ 0, token: u32 @ 4,
 * weight: f32 @ 8, rolloutLogprob: f32 @ 12, advantage: f32 @ 16, refLogprob: f32 @ 20.
 * Fields the objective does not read are 0.
 */
export function packTargets(targets: readonly ObjectiveTarget[]): ArrayBuffer {
  const bytes = new ArrayBuffer(Math.max(1, targets.length) * TARGET_BYTES);
  const view = new DataView(bytes);
  targets.forEach((t, j) => {
    const o = j * TARGET_BYTES;
    view.setUint32(o, t.row, true);
    view.setUint32(o + 4, t.token, true);
    view.setFloat32(o + 8, t.weight, true);
    view.setFloat32(o + 12, t.rolloutLogprob ?? 0, true);
    view.setFloat32(o + 16, t.advantage ?? 0, true);
    view.setFloat32(o + 20, t.refLogprob ?? 0, true);
  });
  return bytes;
}

/** The CSR index of the targets by row (binding 3): start (N + 1) | order (T). */
export function targetRowIndex(targets: readonly ObjectiveTarget[], N: number): Uint32Array {
  const { order, start } = inverseIndex(
    targets.map((t) => t.row),
    N,
  );
  const words = new Uint32Array(N + 1 + targets.length);
  words.set(start, 0);
  words.set(order, N + 1);
  return words;
}

/** Bytes of one `struct TargetOut`: logprob: f32 @ 0, loss: f32 @ 4, dLogprob: f32 @ 8, ratio: f32 @ 12. */
export const TARGET_OUT_BYTES = 16;

export interface LossGradBuffers {
  logits: GPUBuffer; // (N, V)
  dLogits: GPUBuffer; // (N, V), every element written
  outputs: GPUBuffer; // (T) struct TargetOut, TARGET_OUT_BYTES each, written
}

/**
 * A built objective for one batch: its launch, and a destroy() of the target buffers it owns and of
 * the launch's uniform (after the last submit that uses them).
 */
export function createLossGrad(
  device: GPUDevice,
  shape: LossGradShape,
  objective: TokenObjective,
  targets: readonly ObjectiveTarget[],
  buffers: LossGradBuffers,
): { launch: Launch; destroy(): void } {
  const { N, V } = shape;
  validateTargets(targets, N, V, objective);
  const T = targets.length;
  checkLength(buffers.logits, N * V, 'logits');
  checkLength(buffers.dLogits, N * V, 'dLogits');
  checkLength(buffers.outputs, (T * TARGET_OUT_BYTES) / 4, 'outputs');
  const pipeline = computePipeline(device, 'lossGrad', reduce + code, { WG: LOSS_GRAD_WG, OBJECTIVE: objective.kind === 'sft' ? 0 : 1 });
  const params = uploadUniform(device, 'LossGrad.params', lossGradParams(shape, T, objective));
  const targetBuffer = uploadStorage(device, 'LossGrad.targets', new Uint32Array(packTargets(targets))); // (T) struct Target
  const rowIndex = uploadStorage(device, 'LossGrad.rowIndex', targetRowIndex(targets, N)); // start (N + 1) | order (T)
  const group = bindBuffers(device, 'LossGrad.bindGroup', pipeline, [
    params,
    buffers.logits,
    targetBuffer,
    rowIndex,
    buffers.dLogits,
    buffers.outputs, // bindings 0 .. 5
  ]);
  const [x, y] = groups1d(N, 1, device.limits.maxComputeWorkgroupsPerDimension);
  return {
    launch: { label: 'lossGrad', pipeline, group, workgroups: N === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] },
    destroy: () => [params, targetBuffer, rowIndex].forEach((b) => b.destroy()),
  };
}

/** An outputs buffer's bytes (T struct TargetOut) as per-field arrays (T); loss = Σ_j loss_j in float64, in target order. */
export function lossGradOutputsFromBytes(bytes: ArrayBuffer, T: number) {
  const all = new Float32Array(bytes, 0, T * 4);
  const field = (f: number) => Float32Array.from({ length: T }, (_, j) => all[j * 4 + f]);
  const losses = field(1);
  return { loss: losses.reduce((a, b) => a + b, 0), logprobs: field(0), losses, dLogprobs: field(2), ratios: field(3) };
}

export type LossGradOutputs = ReturnType<typeof lossGradOutputsFromBytes>;

export async function readLossGradOutputs(device: GPUDevice, outputs: GPUBuffer, T: number): Promise<LossGradOutputs> {
  if (T === 0) return lossGradOutputsFromBytes(new ArrayBuffer(0), 0);
  return lossGradOutputsFromBytes(await readBuffer(device, outputs, T * TARGET_OUT_BYTES), T);
}
