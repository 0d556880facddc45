// A model the adapter cannot hold is one clear line, not an internal error: a GPT-2-vocabulary
// model scoring a 1,024-token rollout on a device whose bindings hold 1 MiB (setBindingLimit
// lowers the real device's) exits 69 naming what does not fit: scoring computes the logits of 64
// targets at a time, and even those need 12.3 MiB.

import { describe, expect, it } from 'vitest';
import { setBindingLimit } from '../gpu/runtime/limits';
import { GPT2_VOCAB } from '../rollout/tokenizer';
import { randomWeights } from '../model/random-weights';
import { validateRollout } from '../rollout/validate';
import { GPU_UNAVAILABLE_EXIT, withGpu } from './model-args';

describe('withGpu', () => {
  it('turns a model or batch over the adapter limits into exit 69 and one line', async () => {
    let err = '';
    const io = { out: () => undefined, err: (text: string) => void (err += text) };
    const weights = randomWeights({ vocabSize: GPT2_VOCAB, nEmbd: 64, nLayer: 1, nHead: 1, nPositions: 1024 }, 1);
    const tokens = Array.from({ length: 1024 }, (_, i) => (i * 31) % GPT2_VOCAB);
    const rollout = validateRollout(
      {
        format: 'memorywalker.rollout/v1',
        id: 'long',
        vocab: GPT2_VOCAB,
        tokenizer: 'gpt2',
        events: [
          { op: 'append', role: 'prompt', tokens: tokens.slice(0, 24) },
          { op: 'append', role: 'act', tokens: tokens.slice(24) },
        ],
      },
      { file: 'long.json' },
    );
    const code = await withGpu(io, 'drift', async ({ gpu, engine }) => {
      setBindingLimit(gpu.device, 2 ** 20);
      const model = engine.createGpuModel(gpu, weights); // wte (50257, 64) binds in 4 blocks of 1 MiB
      try {
        await engine.scoreRollouts(model, [rollout], ['logit-tree']);
      } finally {
        model.destroy();
      }
      return () => 0;
    });
    expect(code).toBe(GPU_UNAVAILABLE_EXIT);
    expect(err).toBe(
      'mw drift: model does not fit the adapter: the logits of 64 targets need a 12.3 MiB binding, the adapter binds at most 1.0 MiB (maxStorageBufferBindingSize)\n',
    );
  });
});
