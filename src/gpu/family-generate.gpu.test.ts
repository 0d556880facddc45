// The family decoder (KV cache, decode_attention) against the float64 family forward: a prefill, decode
// steps of one row, and an edit that keeps the cached prefix, each giving the last row's log-softmax
// within 2e-4 (Qwen3 BF16 with GQA and q/k norms; Qwen2 F16 with biases, a cache capacity that refuses more).

import { describe, expect, it } from 'vitest';
import type { FamilyConfig, WeightDtype } from '../model/family/config';
import { createRng } from '../util/prng';
import { expectClose } from '../testing/close';
import type { Gpu } from './runtime/device';
import { familyLanguageModel, type FamilyDecoder } from './family-generate';
import { loadFamilyModel } from './family-model';
import { folderReferenceLogprobs, folderSource, randomFamilyFolder } from './family-model.testing';
import { useGpu } from './runtime/gpu.testing';

let gpu: Gpu;
useGpu((g) => (gpu = g));

const base = {
  name: 'tiny',
  ropeTheta: 10000,
  ropeScaling: { type: 'none' } as const,
  rmsNormEps: 1e-6,
  maxPositionEmbeddings: 512,
  nLayer: 2,
  tieWordEmbeddings: true,
};
const QWEN3: FamilyConfig = {
  ...base,
  architecture: 'Qwen3ForCausalLM',
  vocabSize: 120,
  hiddenSize: 64,
  intermediateSize: 128,
  nHead: 4,
  nKvHead: 2,
  headDim: 64,
  qkvBias: false,
  qkNorm: true,
};
const QWEN2: FamilyConfig = {
  ...base,
  architecture: 'Qwen2ForCausalLM',
  vocabSize: 90,
  hiddenSize: 32,
  intermediateSize: 64,
  nHead: 2,
  nKvHead: 1,
  headDim: 16,
  qkvBias: true,
  qkNorm: false,
};

function logSoftmax(logits: Float32Array): Float64Array {
  const m = Math.max(...logits);
  const lse = m + Math.log(logits.reduce((s, v) => s + Math.exp(v - m), 0));
  return Float64Array.from(logits, (v) => v - lse);
}

describe('family decoder', () => {
  for (const [config, dtype] of [
    [QWEN3, 'BF16'],
    [QWEN2, 'F16'],
  ] as [FamilyConfig, WeightDtype][]) {
    it(`${config.architecture} ${dtype}: prefill, decode steps and an edit give the float64 forward's last row within 2e-4`, async () => {
      const folder = randomFamilyFolder(config, dtype, 11);
      const model = await loadFamilyModel(gpu, config, folderSource(folder));
      const language = familyLanguageModel(model, { capacity: 24 });
      expect(language.nPositions).toBe(24);
      const decoder = language.createDecoder() as FamilyDecoder;
      try {
        const V = config.vocabSize;
        /** The reference's log-softmax of the last row of a causal view. */
        const want = (view: number[]) =>
          folderReferenceLogprobs(config, folder, {
            tokens: view,
            positions: view.map((_, i) => i),
            end: view.map(() => view.length),
            targets: Array.from({ length: V }, (_, token) => ({ predictor: view.length - 1, token })),
          });
        const rng = createRng(5);
        const view = Array.from({ length: 9 }, () => rng.int(V));
        expectClose(logSoftmax(await decoder.sync(view)), want(view), { abs: 2e-4, label: 'prefill' });
        for (let step = 0; step < 2; step++) {
          view.push(rng.int(V));
          expectClose(logSoftmax(await decoder.sync(view)), want(view), { abs: 2e-4, label: `decode step ${step}` });
        }
        const edited = [...view.slice(0, 6), 3, 4];
        expectClose(logSoftmax(await decoder.sync(edited)), want(edited), { abs: 2e-4, label: 'after an edit' });
        expect(decoder.tokens).toEqual(edited);
        await expect(decoder.extend(Array.from({ length: 20 }, () => 1))).rejects.toThrow("more than the decoder's 24 positions");
      } finally {
        decoder.destroy();
        model.destroy();
      }
    });
  }
});
