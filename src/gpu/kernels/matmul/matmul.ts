// Binding of matmul.wgsl: y (M, N) = op(x) · op(W) [+ bias] [-> GELU] [+= y], fp32, where
// op transposes an operand stored the other way round (transA: x is (K, M); transB: W is (N, K)).
// Two variants, `blocked` (no workgroup memory) and `tiled` (workgroup memory); pickMatmulVariant in
// matmul-autotune.ts measures which one an adapter prefers.
// Reference: matmulRef in matmul.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './matmul.wgsl?raw';
import geluMath from '../common/gelu-math.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, unusedBinding, type Launch, type BufferRef } from '../../runtime/kernel';
import { computePipeline } from '../../runtime/pipeline';

/** Rows and columns of y owned by one invocation, by variant: the unrolled accumulators of matmul.wgsl. */
export const MATMUL_BLOCK = { blocked: 8, tiled: 4 } as const;

export type MatmulVariant = { kind: 'blocked'; wgX: number; wgY: number } | { kind: 'tiled'; wgX: number; wgY: number; tileK: number };

/** The variant used when none was picked for a device: the SwiftShader winner. */
export const DEFAULT_MATMUL_VARIANT: MatmulVariant = { kind: 'blocked', wgX: 8, wgY: 8 };

export interface MatmulShape {
  M: number; // rows of y
  K: number; // the contracted dimension
  N: number; // columns of y
  /** Row stride of y (and pre), default N: y is then a column block of a wider (M, ldY) matrix. */
  ldY?: number;
}

export interface MatmulBuffers {
  x: BufferRef; // (M, K), or (K, M) with transA
  w: BufferRef; // (K, N), or (N, K) with transB
  bias?: BufferRef; // (N)
  y: BufferRef; // (M, N)
  /** (M, N): receives x·W + bias before the GELU (the input the GELU's backward needs). */
  pre?: BufferRef;
}

export interface MatmulOptions {
  transA?: boolean;
  transB?: boolean;
  gelu?: boolean;
  /** y += x·W (+ bias): gradients summed over several products. Not with gelu. */
  accumulate?: boolean;
  /** Defaults to the variant picked for the device (pickMatmulVariant), else DEFAULT_MATMUL_VARIANT. */
  variant?: MatmulVariant;
}

const picked = new WeakMap<GPUDevice, MatmulVariant>();

/** Makes `variant` the default of every matmul created on `device` (pickMatmulVariant calls this). */
export function setMatmulVariant(device: GPUDevice, variant: MatmulVariant): void {
  picked.set(device, variant);
}

export function matmulVariantOf(device: GPUDevice): MatmulVariant {
  return picked.get(device) ?? DEFAULT_MATMUL_VARIANT;
}

export function describeMatmulVariant(v: MatmulVariant): string {
  return v.kind === 'blocked' ? `blocked ${v.wgX}x${v.wgY}` : `tiled ${v.wgX}x${v.wgY} k${v.tileK}`;
}

/** The product's options as bits of `Params.flags`: mirror of the flag constants in matmul.wgsl. */
const MATMUL_FLAGS = { transA: 1, transB: 2, bias: 4, gelu: 8, pre: 16, accumulate: 32 } as const;

/**
 * Mirror of `struct Params` in matmul.wgsl: M: u32 @ 0, K: u32 @ 4, N: u32 @ 8, ldY: u32 @ 12,
 * flags: u32 @ 16 (MATMUL_FLAGS; 0: a plain x · W).
 */
export function matmulParams({ M, K, N, ldY = N }: MatmulShape, flags = 0): ArrayBuffer {
  const bytes = new ArrayBuffer(20);
  const view = new DataView(bytes);
  view.setUint32(0, M, true);
  view.setUint32(4, K, true);
  view.setUint32(8, N, true);
  view.setUint32(12, ldY, true);
  view.setUint32(16, flags, true);
  return bytes;
}

/** Workgroup counts of either variant for an (M, N) output. */
export function matmulWorkgroups({ M, N }: MatmulShape, variant: MatmulVariant): [number, number, number] {
  const block = MATMUL_BLOCK[variant.kind];
  return [Math.ceil(N / (block * variant.wgX)), Math.ceil(M / (block * variant.wgY)), 1];
}

/** One pipeline per variant: the product's options are uniforms (Params.flags), not overrides. */
function matmulPipeline(device: GPUDevice, variant: MatmulVariant): GPUComputePipeline {
  const constants: Record<string, number> = { WG_X: variant.wgX, WG_Y: variant.wgY };
  if (variant.kind === 'tiled') constants.TILE_K = variant.tileK;
  return computePipeline(device, `matmul.${variant.kind}`, geluMath + code, constants, variant.kind);
}

function matmulFlags(options: MatmulOptions, buffers: MatmulBuffers): number {
  const on = { transA: options.transA, transB: options.transB, bias: !!buffers.bias, gelu: options.gelu, pre: !!buffers.pre, accumulate: options.accumulate };
  return Object.entries(MATMUL_FLAGS).reduce((flags, [name, bit]) => (on[name as keyof typeof on] ? flags | bit : flags), 0);
}

/** Builds the launch (pipeline, uniforms, bind group); record it into a pass with encodeLaunches. */
export function createMatmul(device: GPUDevice, shape: MatmulShape, buffers: MatmulBuffers, options: MatmulOptions = {}): Launch {
  const { M, K, N, ldY = N } = shape;
  if (ldY < N) throw new Error(`matmul: row stride ldY ${ldY} is less than the ${N} columns of y`);
  if (options.gelu && options.accumulate) throw new Error('matmul: accumulate applies to linear outputs, not with gelu');
  if (buffers.pre && !options.gelu) throw new Error('matmul: `pre` is the input of the GELU, pass it with gelu');
  checkLength(buffers.x, M * K, 'x');
  checkLength(buffers.w, K * N, 'w');
  const yLength = M * N === 0 ? 0 : (M - 1) * ldY + N;
  checkLength(buffers.y, yLength, 'y');
  if (buffers.bias) checkLength(buffers.bias, N, 'bias');
  if (buffers.pre) checkLength(buffers.pre, yLength, 'pre');
  const variant = options.variant ?? matmulVariantOf(device);
  const pipeline = matmulPipeline(device, variant);
  const label = `matmul.${variant.kind}`;
  const params = uploadUniform(device, `${label}.params`, matmulParams(shape, matmulFlags(options, buffers)));
  const group = bindBuffers(device, `${label}.bindGroup`, pipeline, {
    0: buffers.x,
    1: buffers.w,
    2: buffers.bias ?? unusedBinding(device, 'read'),
    3: buffers.y,
    4: buffers.pre ?? unusedBinding(device, 'write'),
    5: params,
  });
  // An empty product still writes bias (and GELU) when K = 0; an empty output needs no dispatch.
  const workgroups: [number, number, number] = M * N === 0 ? [0, 0, 0] : matmulWorkgroups(shape, variant);
  return { label, pipeline, group, workgroups, uniforms: [params] };
}
