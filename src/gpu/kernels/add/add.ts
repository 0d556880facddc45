// Binding of add.wgsl: out = a + b over n floats (the residual connections).
// Reference: add.reference.ts.

import code from './add.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 256;

/** Mirror of `struct Params` in add.wgsl: n: u32 @ 0. */
export function addParams(n: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  new DataView(bytes).setUint32(0, n, true);
  return bytes;
}

export function createAdd(device: GPUDevice, n: number, b: { a: BufferRef; b: BufferRef; out: BufferRef }): Launch {
  checkLength(b.a, n, 'a');
  checkLength(b.b, n, 'b');
  checkLength(b.out, n, 'out');
  const pipeline = computePipeline(device, 'add', code, { WG });
  const params = uploadUniform(device, 'add.params', addParams(n));
  const group = bindBuffers(device, 'add.bindGroup', pipeline, { 0: b.a, 1: b.b, 2: b.out, 3: params });
  const [x, y] = groups1d(n, WG);
  return { label: 'add', pipeline, group, workgroups: n === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}
