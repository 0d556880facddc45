// What the family kernels' GPU tests share: weights drawn from a seeded stream, rounded to a folder
// format and uploaded as raw bytes (the values the references read are the stored ones, decoded).

import type { WeightDtype } from '../../model/family/config';
import { createRng, type Rng } from '../../util/prng';
import { align } from '../runtime/buffers';
import { decodeWeights, encodeWeights } from './weight-format/weight-format';

/** A storage buffer holding `bytes` (padded to whole words). */
export function uploadBytes(device: GPUDevice, label: string, bytes: Uint8Array): GPUBuffer {
  const size = Math.max(16, align(bytes.byteLength, 4));
  const buffer = device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  const padded = new Uint8Array(size);
  padded.set(bytes);
  device.queue.writeBuffer(buffer, 0, padded);
  return buffer;
}

/** n weights uniform in [-scale, scale) (plus `offset`), stored as `dtype`: the bytes, and their float64 values. */
export function randomWeights(rng: Rng, dtype: WeightDtype, n: number, scale = 1, offset = 0): { bytes: Uint8Array; values: Float64Array } {
  const bytes = encodeWeights(
    dtype,
    Array.from({ length: n }, () => offset + (rng.next() * 2 - 1) * scale),
  );
  return { bytes, values: decodeWeights(dtype, bytes) };
}

/** n standard normal f32 activations. */
export function randomActivations(seed: number | Rng, n: number): Float32Array {
  const rng = typeof seed === 'number' ? createRng(seed) : seed;
  return Float32Array.from({ length: n }, () => rng.normal());
}

export const DTYPES: readonly WeightDtype[] = ['F32', 'F16', 'BF16'];
