// Weights as a model folder stores them (F32, F16, BF16), kept in that format on the GPU: the
// WFMT override of every kernel that reads weights (weight-format.wgsl), the bytes a tensor takes,
// and the float64 decoding the references read.

import type { WeightDtype } from '../../../model/family/config';
import { readTensor } from '../../../util/safetensors';
import shared from './weight-format.wgsl?raw';

/** The `WFMT` override of weight-format.wgsl, by dtype. */
export const WEIGHT_FORMAT: Record<WeightDtype, number> = { F32: 0, F16: 1, BF16: 2 };

/** WGSL of weight-format.wgsl, prepended to the kernels that read weights. */
export const weightFormatWgsl = shared;

export const dtypeBytes = (dtype: WeightDtype) => (dtype === 'F32' ? 4 : 2);

/**
 * Elements of a row (or a whole tensor) a kernel reads as pairs must be even for 16-bit formats
 * (two to a word); F32 tensors follow the same rule so that one kernel reads all three.
 */
export function checkEven(count: number, what: string): void {
  if (count % 2 !== 0) throw new Error(`${what}: ${count} elements, the weight kernels read them in pairs (an even count)`);
}

/** The elements of a tensor's little-endian bytes as float64 (exact: every format widens without rounding): safetensors' readTensor. */
export function decodeWeights(dtype: WeightDtype, data: Uint8Array): Float64Array {
  return Float64Array.from(readTensor(data, { name: 'weights', dtype, shape: [data.byteLength / dtypeBytes(dtype)], begin: 0, end: data.byteLength }));
}

/** Rounds float values to `dtype` (nearest even), little-endian bytes: what a model folder would store. */
export function encodeWeights(dtype: WeightDtype, values: ArrayLike<number>): Uint8Array {
  const n = values.length;
  if (dtype === 'F32') return new Uint8Array(Float32Array.from(values).buffer);
  const out = new Uint8Array(2 * n);
  const view = new DataView(out.buffer);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < n; i++) {
    f32[0] = values[i];
    const bits = u32[0];
    if (dtype === 'BF16') {
      view.setUint16(2 * i, ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff, true);
    } else {
      view.setUint16(2 * i, toF16(values[i]), true);
    }
  }
  return out;
}

/** Nearest-even f16 bits of a finite value within f16's range (subnormals included). */
function toF16(v: number): number {
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -24 / 2) return sign;
  let exp = Math.floor(Math.log2(a));
  while (2 ** exp > a) exp--;
  while (2 ** (exp + 1) <= a) exp++;
  if (exp < -14) exp = -14; // subnormal
  const scaled = a / 2 ** (exp - 10); // exact: a power-of-two scale
  const floor = Math.floor(scaled);
  const frac = scaled - floor;
  let mant = frac > 0.5 || (frac === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  if (mant >= 2048) {
    mant /= 2;
    exp += 1;
  }
  if (exp > 15) return sign | 0x7c00;
  if (exp === -14 && mant < 1024) return sign | mant;
  return sign | ((exp + 15) << 10) | (mant - 1024);
}
