import { describe, expect, it } from 'vitest';
import { checkModelFits } from './model';
import { MODEL_PRESETS } from '../model/config';

const adapter = (mib: number) => ({ limits: { maxStorageBufferBindingSize: mib * 2 ** 20, maxBufferSize: mib * 2 ** 20 } }) as unknown as GPUDevice;

describe('checkModelFits', () => {
  it('accepts the default config and a 4096-row batch within 128 MiB bindings', () => {
    expect(() => checkModelFits(MODEL_PRESETS.default, adapter(128), 4096)).not.toThrow();
  });

  it('refuses a batch whose largest buffer exceeds the binding limit, naming the limit', () => {
    // (N, 4C) floats: 40000 · 512 · 4 B = 78 MiB > 64 MiB.
    expect(() => checkModelFits(MODEL_PRESETS.default, adapter(64), 40_000)).toThrow(
      'model does not fit the adapter: a 40000-row batch needs a 78.1 MiB binding (its MLP activations), the adapter binds at most 64.0 MiB (maxStorageBufferBindingSize)',
    );
  });

  describe('GPT-2 124M (its 147.2 MiB token embedding binds in blocks)', () => {
    const gpt2 = { vocabSize: 50257, nEmbd: 768, nLayer: 12, nHead: 12, nPositions: 1024 };
    const device = (binding: number, buffer: number) =>
      ({ limits: { maxStorageBufferBindingSize: binding * 2 ** 20, maxBufferSize: buffer * 2 ** 20 } }) as unknown as GPUDevice;

    it('fits 128 MiB bindings up to 667 rows, whose logits bind whole', () => {
      expect(() => checkModelFits(gpt2, device(128, 1024), 667)).not.toThrow();
      expect(() => checkModelFits(gpt2, device(128, 1024), 1024)).toThrow(
        'model does not fit the adapter: a 1024-row batch needs a 196.3 MiB binding (its logits), the adapter binds at most 128.0 MiB (maxStorageBufferBindingSize)',
      );
      expect(() => checkModelFits(gpt2, device(1024, 1024), 1024)).not.toThrow();
    });

    it('needs one buffer for its parameters', () => {
      expect(() => checkModelFits(gpt2, device(128, 256), 1)).toThrow(
        'model does not fit the adapter: its parameters need one 474.7 MiB buffer, the adapter allows at most 256.0 MiB (maxBufferSize)',
      );
    });
  });

  it('refuses head sizes the attention kernels do not take', () => {
    const config = { ...MODEL_PRESETS.default, nEmbd: 256, nHead: 2 }; // head size 128
    expect(() => checkModelFits(config, adapter(128), 16)).toThrow(/head size 128/);
  });
});
