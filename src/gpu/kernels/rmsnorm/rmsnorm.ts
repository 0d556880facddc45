// Binding of rmsnorm.wgsl: out (N, C) = RMSNorm(x) · weight, the weight in the folder's format.

import reduce from '../common/reduce.wgsl?raw';
import type { WeightDtype } from '../../../model/family/config';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';
import { checkEven, dtypeBytes, WEIGHT_FORMAT, weightFormatWgsl, weightReads, type WeightReads } from '../weight-format/weight-format';
import kernel from './rmsnorm.wgsl?raw';

const code = (reads: WeightReads) => `${weightFormatWgsl(reads)}\n${reduce}\n${kernel}`;
/** Invocations per row (the WG override; a power of two). */
export const RMSNORM_WG = 64;

/** Mirror of `struct Params` in rmsnorm.wgsl: N: u32 @ 0, C: u32 @ 4, eps: f32 @ 8. */
export function rmsnormParams(N: number, C: number, eps: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setUint32(4, C, true);
  view.setFloat32(8, eps, true);
  return bytes;
}

export function createRmsnorm(
  device: GPUDevice,
  shape: { N: number; C: number; eps: number },
  dtype: WeightDtype,
  b: { x: BufferRef; weight: BufferRef; out: BufferRef },
  options: { reads?: WeightReads } = {},
): Launch {
  const { N, C, eps } = shape;
  checkEven(C, 'rmsnorm: C');
  checkLength(b.x, N * C, 'x');
  checkLength(b.weight, Math.ceil((C * dtypeBytes(dtype)) / 4), 'weight');
  checkLength(b.out, N * C, 'out');
  const reads = weightReads(device, dtype, options.reads);
  const label = `rmsnorm.${dtype}${reads === 'f16' ? '.f16' : ''}`;
  const pipeline = computePipeline(device, label, code(reads), { WFMT: WEIGHT_FORMAT[dtype], WG: RMSNORM_WG });
  const params = uploadUniform(device, `${label}.params`, rmsnormParams(N, C, eps));
  const group = bindBuffers(device, `${label}.bindGroup`, pipeline, { 0: b.x, 1: b.weight, 2: b.out, 3: params });
  const [x, y] = groups1d(N, 1, device.limits.maxComputeWorkgroupsPerDimension);
  return { label, pipeline, group, workgroups: N === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}
