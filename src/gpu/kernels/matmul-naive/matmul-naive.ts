// Binding of matmul-naive.wgsl: y (M, N) = x (M, K) · W (K, N), one invocation per output.
// A benchmark baseline only (../matmul/matmul.bench.ts); the model uses matmul.ts.
// Reference: matmulRef in ../matmul/matmul.reference.ts (the same product as matmul.wgsl).

import code from './matmul-naive.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type Launch } from '../../runtime/kernel';
import type { MatmulShape } from '../matmul/matmul';
import { computePipeline } from '../../runtime/pipeline';

const WG_X = 16;
const WG_Y = 16;

/** Mirror of `struct Params` in matmul-naive.wgsl: M: u32 @ 0, K: u32 @ 4, N: u32 @ 8. */
export function matmulNaiveParams({ M, K, N }: MatmulShape): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, M, true);
  view.setUint32(4, K, true);
  view.setUint32(8, N, true);
  return bytes;
}

export function createMatmulNaive(device: GPUDevice, shape: MatmulShape, buffers: { x: GPUBuffer; w: GPUBuffer; y: GPUBuffer }): Launch {
  const { M, K, N } = shape;
  checkLength(buffers.x, M * K, 'x');
  checkLength(buffers.w, K * N, 'w');
  checkLength(buffers.y, M * N, 'y');
  const pipeline = computePipeline(device, 'matmulNaive', code, { WG_X, WG_Y });
  const params = uploadUniform(device, 'matmulNaive.params', matmulNaiveParams(shape));
  const group = bindBuffers(device, 'matmulNaive.bindGroup', pipeline, { 0: buffers.x, 1: buffers.w, 2: buffers.y, 3: params });
  const workgroups: [number, number, number] = [Math.ceil(N / WG_X), Math.ceil(M / WG_Y), 1];
  return { label: 'matmulNaive', pipeline, group, workgroups, uniforms: [params] };
}
