// The memory table of docs/model.md ("Memory per size") for the two published configs the open-models
// benchmark loads: parameters, BF16 weight bytes, a 4,096-row forward's activations and a 4,096-position
// KV cache, as the formulas give them (family-memory.gpu.test.ts holds the formulas to the GPU buffers).

import { describe, expect, it } from 'vitest';
import { parseFamilyConfig } from '../model/family/config';
import { OPEN_MODELS } from '../testing/openModels';
import { familyMemory, mlpRows } from './family-memory';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

describe('memory per size', () => {
  it('SmolLM2-135M: 134.5M parameters, 0.25 GiB of BF16 weights, 89 MiB of activations and 0.44 GiB of KV cache for 4,096 tokens', () => {
    const m = familyMemory(parseFamilyConfig(OPEN_MODELS['smollm2-135m']), 'BF16', 4096);
    expect(m).toEqual({ parameters: 134_515_008, weights: 269_030_016, activations: 93_732_864, kvCache: 471_859_200 });
    expect([(m.weights / GiB).toFixed(2), Math.round(m.activations / MiB), (m.kvCache / GiB).toFixed(2)]).toEqual(['0.25', 89, '0.44']);
  });

  it('Qwen3-0.6B: 596.0M parameters, 1.11 GiB of BF16 weights, 176 MiB of activations and 1.75 GiB of KV cache for 4,096 tokens', () => {
    const config = parseFamilyConfig(OPEN_MODELS['qwen3-0.6b']);
    const m = familyMemory(config, 'BF16', 4096);
    expect(m).toEqual({ parameters: 596_049_920, weights: 1_192_099_840, activations: 184_025_088, kvCache: 1_879_048_192 });
    expect([(m.weights / GiB).toFixed(2), Math.round(m.activations / MiB), (m.kvCache / GiB).toFixed(2)]).toEqual(['1.11', 176, '1.75']);
    // The MLP runs 1,344 rows at a time (32 MiB of gate | up and act), so activations grow by rows, not by FF.
    expect(mlpRows(config.intermediateSize, 4096, GiB)).toBe(1344);
    expect(familyMemory(config, 'F32', 0).weights).toBe(2 * m.weights);
  });
});
