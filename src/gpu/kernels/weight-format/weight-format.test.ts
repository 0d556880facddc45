// The float64 decoding the references read, and the rounding the tests' folders are written with,
// on known bit patterns: F16 normals, subnormals and the largest finite; BF16; ties to even.

import { describe, expect, it } from 'vitest';
import { decodeWeights, encodeWeights } from './weight-format';

const bytes16 = (...words: number[]) => new Uint8Array(Uint16Array.from(words).buffer);

describe('weight formats', () => {
  it('decodes F16 and BF16 bit patterns exactly', () => {
    expect(Array.from(decodeWeights('F16', bytes16(0x3c00, 0xc000, 0x0001, 0x7bff, 0x3555)))).toEqual([1, -2, 2 ** -24, 65504, 0.333251953125]);
    expect(Array.from(decodeWeights('BF16', bytes16(0x3f80, 0xc0a0, 0x3eab)))).toEqual([1, -5, 0.333984375]);
    expect(Array.from(decodeWeights('F32', new Uint8Array(Float32Array.of(0.1, -3).buffer)))).toEqual([Math.fround(0.1), -3]);
  });

  it('rounds to the nearest, ties to even, and round-trips', () => {
    // 1 + 2^-11 lies halfway between F16's 1 and 1 + 2^-10: even is 1; 1 + 3·2^-11 rounds up to 1 + 2^-9.
    expect(Array.from(decodeWeights('F16', encodeWeights('F16', [1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25 * 3, -65504])))).toEqual([
      1,
      1 + 2 ** -9,
      2 ** -23,
      -65504,
    ]);
    expect(Array.from(decodeWeights('BF16', encodeWeights('BF16', [1 + 2 ** -8, 1 + 3 * 2 ** -8, -5])))).toEqual([1, 1 + 2 ** -6, -5]);
    const values = [0.5, -0.25, 3.140625, 1e-3];
    for (const dtype of ['F16', 'BF16', 'F32'] as const) {
      const once = decodeWeights(dtype, encodeWeights(dtype, values));
      expect(decodeWeights(dtype, encodeWeights(dtype, once))).toEqual(once);
    }
  });
});
