import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type LoadOptions,
  type OptimizerState,
  loadCheckpoint,
  loadOptimizerState,
  saveCheckpoint,
  saveCheckpointPair,
  saveOptimizerState,
} from './checkpoint';
import { optimizerStatePath, readCheckpointPair, writeCheckpointPair } from './checkpoint-file';
import { type ModelConfig, presetConfig } from './config';
import { type ModelWeights, initWeights, parameterShapes } from './params';
import { readSafetensorsHeader, readTensor, writeSafetensors } from '../util/safetensors';

const TINY: ModelConfig = { vocabSize: 7, nEmbd: 8, nLayer: 2, nHead: 2, nPositions: 5 };

/** A hand-made safetensors file: any header object, any data bytes. */
function rawFile(header: object, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

/** Rebuild a checkpoint with tensors renamed, reshaped, dropped or added, and chosen metadata. */
function rewrite(
  weights: ModelWeights,
  edit: (t: { name: string; shape: number[]; data: Float32Array }[]) => { name: string; shape: number[]; data: Float32Array }[],
  metadata?: Record<string, string>,
): Uint8Array {
  const tensors = parameterShapes(weights.config).map(({ name, shape }) => ({ name: `transformer.${name}`, shape, data: weights.tensors.get(name)! }));
  return writeSafetensors(edit(tensors), metadata);
}

function meta(c: ModelConfig): Record<string, string> {
  return { vocab_size: `${c.vocabSize}`, n_embd: `${c.nEmbd}`, n_layer: `${c.nLayer}`, n_head: `${c.nHead}`, n_positions: `${c.nPositions}` };
}

function expectSameWeights(got: ModelWeights, want: ModelWeights): void {
  expect(got.config).toEqual(want.config);
  expect([...got.tensors.keys()]).toEqual([...want.tensors.keys()]);
  for (const [name, t] of want.tensors) {
    const g = got.tensors.get(name)!;
    const bad = t.findIndex((v, i) => !Object.is(v, g[i]));
    expect(bad, `${name}: first differing element`).toBe(-1);
  }
}

describe('saveCheckpoint / loadCheckpoint', () => {
  it('round-trips bit-exactly, extreme finite values included', () => {
    const w = initWeights(presetConfig('default'), 5);
    const special = [0, -0, 1e-45, -1e-45, 1.1754942e-38, 3.4028234663852886e38, -3.4028234663852886e38, 1 / 3, Math.PI];
    w.tensors.get('h.3.mlp.c_proj.bias')!.set(special);
    const back = loadCheckpoint(saveCheckpoint(w));
    expectSameWeights(back, w);
    expect(Object.is(back.tensors.get('h.3.mlp.c_proj.bias')![1], -0)).toBe(true);
  });

  it("writes exactly docs/model.md's names, shapes, F32 and the config in __metadata__ (default config)", () => {
    const config = presetConfig('default');
    const bytes = saveCheckpoint(initWeights(config, 1), { seed: '1' });
    const header = readSafetensorsHeader(bytes);
    const [V, C, P] = [272, 128, 1024];
    const want: [string, number[]][] = [
      ['transformer.wte.weight', [V, C]],
      ['transformer.wpe.weight', [P, C]],
    ];
    for (let i = 0; i < 4; i++) {
      want.push(
        [`transformer.h.${i}.ln_1.weight`, [C]],
        [`transformer.h.${i}.ln_1.bias`, [C]],
        [`transformer.h.${i}.attn.c_attn.weight`, [C, 3 * C]],
        [`transformer.h.${i}.attn.c_attn.bias`, [3 * C]],
        [`transformer.h.${i}.attn.c_proj.weight`, [C, C]],
        [`transformer.h.${i}.attn.c_proj.bias`, [C]],
        [`transformer.h.${i}.ln_2.weight`, [C]],
        [`transformer.h.${i}.ln_2.bias`, [C]],
        [`transformer.h.${i}.mlp.c_fc.weight`, [C, 4 * C]],
        [`transformer.h.${i}.mlp.c_fc.bias`, [4 * C]],
        [`transformer.h.${i}.mlp.c_proj.weight`, [4 * C, C]],
        [`transformer.h.${i}.mlp.c_proj.bias`, [C]],
      );
    }
    want.push(['transformer.ln_f.weight', [C]], ['transformer.ln_f.bias', [C]]);
    expect([...header.entries.values()].map((e) => [e.name, e.shape])).toEqual(want);
    expect([...header.entries.values()].every((e) => e.dtype === 'F32')).toBe(true);
    expect(header.metadata).toEqual({
      seed: '1',
      format: 'pt',
      producer: 'memorywalker-workbench',
      model_type: 'gpt2',
      vocab_size: '272',
      n_embd: '128',
      n_layer: '4',
      n_head: '4',
      n_positions: '1024',
    });
    // Data starts 8-byte aligned and the tensors tile the data region without holes.
    const headerLength = new DataView(bytes.buffer).getUint32(0, true);
    expect(headerLength % 8).toBe(0);
    const entries = [...header.entries.values()];
    expect(entries[0].begin).toBe(8 + headerLength);
    entries.slice(1).forEach((e, i) => expect(e.begin).toBe(entries[i].end));
    expect(entries[entries.length - 1].end).toBe(bytes.length);
    expect(() => saveCheckpoint(initWeights(TINY, 1), { n_head: '3' })).toThrow('metadata key n_head is reserved');
  });

  it('names the byte range of a truncated file', () => {
    const bytes = saveCheckpoint(initWeights(TINY, 2));
    const header = readSafetensorsHeader(bytes);
    const last = [...header.entries.values()].at(-1)!; // transformer.ln_f.bias
    expect(() => loadCheckpoint(bytes.subarray(0, bytes.length - 3))).toThrow(
      `safetensors: truncated file: tensor transformer.ln_f.bias needs bytes ${last.begin}..${last.end}, but the file has ${bytes.length - 3} bytes`,
    );
    const headerEnd = header.entries.get('transformer.wte.weight')!.begin;
    expect(() => loadCheckpoint(bytes.subarray(0, 100))).toThrow(
      `safetensors: truncated file: the header needs bytes 8..${headerEnd}, but the file has 100 bytes`,
    );
    expect(() => loadCheckpoint(bytes.subarray(0, 5))).toThrow('safetensors: truncated file: 5 bytes, but the header length needs bytes 0..8');
  });

  it('names the tensor, expected and actual shape of a wrong-shape file', () => {
    const w = initWeights(TINY, 3);
    const bytes = rewrite(w, (ts) => ts.map((t) => (t.name === 'transformer.h.1.attn.c_attn.weight' ? { ...t, shape: [24, 8] } : t)), meta(TINY));
    expect(() => loadCheckpoint(bytes)).toThrow('checkpoint: tensor transformer.h.1.attn.c_attn.weight: expected shape [8, 24], got [24, 8]');
  });

  it('names a missing tensor and an unexpected one', () => {
    const w = initWeights(TINY, 4);
    const missing = rewrite(w, (ts) => ts.filter((t) => t.name !== 'transformer.h.1.mlp.c_fc.bias'), meta(TINY));
    expect(() => loadCheckpoint(missing)).toThrow('checkpoint: missing tensor transformer.h.1.mlp.c_fc.bias');
    const extra = rewrite(w, (ts) => [...ts, { name: 'transformer.h.2.ln_1.weight', shape: [8], data: new Float32Array(8) }], meta(TINY));
    expect(() => loadCheckpoint(extra)).toThrow('checkpoint: unexpected tensor transformer.h.2.ln_1.weight (not a parameter of GPT-2 with 2 layers)');
    const twice = rewrite(w, (ts) => [...ts, { name: 'ln_f.bias', shape: [8], data: new Float32Array(8) }], meta(TINY));
    expect(() => loadCheckpoint(twice)).toThrow('checkpoint: tensor ln_f.bias appears twice (transformer.ln_f.bias and ln_f.bias)');
  });

  it('loads names without the prefix, ignores GPT-2 buffers and a tied lm_head, infers the config from shapes', () => {
    const w = initWeights(TINY, 6);
    const bytes = rewrite(w, (ts) => [
      ...ts.map((t) => ({ ...t, name: t.name.replace('transformer.', '') })),
      { name: 'h.0.attn.bias', shape: [1, 1, 5, 5], data: new Float32Array(25).fill(1) },
      { name: 'h.1.attn.masked_bias', shape: [], data: new Float32Array([-1e4]) },
      { name: 'lm_head.weight', shape: [7, 8], data: w.tensors.get('wte.weight')! },
    ]);
    expect(readSafetensorsHeader(bytes).metadata).toBeNull();
    expectSameWeights(loadCheckpoint(bytes, { nHead: 2 }), w);
    expect(() => loadCheckpoint(bytes)).toThrow('n_head is not in __metadata__ and n_embd 8 is not a multiple of 64; pass nHead');
  });

  it('rejects an untied lm_head', () => {
    const w = initWeights(TINY, 7);
    const head = w.tensors.get('wte.weight')!.map((v) => v + 1);
    const bytes = rewrite(w, (ts) => [...ts, { name: 'lm_head.weight', shape: [7, 8], data: head }], meta(TINY));
    expect(() => loadCheckpoint(bytes)).toThrow('checkpoint: lm_head.weight differs from wte.weight: an untied output head is not supported');
  });

  it('refuses a vocabulary larger than allowed', () => {
    const bytes = saveCheckpoint(initWeights(TINY, 8));
    const options: LoadOptions = { maxVocab: 6 };
    expect(() => loadCheckpoint(bytes, options)).toThrow('checkpoint: vocabulary 7 is larger than the allowed 6');
    expect(loadCheckpoint(bytes, { maxVocab: 7 }).config).toEqual(TINY);
  });

  it('reports malformed headers and offsets clearly', () => {
    const junk = new Uint8Array(8 + 5);
    new DataView(junk.buffer).setUint32(0, 5, true);
    junk.set(new TextEncoder().encode('{"a":'), 8);
    expect(() => loadCheckpoint(junk)).toThrow('safetensors: header (bytes 8..13) is not valid JSON');
    const f32 = (name: string, begin: number) => ({ [name]: { dtype: 'F32', shape: [2], data_offsets: [begin, begin + 8] } });
    expect(() => loadCheckpoint(rawFile({ ...f32('a', 0), ...f32('b', 4) }, new Uint8Array(12)))).toThrow(
      /safetensors: tensors a \(bytes \d+\.\.\d+\) and b \(bytes \d+\.\.\d+\) overlap/,
    );
    expect(() => loadCheckpoint(rawFile({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8)))).toThrow(
      'safetensors: tensor a: data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12',
    );
    expect(() => loadCheckpoint(rawFile({ a: { dtype: 'F7', shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1)))).toThrow(
      'safetensors: tensor a: unknown dtype "F7"',
    );
    expect(() => loadCheckpoint(rawFile({ __metadata__: { n_layer: 2 } }))).toThrow('safetensors: __metadata__.n_layer is not a string');
  });

  it('rejects a parameter stored in an unsupported dtype, naming it', () => {
    const w = initWeights(TINY, 9);
    const good = saveCheckpoint(w);
    const header = JSON.parse(new TextDecoder().decode(good.subarray(8, 8 + new DataView(good.buffer).getUint32(0, true))));
    header['transformer.ln_f.bias'].dtype = 'I32'; // same byte size, so the offsets stay valid
    const dataStart = 8 + new DataView(good.buffer).getUint32(0, true);
    expect(() => loadCheckpoint(rawFile(header, good.subarray(dataStart)))).toThrow(
      'safetensors: tensor transformer.ln_f.bias: unsupported dtype I32 (readable: F32, F16, BF16, F64)',
    );
  });

  it('converts F16, BF16 and F64 to float32', () => {
    const half = [0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000, 0x3555];
    const bf16 = [0x3f80, 0xc040, 0x4049];
    const data = new Uint8Array(14 + 6 + 16);
    const dv = new DataView(data.buffer);
    half.forEach((h, i) => dv.setUint16(2 * i, h, true));
    bf16.forEach((h, i) => dv.setUint16(14 + 2 * i, h, true));
    dv.setFloat64(20, 0.1, true);
    dv.setFloat64(28, -2.5, true);
    const bytes = rawFile(
      {
        h: { dtype: 'F16', shape: [7], data_offsets: [0, 14] },
        b: { dtype: 'BF16', shape: [3], data_offsets: [14, 20] },
        d: { dtype: 'F64', shape: [2], data_offsets: [20, 36] },
      },
      data,
    );
    const header = readSafetensorsHeader(bytes);
    const read = (n: string) => Array.from(readTensor(bytes, header.entries.get(n)!));
    expect(read('h')).toEqual([1, -2, 65504, 2 ** -24, Infinity, -0, 0.333251953125]);
    expect(read('b')).toEqual([1, -3, 3.140625]);
    expect(read('d')).toEqual([Math.fround(0.1), -2.5]);
  });
});

describe('a file written by the reference safetensors library (fixtures/hf-gpt2-tiny.safetensors)', () => {
  const bytes = new Uint8Array(readFileSync(new URL('./fixtures/hf-gpt2-tiny.safetensors', import.meta.url)));

  it('loads like a published GPT-2 file: no prefix, no config metadata, buffers, tied head, F16 tensors', () => {
    const w = loadCheckpoint(bytes, { nHead: 2 });
    expect(w.config).toEqual({ vocabSize: 5, nEmbd: 8, nLayer: 1, nHead: 2, nPositions: 4 });
    // Values as make-hf-gpt2-tiny.py wrote them.
    parameterShapes(w.config).forEach(({ name }, i) => {
      const t = w.tensors.get(name)!;
      const f16 = name === 'h.0.ln_1.weight' || name === 'h.0.mlp.c_fc.bias';
      const want = Array.from(t, (_, k) => (f16 ? ((k % 16) - 8) / 4 : Math.fround(((k * 0.37 + i) % 3) - 1.5)));
      expect(Array.from(t), name).toEqual(want);
    });
  });

  it('round-trips through our writer', () => {
    const w = loadCheckpoint(bytes, { nHead: 2 });
    expectSameWeights(loadCheckpoint(saveCheckpoint(w)), w);
  });
});

describe('optimizer state', () => {
  function state(config: ModelConfig, seed: number): OptimizerState {
    const m = initWeights(config, seed).tensors;
    const v = new Map([...initWeights(config, seed + 1).tensors].map(([n, t]) => [n, t.map((x) => x * x)]));
    return { step: 123, m, v };
  }

  it('round-trips m, v and step bit-exactly', () => {
    const s = state(TINY, 10);
    const back = loadOptimizerState(saveOptimizerState(TINY, s), TINY);
    expect(back.step).toBe(123);
    for (const moment of ['m', 'v'] as const) {
      for (const [name, t] of s[moment]) expect(Array.from(back[moment].get(name)!), `${moment} ${name}`).toEqual(Array.from(t));
    }
  });

  it('refuses a state saved for another config, a checkpoint, and a missing moment', () => {
    const bytes = saveOptimizerState(TINY, state(TINY, 11));
    expect(() => loadOptimizerState(bytes, { ...TINY, nLayer: 3 })).toThrow('checkpoint: optimizer state was saved for n_layer 2, the model has 3');
    expect(() => loadOptimizerState(saveCheckpoint(initWeights(TINY, 1)), TINY)).toThrow('not an optimizer state file (__metadata__.format is "pt"');
    const s = state(TINY, 12);
    s.v.delete('wpe.weight');
    expect(() => saveOptimizerState(TINY, s)).toThrow('checkpoint: optimizer state: missing v for wpe.weight');
  });
});

describe('checkpoint files (Node)', () => {
  it('writes the checkpoint and its optimizer state beside it, and reads both back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-ckpt-'));
    try {
      const path = join(dir, 'run.safetensors');
      const w = initWeights(TINY, 13);
      expect(optimizerStatePath(path)).toBe(join(dir, 'run.optim.safetensors'));
      writeCheckpointPair(path, { weights: saveCheckpoint(w, { seed: '5' }) });
      expect(readCheckpointPair(path)).toMatchObject({ optimizer: null, recovered: false, metadata: { seed: '5' } });
      const opt = { step: 4, m: w.tensors, v: w.tensors };
      writeCheckpointPair(path, saveCheckpointPair(w, opt, { seed: '5' }));
      const back = readCheckpointPair(path);
      expectSameWeights(back.weights, w);
      expect(back.optimizer!.step).toBe(4);
      expect(back.metadata).toMatchObject({ seed: '5', step: '4' });
      expect(() => readCheckpointPair(join(dir, 'run.optim.safetensors'))).toThrow(
        `${join(dir, 'run.optim.safetensors')}: checkpoint: missing tensor transformer.wte.weight`,
      );
      expect(() => readCheckpointPair(join(dir, 'none.safetensors'))).toThrow(`${join(dir, 'none.safetensors')}: no such file`);
      expect(() => readCheckpointPair(dir)).toThrow(`${dir}: not a file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
