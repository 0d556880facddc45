// Binding of shaders/add.wgsl: out = a + b over n floats.

import code from '../../shaders/add.wgsl?raw';
import { uploadUniform } from './buffers';
import { bindGroup, computePipeline, dispatch, groups1d } from './pipeline';

const WG = 256;

/** Mirror of `struct Params` in add.wgsl: n: u32 @ 0. */
export function addParams(n: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  new Uint32Array(bytes)[0] = n;
  return bytes;
}

export function encodeAdd(device: GPUDevice, pass: GPUComputePassEncoder, a: GPUBuffer, b: GPUBuffer, out: GPUBuffer, n: number): void {
  const pipeline = computePipeline(device, 'add', code, { WG });
  const params = uploadUniform(device, 'add.params', addParams(n));
  const group = bindGroup(device, 'add.bindGroup', pipeline, [a, b, out, params]);
  const [x, y] = groups1d(n, WG);
  dispatch(pass, pipeline, group, x, y);
}

/** The TypeScript reference. */
export function addReference(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] + b[i];
  return out;
}
