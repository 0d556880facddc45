// The published-layout writer against the loader: every layout Hugging Face GPT-2 uploads use loads
// with the config from the shapes (head size 64) and the values written; F16 rounds as IEEE does.

import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../model/checkpoint';
import { readSafetensorsHeader } from '../util/safetensors';
import { floatToHalf, publishedGpt2Checkpoint } from './publishedGpt2';
import { randomWeights } from '../model/random-weights';

const config = { vocabSize: 50257, nEmbd: 128, nLayer: 2, nHead: 2, nPositions: 32 };
const weights = randomWeights(config, 5);

/** Half bits back to a number, by the definition (not the loader's code). */
function half(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The first index where two arrays differ (by Object.is), -1 when they are equal. */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return i;
  return -1;
}

describe('floatToHalf', () => {
  it('is exact on every half value and rounds to the nearest (ties to even) between them', () => {
    for (let h = 0; h < 0x10000; h++) {
      const v = half(h);
      if (Number.isNaN(v)) expect(Number.isNaN(half(floatToHalf(v)))).toBe(true);
      else expect(floatToHalf(v)).toBe(h === 0x8000 ? 0x8000 : h);
    }
    expect(half(floatToHalf(1 + 2 ** -11))).toBe(1); // a tie: to the even neighbour
    expect(half(floatToHalf(1 + 3 * 2 ** -11))).toBe(1 + 2 ** -9);
    expect(half(floatToHalf(70000))).toBe(Infinity);
    expect(half(floatToHalf(2 ** -25))).toBe(0);
    expect(half(floatToHalf(1.5 * 2 ** -25))).toBe(2 ** -24);
  });
});

describe('publishedGpt2Checkpoint', () => {
  it("is gpt2's layout: no prefix, format pt only, mask buffers, no lm_head", () => {
    const header = readSafetensorsHeader(publishedGpt2Checkpoint(weights));
    expect(header.metadata).toEqual({ format: 'pt' });
    const names = [...header.entries.keys()];
    expect(names).toContain('h.1.attn.bias');
    expect(names).toContain('wte.weight');
    expect(names.some((n) => n.startsWith('transformer.') || n.startsWith('lm_head'))).toBe(false);
    expect(header.entries.get('h.0.attn.bias')!.shape).toEqual([1, 1, 32, 32]);
  });

  for (const layout of [{}, { prefix: true, lmHead: true, maskedBias: true }, { dtype: 'F16' as const, lmHead: true }]) {
    it(`loads with the config inferred from the shapes: ${JSON.stringify(layout)}`, () => {
      const bytes = publishedGpt2Checkpoint(weights, layout);
      const loaded = loadCheckpoint(bytes);
      expect(loaded.config).toEqual(config); // n_head = 128 / 64
      for (const [name, want] of weights.tensors) {
        const got = loaded.tensors.get(name)!;
        const rounded = layout.dtype === 'F16' ? Float32Array.from(want, (v) => half(floatToHalf(v))) : want;
        expect(firstDifference(got, rounded), name).toBe(-1);
      }
      const entry = readSafetensorsHeader(bytes).entries.get(layout.prefix ? 'transformer.wte.weight' : 'wte.weight')!;
      expect(entry.dtype).toBe(layout.dtype ?? 'F32');
    });
  }
});
