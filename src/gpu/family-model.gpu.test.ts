// The family model on the GPU against a float64 forward of the family (family-model.testing.ts): tiny
// random folders in each family's layout (Qwen3 BF16 with a tied head and q/k norms; Llama F32 untied
// with llama3 RoPE scaling and head_dim 128; Qwen2 F16 with q/k/v biases, its embedding, head, MLP rows
// and logits split over a lowered binding limit), scored on a packed tree batch whose positions count
// from each branch's root and do not start at 0, within 2e-4. GPU bytes for weights vs the folder's.

import { afterEach, describe, expect, it } from 'vitest';
import type { FamilyConfig, WeightDtype } from '../model/family/config';
import { createRng } from '../util/prng';
import { expectClose } from '../testing/close';
import { causalEnd, packEnds, randomTreeEnd } from './kernels/attention/attention-test-masks';
import type { Gpu } from './runtime/device';
import { loadFamilyModel, mlpBlockRows } from './family-model';
import { folderReferenceLogprobs, folderSource, randomFamilyFolder, type ReferenceBatch } from './family-model.testing';
import { useGpu } from './runtime/gpu.testing';
import { setBindingLimit } from './runtime/limits';
import type { PlanSequence } from '../plan/types';
import { scoreBatch, scoreSequences } from './score';

let gpu: Gpu;
useGpu((g) => (gpu = g));
afterEach(() => setBindingLimit(gpu.device, undefined));

const base = { name: 'tiny', ropeTheta: 10000, ropeScaling: { type: 'none' } as const, rmsNormEps: 1e-6, maxPositionEmbeddings: 512, nLayer: 2 };

const QWEN3: FamilyConfig = {
  ...base,
  architecture: 'Qwen3ForCausalLM',
  vocabSize: 300,
  hiddenSize: 64,
  intermediateSize: 128,
  nHead: 4,
  nKvHead: 2,
  headDim: 64,
  tieWordEmbeddings: true,
  qkvBias: false,
  qkNorm: true,
  ropeTheta: 1000000,
};
const LLAMA: FamilyConfig = {
  ...base,
  architecture: 'LlamaForCausalLM',
  vocabSize: 256,
  hiddenSize: 64,
  intermediateSize: 96,
  nHead: 2,
  nKvHead: 1,
  headDim: 128,
  tieWordEmbeddings: false,
  qkvBias: false,
  qkNorm: false,
  rmsNormEps: 1e-5,
  ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 },
};
const QWEN2: FamilyConfig = {
  ...base,
  architecture: 'Qwen2ForCausalLM',
  vocabSize: 200,
  hiddenSize: 192,
  intermediateSize: 128,
  nHead: 4,
  nKvHead: 2,
  headDim: 16,
  tieWordEmbeddings: false,
  qkvBias: true,
  qkNorm: false,
};

/** Positions of a preorder tree's rows: each row's depth (its ancestors), plus `start`. */
function treePositions(end: ArrayLike<number>, start: number): number[] {
  return Array.from(end, (_, i) => {
    let depth = 0;
    for (let k = 0; k < i; k++) if (end[k] > i) depth++;
    return start + depth;
  });
}

/** A packed batch: a random tree starting at position 7 and a causal sequence at 0, random tokens, a target on most rows. */
function treeBatch(seed: number, V: number, treeRows: number, causalRows: number): ReferenceBatch {
  const rng = createRng(seed);
  const tree = randomTreeEnd(rng, treeRows, 0.25);
  const end = packEnds([tree, causalEnd(causalRows)]);
  const positions = [...treePositions(tree, 7), ...Array.from({ length: causalRows }, (_, i) => i)];
  const tokens = Array.from(end, () => rng.int(V));
  const targets = Array.from(end.keys())
    .filter((i) => i % 5 !== 3)
    .map((predictor) => ({ predictor, token: rng.int(V) }));
  return { tokens, positions, end, targets };
}

