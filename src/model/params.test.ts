import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS, presetConfig, validateConfig } from './config';
import { PARAMETER_ALIGNMENT, initWeights, packParameters, parameterCount, parameterLayout, parameterShapes, unpackParameters } from './params';

describe('config', () => {
  it('has the default and tiny presets', () => {
    expect(presetConfig('default')).toEqual({ vocabSize: 272, nEmbd: 128, nLayer: 4, nHead: 4, nPositions: 1024 });
    expect(presetConfig('tiny')).toEqual({ vocabSize: 272, nEmbd: 32, nLayer: 2, nHead: 2, nPositions: 128 });
    for (const c of Object.values(MODEL_PRESETS)) expect(validateConfig(c)).toBe(c);
  });

  it('rejects invalid configs listing every problem', () => {
    expect(() => validateConfig({ vocabSize: 272, nEmbd: 30, nLayer: 2, nHead: 4, nPositions: 8 })).toThrow(
      'invalid model config: nEmbd (30) must be divisible by nHead (4)',
    );
    expect(() => validateConfig({ vocabSize: 0, nEmbd: 32, nLayer: 1.5, nHead: 2, nPositions: 8 })).toThrow(
      'invalid model config: vocabSize must be a positive integer, got 0; nLayer must be a positive integer, got 1.5',
    );
  });
});

describe('parameterShapes', () => {
  it('lists GPT-2 tensors in state_dict order with Conv1D shapes', () => {
    const shapes = parameterShapes({ vocabSize: 272, nEmbd: 128, nLayer: 1, nHead: 4, nPositions: 1024 });
    expect(shapes).toEqual([
      { name: 'wte.weight', shape: [272, 128] },
      { name: 'wpe.weight', shape: [1024, 128] },
      { name: 'h.0.ln_1.weight', shape: [128] },
      { name: 'h.0.ln_1.bias', shape: [128] },
      { name: 'h.0.attn.c_attn.weight', shape: [128, 384] },
      { name: 'h.0.attn.c_attn.bias', shape: [384] },
      { name: 'h.0.attn.c_proj.weight', shape: [128, 128] },
      { name: 'h.0.attn.c_proj.bias', shape: [128] },
      { name: 'h.0.ln_2.weight', shape: [128] },
      { name: 'h.0.ln_2.bias', shape: [128] },
      { name: 'h.0.mlp.c_fc.weight', shape: [128, 512] },
      { name: 'h.0.mlp.c_fc.bias', shape: [512] },
      { name: 'h.0.mlp.c_proj.weight', shape: [512, 128] },
      { name: 'h.0.mlp.c_proj.bias', shape: [128] },
      { name: 'ln_f.weight', shape: [128] },
      { name: 'ln_f.bias', shape: [128] },
    ]);
  });

  it('counts the parameters of the default model', () => {
    // wte 272·128 + wpe 1024·128 + 4 · (12·128² + 13·128) + 2·128
    expect(parameterCount(presetConfig('default'))).toBe(34816 + 131072 + 4 * (196608 + 1664) + 256);
  });
});

describe('parameterLayout', () => {
  it('places tensors in order at 256-byte aligned offsets without overlap', () => {
    const layout = parameterLayout(presetConfig('tiny'));
    let cursor = 0;
    for (const e of layout.entries) {
      expect(e.offset % PARAMETER_ALIGNMENT).toBe(0);
      expect(e.offset).toBeGreaterThanOrEqual(cursor);
      expect(e.offset - cursor).toBeLessThan(PARAMETER_ALIGNMENT);
      cursor = e.offset + e.size;
    }
    expect(layout.totalSize).toBe(Math.ceil(cursor / PARAMETER_ALIGNMENT) * PARAMETER_ALIGNMENT);
    expect(layout.byName.get('h.1.ln_2.bias')).toBe(layout.entries[2 + 12 + 7]);
  });

  it('pack and unpack round-trip exactly, padding stays zero', () => {
    const config = presetConfig('tiny');
    const w = initWeights(config, 3);
    const flat = packParameters(w);
    const layout = parameterLayout(config);
    const used = new Uint8Array(flat.length);
    for (const e of layout.entries) used.fill(1, e.offset, e.offset + e.size);
    expect(flat.every((v, i) => used[i] === 1 || v === 0)).toBe(true);
    const back = unpackParameters(config, flat);
    for (const [name, t] of w.tensors) expect(back.tensors.get(name), name).toEqual(t);
    expect(() => unpackParameters(config, flat.subarray(1))).toThrow(`buffer has ${flat.length - 1} floats, layout needs ${flat.length}`);
  });
});

describe('initWeights', () => {
  const config = presetConfig('default');
  const w = initWeights(config, 1);

  function std(t: Float32Array): number {
    const m = t.reduce((a, b) => a + b, 0) / t.length;
    return Math.sqrt(t.reduce((a, b) => a + (b - m) ** 2, 0) / t.length);
  }

  it('draws weights with GPT-2 standard deviations', () => {
    // Relative standard error of a sample std over n values is 1/sqrt(2n): ≤ 0.5 % here; allow 3 %.
    expect(Math.abs(std(w.tensors.get('wte.weight')!) / 0.02 - 1)).toBeLessThan(0.03);
    expect(Math.abs(std(w.tensors.get('wpe.weight')!) / 0.02 - 1)).toBeLessThan(0.03);
    expect(Math.abs(std(w.tensors.get('h.2.attn.c_attn.weight')!) / 0.02 - 1)).toBeLessThan(0.03);
    expect(Math.abs(std(w.tensors.get('h.2.mlp.c_fc.weight')!) / 0.02 - 1)).toBeLessThan(0.03);
    const residual = 0.02 / Math.sqrt(8);
    expect(Math.abs(std(w.tensors.get('h.3.attn.c_proj.weight')!) / residual - 1)).toBeLessThan(0.03);
    expect(Math.abs(std(w.tensors.get('h.0.mlp.c_proj.weight')!) / residual - 1)).toBeLessThan(0.03);
  });

  it('sets biases to 0 and LayerNorm weights to 1', () => {
    for (const [name, t] of w.tensors) {
      if (name.endsWith('.bias'))
        expect(
          t.every((v) => v === 0),
          name,
        ).toBe(true);
      if (/ln_(\d|f)\.weight$/.test(name))
        expect(
          t.every((v) => v === 1),
          name,
        ).toBe(true);
    }
  });

  it('is a function of the seed', () => {
    const small = presetConfig('tiny');
    expect(initWeights(small, 9).tensors.get('h.1.mlp.c_fc.weight')).toEqual(initWeights(small, 9).tensors.get('h.1.mlp.c_fc.weight'));
    expect(initWeights(small, 9).tensors.get('wte.weight')).not.toEqual(initWeights(small, 10).tensors.get('wte.weight'));
  });
});
