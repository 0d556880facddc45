// The memory formulas of family-memory.ts (docs/model.md, "Memory per size") held to what the GPU side
// allocates: the loader's weight buffers byte for byte (tensors in each format, a tied head once, tensors
// under 16 bytes padded), and a forward's activation buffers (x, h, qkv, att, lse and one MLP block),
// with the MLP split in blocks under a lowered binding limit.

import { afterEach, describe, expect, it } from 'vitest';
import type { FamilyConfig, WeightDtype } from '../model/family/config';
import type { Gpu } from './runtime/device';
import { createFamilyForward, loadFamilyModel, mlpBlockRows } from './family-model';
import { familyMemory } from './family-memory';
import { folderSource, randomFamilyFolder } from './family-model.testing';
import { useGpu } from './runtime/gpu.testing';
import { bindingLimit, setBindingLimit } from './runtime/limits';

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
  headDim: 4, // q_norm and k_norm of 8 bytes in BF16: padded to 16
  tieWordEmbeddings: true,
  qkvBias: false,
  qkNorm: true,
};
const LLAMA: FamilyConfig = { ...QWEN3, architecture: 'LlamaForCausalLM', headDim: 32, nHead: 2, nKvHead: 1, tieWordEmbeddings: false, qkNorm: false };
const QWEN2: FamilyConfig = {
  ...QWEN3,
  architecture: 'Qwen2ForCausalLM',
  hiddenSize: 192,
  headDim: 16,
  tieWordEmbeddings: false,
  qkvBias: true,
  qkNorm: false,
};

/** Bytes of the buffers created while `run` runs, by label. */
function buffersCreated(device: GPUDevice, run: () => void): Map<string, number> {
  const sizes = new Map<string, number>();
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    sizes.set(descriptor.label ?? '', (sizes.get(descriptor.label ?? '') ?? 0) + descriptor.size);
    return create(descriptor);
  };
  try {
    run();
  } finally {
    device.createBuffer = create;
  }
  return sizes;
}

const ACTIVATIONS = ['x', 'h', 'qkv', 'att', 'lse', 'gateUp', 'act'].map((name) => `FamilyForward.${name}`);

describe('family memory formulas against the GPU buffers', () => {
  const cases: [string, FamilyConfig, WeightDtype][] = [
    ['Qwen3 BF16, tied head, 16-byte q/k norms', QWEN3, 'BF16'],
    ['Llama F32, untied head', LLAMA, 'F32'],
    ['Qwen2 F16 with q/k/v biases', QWEN2, 'F16'],
  ];
  for (const [what, config, dtype] of cases) {
    it(`${what}: the loader's weight bytes, to the byte`, async () => {
      const model = await loadFamilyModel(gpu, config, folderSource(randomFamilyFolder(config, dtype, 5)));
      try {
        expect(model.weightBytes).toBe(familyMemory(config, dtype, 0).weights);
      } finally {
        model.destroy();
      }
    });
  }

  it("an 80-row forward's activations, the MLP in blocks of 64 rows under a 64 KiB binding limit, to the byte", async () => {
    const N = 80;
    setBindingLimit(gpu.device, 64 * 1024);
    const model = await loadFamilyModel(gpu, QWEN2, folderSource(randomFamilyFolder(QWEN2, 'F16', 5)));
    try {
      expect(mlpBlockRows(model, N)).toBe(64);
      const rows = Array.from({ length: N }, (_, i) => i);
      let destroy = () => {};
      const sizes = buffersCreated(gpu.device, () => {
        const forward = createFamilyForward(model, {
          tokens: Uint32Array.from(rows, (i) => (i * 7) % QWEN2.vocabSize),
          positions: Uint32Array.from(rows),
          end: Uint32Array.from(rows, () => N),
        });
        destroy = forward.destroy;
      });
      destroy();
      expect(ACTIVATIONS.every((label) => sizes.has(label))).toBe(true);
      expect(ACTIVATIONS.reduce((n, label) => n + (sizes.get(label) ?? 0), 0)).toBe(familyMemory(QWEN2, 'F16', N, bindingLimit(gpu.device)).activations);
      // Without the limit the MLP takes all 80 rows at once: a different figure, which the formula follows.
      expect(familyMemory(QWEN2, 'F16', N).activations - familyMemory(QWEN2, 'F16', N, 64 * 1024).activations).toBe(16 * 3 * QWEN2.intermediateSize * 4);
    } finally {
      model.destroy();
    }
  });
});
