// Random weights and configs of the Llama / Qwen2 / Qwen3 family, for tests: large enough (std 0.3,
// norms around 1) that attention patterns, RoPE and masking mistakes show in the log-probabilities.

import { type FamilyConfig, familyParameters } from '../model/family/config';
import { createRng } from '../util/prng';

/** A tiny config of each family: GQA (4 query heads over 2 kv heads), head size 8. */
export function tinyFamilyConfig(architecture: FamilyConfig['architecture'], overrides: Partial<FamilyConfig> = {}): FamilyConfig {
  return {
    architecture,
    name: `tiny-${architecture}`,
    vocabSize: 300,
    hiddenSize: 16,
    intermediateSize: 24,
    nLayer: 2,
    nHead: 4,
    nKvHead: 2,
    headDim: 8,
    ropeTheta: 10000,
    ropeScaling: { type: 'none' },
    rmsNormEps: 1e-6,
    tieWordEmbeddings: architecture !== 'LlamaForCausalLM',
    maxPositionEmbeddings: 64,
    qkvBias: architecture === 'Qwen2ForCausalLM',
    qkNorm: architecture === 'Qwen3ForCausalLM',
    ...overrides,
  };
}

/** Float32 values of every parameter, seeded: norm weights near 1, the rest N(0, 0.3²). */
export function randomFamilyWeights(config: FamilyConfig, seed: number): { config: FamilyConfig; tensors: Map<string, Float32Array> } {
  const rng = createRng(seed);
  const tensors = new Map<string, Float32Array>();
  for (const { name, shape } of familyParameters(config)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const norm = /norm\.weight$|layernorm\.weight$/.test(name);
    for (let i = 0; i < data.length; i++) data[i] = norm ? 1 + 0.2 * rng.normal() : 0.3 * rng.normal();
    tensors.set(name, data);
  }
  return { config, tensors };
}