describe('family model on the GPU', () => {
  const cases: [string, FamilyConfig, WeightDtype, number | undefined, [number, number]][] = [
    ['Qwen3 BF16, tied head, q/k norms, HS 64, NH/NKV 4/2', QWEN3, 'BF16', undefined, [30, 12]],
    ['Llama F32 untied, llama3 RoPE, HS 128, NH/NKV 2/1', LLAMA, 'F32', undefined, [24, 9]],
    ['Qwen2 F16, q/k/v biases, split over a 64 KiB binding limit', QWEN2, 'F16', 64 * 1024, [60, 20]],
  ];
  for (const [what, config, dtype, limit, [treeRows, causalRows]] of cases) {
    it(`${what}: target log-probabilities within 2e-4 of the float64 forward`, async () => {
      if (limit) setBindingLimit(gpu.device, limit);
      const folder = randomFamilyFolder(config, dtype, config.vocabSize);
      const progress: number[] = [];
      const model = await loadFamilyModel(gpu, config, folderSource(folder), (p) => progress.push(p.bytes));
      try {
        const fileBytes = folder.reduce((n, t) => n + t.data.byteLength, 0);
        expect(progress.at(-1)).toBe(fileBytes);
        expect(model.weightBytes).toBeLessThanOrEqual(1.1 * fileBytes);
        expect(model.weightBytes).toBeGreaterThanOrEqual(fileBytes);
        const batch = treeBatch(config.vocabSize + 1, config.vocabSize, treeRows, causalRows);
        if (limit) {
          expect(model.embedding.blocks.length).toBeGreaterThan(1);
          expect(model.head.blocks.length).toBeGreaterThan(1);
          expect(mlpBlockRows(model, batch.tokens.length)).toBeLessThan(batch.tokens.length);
        }
        const got = await scoreBatch(model, batch);
        const want = folderReferenceLogprobs(config, folder, batch);
        expectClose(got, want, { abs: 2e-4, label: 'logprobs' });
        expect(Math.min(...want)).toBeLessThan(-Math.log(config.vocabSize) + 1); // not a degenerate, near-uniform model
      } finally {
        model.destroy();
      }
    });
  }

  it('scores plan sequences over several forward passes, with full log-probability rows where asked', async () => {
    const config = { ...QWEN2, hiddenSize: 32, headDim: 8 };
    const folder = randomFamilyFolder(config, 'F16', 3);
    const model = await loadFamilyModel(gpu, config, folderSource(folder));
    try {
      let id = 0;
      const sequences: PlanSequence[] = [0, 1, 2].map((s) => {
        const b = treeBatch(10 + s, config.vocabSize, 14 + s, 5);
        const n = b.tokens.length;
        return {
          ids: Int32Array.from({ length: n }, () => id++),
          tokens: Int32Array.from(b.tokens),
          positions: Int32Array.from(b.positions),
          end: Uint32Array.from(b.end),
          targets: b.targets.map((t, k) => ({ index: t.predictor + 1, id: 1000 * s + k, token: t.token, predictor: t.predictor })),
        };
      });
      const scored = await scoreSequences(model, sequences, { maxRows: 25, rows: (tid) => tid % 2 === 0 });
      const want = sequences.flatMap((q) => Array.from(folderReferenceLogprobs(config, folder, q)));
      expectClose(
        scored.map((t) => t.logprob),
        want,
        { abs: 2e-4, label: 'logprobs' },
      );
      const withRows = scored.filter((t) => t.row);
      expect(withRows.length).toBe(scored.filter((t) => t.id % 2 === 0).length);
      for (const t of withRows) {
        const target = sequences.flatMap((q) => q.targets).find((x) => x.id === t.id);
        expect(t.row?.[target?.token ?? -1]).toBeCloseTo(t.logprob, 5);
      }
    } finally {
      model.destroy();
    }
  });

  it('refuses a folder that lacks a tensor, or holds one of another shape, naming it', async () => {
    const folder = randomFamilyFolder(QWEN3, 'BF16', 1);
    const without = folder.filter((t) => t.name !== 'model.layers.1.mlp.up_proj.weight');
    await expect(loadFamilyModel(gpu, QWEN3, folderSource(without))).rejects.toThrow('lacks 1 tensor: model.layers.1.mlp.up_proj.weight');
    const reshaped = folder.map((t) => (t.name === 'model.norm.weight' ? { ...t, shape: [32, 2] } : t));
    await expect(loadFamilyModel(gpu, QWEN3, folderSource(reshaped))).rejects.toThrow('tensor model.norm.weight has shape [32, 2], the config says [64]');
  });
});
