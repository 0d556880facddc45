// Binding of gelu.wgsl: standalone tanh-form GELU over n floats, forward and backward.
// Reference: geluRef, geluBackwardRef in gelu.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './gelu.wgsl?raw';
import geluMath from '../common/gelu-math.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type Launch, type BufferRef } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 256;

/** Mirror of `struct Params` in gelu.wgsl: n: u32 @ 0. */
export function geluParams(n: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  new DataView(bytes).setUint32(0, n, true);
  return bytes;
}

function launch(device: GPUDevice, entry: 'forward' | 'backward', n: number, accumulate: boolean, buffers: Record<number, BufferRef>): Launch {
  const pipeline = computePipeline(device, `gelu.${entry}`, geluMath + code, { WG, ACCUMULATE: Number(accumulate) }, entry);
  const params = uploadUniform(device, `gelu.${entry}.params`, geluParams(n));
  const group = bindBuffers(device, `gelu.${entry}.bindGroup`, pipeline, { 0: params, ...buffers });
  const [x, y] = groups1d(n, WG);
  return { label: `gelu.${entry}`, pipeline, group, workgroups: n === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}

/** out (n) = gelu(x (n)). */
export function createGelu(device: GPUDevice, n: number, buffers: { x: BufferRef; out: BufferRef }): Launch {
  checkLength(buffers.x, n, 'x');
  checkLength(buffers.out, n, 'out');
  return launch(device, 'forward', n, false, { 1: buffers.x, 2: buffers.out });
}

/** dx (n) = dOut · gelu'(x), or dx += with accumulate; x is the GELU's input. */
export function createGeluBackward(
  device: GPUDevice,
  n: number,
  buffers: { x: GPUBuffer; dOut: GPUBuffer; dx: GPUBuffer },
  options: { accumulate?: boolean } = {},
): Launch {
  checkLength(buffers.x, n, 'x');
  checkLength(buffers.dOut, n, 'dOut');
  checkLength(buffers.dx, n, 'dx');
  return launch(device, 'backward', n, !!options.accumulate, { 1: buffers.x, 3: buffers.dOut, 4: buffers.dx });
}
