// What a family config must satisfy before any GPU work, and the tensors its folder must hold.

import { describe, expect, it } from 'vitest';
import type { FamilyConfig } from '../model/family/config';
import { checkFamilyConfig, familyTensorShapes } from './family-model';

const QWEN3: FamilyConfig = {
  architecture: 'Qwen3ForCausalLM',
  name: 'tiny-qwen3',
  vocabSize: 300,
  hiddenSize: 64,
  intermediateSize: 128,
  nLayer: 2,
  nHead: 4,
  nKvHead: 2,
  headDim: 64,
  ropeTheta: 1e6,
  ropeScaling: { type: 'none' },
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  maxPositionEmbeddings: 512,
  qkvBias: false,
  qkNorm: true,
};

describe('family config on the GPU', () => {
  it('refuses in one line what the kernels cannot run', () => {
    expect(() => checkFamilyConfig({ ...QWEN3, nKvHead: 3 })).toThrow('tiny-qwen3: 4 attention heads are not a multiple of 3 key/value heads');
    expect(() => checkFamilyConfig({ ...QWEN3, headDim: 256 })).toThrow(
      'head_dim 256 is not supported: the attention kernel takes a multiple of 4, at most 128',
    );
    expect(() => checkFamilyConfig({ ...QWEN3, intermediateSize: 127 })).toThrow('must be even');
    expect(() => checkFamilyConfig(QWEN3)).not.toThrow();
  });

  it('lists each family layout: q/k norms (Qwen3), q/k/v biases (Qwen2), an untied head', () => {
    const qwen3 = familyTensorShapes(QWEN3);
    expect(qwen3.size).toBe(2 + 2 * 11);
    expect(qwen3.get('model.layers.1.self_attn.q_proj.weight')).toEqual([256, 64]);
    expect(qwen3.get('model.layers.1.self_attn.k_norm.weight')).toEqual([64]);
    expect(qwen3.has('lm_head.weight')).toBe(false);
    const qwen2 = familyTensorShapes({ ...QWEN3, qkNorm: false, qkvBias: true, tieWordEmbeddings: false });
    expect(qwen2.get('model.layers.0.self_attn.v_proj.bias')).toEqual([128]);
    expect(qwen2.get('lm_head.weight')).toEqual([300, 64]);
    expect(qwen2.has('model.layers.0.self_attn.q_norm.weight')).toBe(false);
  });
});
