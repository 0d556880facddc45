// Binding of linear.wgsl: y (M, N) = x (M, K) · Wᵀ [+ bias] [+= y] with W (N, K) kept in the model
// folder's format (F32, F16, BF16) on the GPU, f32 accumulation.

import type { WeightDtype } from '../../../model/family/config';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, unusedBinding, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline } from '../../runtime/pipeline';
import { checkEven, dtypeBytes, WEIGHT_FORMAT, weightFormatWgsl, weightReads, type WeightReads } from '../weight-format/weight-format';
import kernel from './linear.wgsl?raw';

const code = (reads: WeightReads) => `${weightFormatWgsl(reads)}\n${kernel}`;

/** Invocations per workgroup (the WG_X, WG_Y overrides). */
export const LINEAR_WORKGROUP = { x: 8, y: 8 } as const;
/** Rows (m) and columns (n) of y one invocation owns: the unrolled accumulators of linear.wgsl. */
export const LINEAR_BLOCK = { m: 8, n: 8 } as const;

export interface LinearShape {
  M: number; // rows of x and y
  K: number; // in features (even)
  N: number; // out features
  /** Row stride of y, default N: y is then a column block of a wider (M, ldY) matrix. */
  ldY?: number;
  /** Index in y of element (0, 0), default 0: the first column of the block. */
  offsetY?: number;
}

export interface LinearBuffers {
  x: BufferRef; // (M, K) f32
  w: BufferRef; // (N, K) in `dtype`
  bias?: BufferRef; // (N) in `dtype`
  y: BufferRef; // (M, ldY) f32
}

/** Bytes a binding of `count` weights in `dtype` covers, counted in 4-byte words for checkLength. */
const words = (dtype: WeightDtype, count: number) => Math.ceil((count * dtypeBytes(dtype)) / 4);

/** Mirror of `struct Params` in linear.wgsl: M: u32 @ 0, K: u32 @ 4, N: u32 @ 8, ldY: u32 @ 12, offsetY: u32 @ 16. */
export function linearParams({ M, K, N, ldY = N, offsetY = 0 }: LinearShape): ArrayBuffer {
  const bytes = new ArrayBuffer(32);
  const view = new DataView(bytes);
  view.setUint32(0, M, true);
  view.setUint32(4, K, true);
  view.setUint32(8, N, true);
  view.setUint32(12, ldY, true);
  view.setUint32(16, offsetY, true);
  return bytes;
}

export function createLinear(
  device: GPUDevice,
  shape: LinearShape,
  dtype: WeightDtype,
  b: LinearBuffers,
  options: { accumulate?: boolean; reads?: WeightReads } = {},
): Launch {
  const { M, K, N, ldY = N, offsetY = 0 } = shape;
  checkEven(K, 'linear: K');
  if (ldY < N) throw new Error(`linear: row stride ldY ${ldY} is less than the ${N} columns of y`);
  checkLength(b.x, M * K, 'x');
  checkLength(b.w, words(dtype, N * K), 'w');
  if (b.bias) checkLength(b.bias, words(dtype, N), 'bias');
  checkLength(b.y, M * N === 0 ? 0 : offsetY + (M - 1) * ldY + N, 'y');
  const constants = {
    WFMT: WEIGHT_FORMAT[dtype],
    WG_X: LINEAR_WORKGROUP.x,
    WG_Y: LINEAR_WORKGROUP.y,
    HAS_BIAS: Number(!!b.bias),
    ACCUMULATE: Number(!!options.accumulate),
  };
  const reads = weightReads(device, dtype, options.reads);
  const label = `linear.${dtype}${reads === 'f16' ? '.f16' : ''}`;
  const pipeline = computePipeline(device, label, code(reads), constants);
  const params = uploadUniform(device, `${label}.params`, linearParams(shape));
  const group = bindBuffers(device, `${label}.bindGroup`, pipeline, {
    0: b.x,
    1: b.w,
    2: b.bias ?? unusedBinding(device, 'read'),
    3: b.y,
    4: params,
  });
  const workgroups: [number, number, number] =
    M * N === 0 ? [0, 0, 0] : [Math.ceil(N / (LINEAR_BLOCK.n * LINEAR_WORKGROUP.x)), Math.ceil(M / (LINEAR_BLOCK.m * LINEAR_WORKGROUP.y)), 1];
  return { label, pipeline, group, workgroups, uniforms: [params] };
}
