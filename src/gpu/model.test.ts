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
    expect(() => checkModelFits(MODEL_PRESETS.default, adapter(64), 40_000)).toThrow(/maxStorageBufferBindingSize is 64\.0 MiB/);
  });

  it('refuses head sizes the attention kernels do not take', () => {
    const config = { ...MODEL_PRESETS.default, nEmbd: 256, nHead: 2 }; // head size 128
    expect(() => checkModelFits(config, adapter(128), 16)).toThrow(/head size 128/);
  });
});
