// Binding of swiglu.wgsl: out (R, FF) = silu(gate) · up from the stacked (R, 2·FF) gate | up projections.

import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';
import code from './swiglu.wgsl?raw';

const WG = 256;

/** Mirror of `struct Params` in swiglu.wgsl: R: u32 @ 0, FF: u32 @ 4. */
export function swigluParams(R: number, FF: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, R, true);
  view.setUint32(4, FF, true);
  return bytes;
}

export function createSwiglu(device: GPUDevice, shape: { R: number; FF: number }, b: { gateUp: BufferRef; out: BufferRef }): Launch {
  const { R, FF } = shape;
  checkLength(b.gateUp, R * 2 * FF, 'gateUp');
  checkLength(b.out, R * FF, 'out');
  const pipeline = computePipeline(device, 'swiglu', code, { WG });
  const params = uploadUniform(device, 'swiglu.params', swigluParams(R, FF));
  const group = bindBuffers(device, 'swiglu.bindGroup', pipeline, { 0: b.gateUp, 1: b.out, 2: params });
  const [x, y] = groups1d(R * FF, WG);
  return { label: 'swiglu', pipeline, group, workgroups: R * FF === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}
