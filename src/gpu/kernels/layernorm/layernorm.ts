// Binding of layernorm.wgsl: LayerNorm over the last axis of x (N, C), forward (saving mean
// and rstd for the backward) and backward (dx per row; dweight, dbias per channel, no atomics).
// Reference: layernormRef, layernormBackwardRef in layernorm.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './layernorm.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type Launch, type BufferRef } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 64;
export const LAYERNORM_EPS = 1e-5;

export interface LayernormShape {
  N: number; // rows
  C: number; // channels
}

/** Mirror of `struct Params` in layernorm.wgsl: N: u32 @ 0, C: u32 @ 4, eps: f32 @ 8. */
export function layernormParams({ N, C }: LayernormShape, eps = LAYERNORM_EPS): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setUint32(4, C, true);
  view.setFloat32(8, eps, true);
  return bytes;
}

type Entry = 'forward' | 'backwardRows' | 'backwardChannels';

function launch(
  device: GPUDevice,
  entry: Entry,
  shape: LayernormShape,
  items: number,
  accumulate: boolean,
  buffers: Record<number, BufferRef>,
  eps?: number,
): Launch {
  const pipeline = computePipeline(device, `layernorm.${entry}`, code, { WG, ACCUMULATE: Number(accumulate) }, entry);
  const params = uploadUniform(device, `layernorm.${entry}.params`, layernormParams(shape, eps));
  const group = bindBuffers(device, `layernorm.${entry}.bindGroup`, pipeline, { 0: params, ...buffers });
  const [x, y] = groups1d(items, WG);
  return { label: `layernorm.${entry}`, pipeline, group, workgroups: items === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}

export interface LayernormBuffers {
  x: BufferRef; // (N, C)
  weight: BufferRef; // (C)
  bias: BufferRef; // (C)
  out: BufferRef; // (N, C)
  mean: BufferRef; // (N)
  rstd: BufferRef; // (N)
}

export function createLayernorm(device: GPUDevice, shape: LayernormShape, b: LayernormBuffers, eps = LAYERNORM_EPS): Launch {
  const { N, C } = shape;
  checkLength(b.x, N * C, 'x');
  checkLength(b.weight, C, 'weight');
  checkLength(b.bias, C, 'bias');
  checkLength(b.out, N * C, 'out');
  checkLength(b.mean, N, 'mean');
  checkLength(b.rstd, N, 'rstd');
  return launch(device, 'forward', shape, N, false, { 1: b.x, 2: b.weight, 3: b.bias, 4: b.out, 5: b.mean, 6: b.rstd }, eps);
}

export interface LayernormBackwardBuffers {
  dOut: BufferRef; // (N, C)
  x: BufferRef; // (N, C): the forward's input
  weight: BufferRef; // (C)
  mean: BufferRef; // (N): from the forward
  rstd: BufferRef; // (N): from the forward
  dx: BufferRef; // (N, C)
  dweight: BufferRef; // (C)
  dbias: BufferRef; // (C)
}

export interface LayernormBackwardOptions {
  /** dx += (the residual stream's gradient arrives from two paths). */
  accumulateDx?: boolean;
  /** dweight += and dbias += (gradients summed over micro-batches). */
  accumulateParams?: boolean;
}

/** Two launches, in any order (neither reads the other's output): dx per row, then dweight and dbias per channel. */
export function createLayernormBackward(
  device: GPUDevice,
  shape: LayernormShape,
  b: LayernormBackwardBuffers,
  options: LayernormBackwardOptions = {},
): Launch[] {
  const { N, C } = shape;
  checkLength(b.dOut, N * C, 'dOut');
  checkLength(b.x, N * C, 'x');
  checkLength(b.weight, C, 'weight');
  checkLength(b.mean, N, 'mean');
  checkLength(b.rstd, N, 'rstd');
  checkLength(b.dx, N * C, 'dx');
  checkLength(b.dweight, C, 'dweight');
  checkLength(b.dbias, C, 'dbias');
  return [
    launch(device, 'backwardRows', shape, N, !!options.accumulateDx, { 1: b.x, 2: b.weight, 5: b.mean, 6: b.rstd, 7: b.dOut, 8: b.dx }),
    launch(device, 'backwardChannels', shape, C, !!options.accumulateParams, { 1: b.x, 5: b.mean, 6: b.rstd, 7: b.dOut, 9: b.dweight, 10: b.dbias }),
  ];
}
