// Binding of shaders/add.wgsl: out = a + b over n floats (the residual connections).

import code from '../../shaders/add.wgsl?raw';
import { uploadUniform } from './buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from './kernel';
import { computePipeline, groups1d } from './pipeline';

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

/** The TypeScript reference. */
export function addReference(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] + b[i];
  return out;
}
