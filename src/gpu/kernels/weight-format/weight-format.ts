// Weights as a model folder stores them (F32, F16, BF16), kept in that format on the GPU: the
// WFMT override of every kernel that reads weights (weight-format.wgsl), how 16-bit words are read
// (unpacked from u32, or native f16 loads where the device has `shader-f16`), the bytes a tensor
// takes, and the float64 decoding the references read.

import type { WeightDtype } from '../../../model/family/config';
import { readTensor } from '../../../util/safetensors';
import shared from './weight-format.wgsl?raw';

/** The `WFMT` override of weight-format.wgsl, by dtype. */
export const WEIGHT_FORMAT: Record<WeightDtype, number> = { F32: 0, F16: 1, BF16: 2 };

/**
 * How a kernel reads 16-bit weights: `unpack` binds words of u32 and unpacks each (unpack2x16float for
 * F16, a shift into the top half of an f32 for BF16); `f16` binds words of vec2<f16> and loads F16
 * natively (WGSL `enable f16`, the `shader-f16` feature). BF16 has no native WGSL type, and F32 no
 * halves, so both always read through `unpack`. Accumulation is f32 on both paths.
 */
export type WeightReads = 'unpack' | 'f16';

/** Whether the device was created with `shader-f16` (createGpu asks for it where the adapter has it). */
export const hasShaderF16 = (device: GPUDevice): boolean => device.features.has('shader-f16');

/**
 * The path a kernel reading `dtype` weights takes on `device`: `f16` for F16 weights where the device
 * has shader-f16, else `unpack`. `requested` forces a path (the tests run both); `f16` on a device
 * without the feature, or for another dtype, is refused in one line.
 */
export function weightReads(device: GPUDevice, dtype: WeightDtype, requested?: WeightReads): WeightReads {
  if (requested === 'f16') {
    if (dtype !== 'F16') throw new Error(`weight reads: native f16 loads read F16 weights, not ${dtype}`);
    if (!hasShaderF16(device)) throw new Error('weight reads: native f16 loads need the shader-f16 feature, which this device lacks');
    return 'f16';
  }
  if (requested === 'unpack') return 'unpack';
  return dtype === 'F16' && hasShaderF16(device) ? 'f16' : 'unpack';
}

/** The header of each path: the word type weights bind as, its 32 bits, and a word's two 16-bit elements. */
const HEADERS: Record<WeightReads, string> = {
  unpack: `alias WeightWord = u32;
fn wordBits(word: WeightWord) -> u32 { return word; }
// F16 through unpack2x16float; BF16 is the high half of an f32, so each half shifts (or masks) into
// the top 16 bits of a word.
fn pair16(word: WeightWord) -> vec2f {
  if (WFMT == 1u) { return unpack2x16float(word); }
  return vec2f(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u));
}
`,
  f16: `enable f16;
alias WeightWord = vec2<f16>;
fn wordBits(word: WeightWord) -> u32 { return bitcast<u32>(word); }
// F16 loaded natively and widened to f32 (this header is used for F16 weights only).
fn pair16(word: WeightWord) -> vec2f { return vec2f(word); }
`,
};

/** WGSL prepended to a kernel that reads weights (`enable f16` first where the path needs it). */
export function weightFormatWgsl(reads: WeightReads): string {
  return `${HEADERS[reads]}\n${shared}`;
}

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
