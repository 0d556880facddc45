// Checkpoints that must be refused before anything large is allocated (absurd config, NaN weights,
// head sizes the kernels cannot run), and the weights/optimizer pair as one unit: bound by digest,
// rolled forward after a save cut between its renames, refused when mixed.

import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTENTION_MAX_HS } from '../gpu/kernels/attention/attention';
import {
  WEIGHTS_DIGEST_KEY,
  bindOptimizerState,
  checkPair,
  loadCheckpoint,
  loadCheckpointPair,
  saveCheckpoint,
  saveCheckpointPair,
  saveOptimizerState,
  sha256Hex,
  type OptimizerState,
} from './checkpoint';
import { nodeSha256, optimizerStatePath, readCheckpointPair, writeCheckpointPair } from './checkpoint-file';
import { CONFIG_LIMITS, type ModelConfig } from './config';
import { initWeights, parameterShapes } from './params';
import { readSafetensorsHeader, writeSafetensors } from '../util/safetensors';

const TINY: ModelConfig = { vocabSize: 7, nEmbd: 8, nLayer: 2, nHead: 2, nPositions: 5 };

function meta(c: ModelConfig): Record<string, string> {
  return { vocab_size: `${c.vocabSize}`, n_embd: `${c.nEmbd}`, n_layer: `${c.nLayer}`, n_head: `${c.nHead}`, n_positions: `${c.nPositions}` };
}

/** A checkpoint of TINY's tensors whose metadata claims `config`. */
function claiming(config: ModelConfig): Uint8Array {
  const w = initWeights(TINY, 1);
  return writeSafetensors(
    parameterShapes(TINY).map(({ name, shape }) => ({ name: `transformer.${name}`, shape, data: w.tensors.get(name)! })),
    meta(config),
  );
}

function state(config: ModelConfig, step: number, fill: number): OptimizerState {
  const m = new Map<string, Float32Array>();
  const v = new Map<string, Float32Array>();
  for (const { name, shape } of parameterShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    m.set(name, new Float32Array(n).fill(fill));
    v.set(name, new Float32Array(n).fill(fill * fill));
  }
  return { step, m, v };
}

describe('checkpoints refused before allocating', () => {
  it('refuses absurd metadata at once, naming the field and its limit', () => {
    const cases: [Partial<ModelConfig>, string][] = [
      [{ nLayer: 1e9 }, `n_layer 1000000000 is above the limit of ${CONFIG_LIMITS.nLayer}`],
      [{ nHead: 1024, nEmbd: 4096 }, `n_head 1024 is above the limit of ${CONFIG_LIMITS.nHead}`],
      [{ nEmbd: 1 << 20 }, `n_embd 1048576 is above the limit of ${CONFIG_LIMITS.nEmbd}`],
      [{ nPositions: 1e12 }, `n_positions 1000000000000 is above the limit of ${CONFIG_LIMITS.nPositions}`],
      [{ vocabSize: 2 ** 40 }, `vocab_size 1099511627776 is above the limit of ${CONFIG_LIMITS.vocabSize}`],
      [{ nHead: 8 }, 'head size 1 (n_embd 8 / n_head 8) is not a multiple of 4 in 4..64'],
      [{ nEmbd: 160, nHead: 2 }, 'head size 80 (n_embd 160 / n_head 2) is not a multiple of 4 in 4..64'],
    ];
    for (const [change, message] of cases) {
      const started = performance.now();
      expect(() => loadCheckpoint(claiming({ ...TINY, ...change })), JSON.stringify(change)).toThrow(`checkpoint: config out of bounds: ${message}`);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });

  it('refuses a layer index inferred from tensor names past the limit', () => {
    const w = initWeights(TINY, 1);
    const { n_layer: _drop, ...rest } = meta(TINY);
    const tensors = parameterShapes(TINY).map(({ name, shape }) => ({ name, shape, data: w.tensors.get(name)! }));
    tensors.push({ name: 'h.999999999.ln_1.weight', shape: [8], data: new Float32Array(8) });
    expect(() => loadCheckpoint(writeSafetensors(tensors, rest))).toThrow('n_layer 1000000000 is above the limit of 256');
  });

  it('keeps the head-size limit equal to the attention kernel MAX_HS', () => {
    expect(CONFIG_LIMITS.maxHeadSize).toBe(ATTENTION_MAX_HS);
  });

  it('refuses NaN and infinite weights and moments, naming the tensor and index', () => {
    for (const bad of [NaN, Infinity, -Infinity]) {
      const w = initWeights(TINY, 2);
      w.tensors.get('h.1.attn.c_proj.weight')![5] = bad;
      expect(() => loadCheckpoint(saveCheckpoint(w))).toThrow(
        `checkpoint: tensor transformer.h.1.attn.c_proj.weight holds ${bad} at index 5: every value must be finite`,
      );
    }
    const s = state(TINY, 3, 0.5);
    s.v.get('ln_f.bias')![2] = NaN;
    const pair = saveCheckpointPair(initWeights(TINY, 2), s);
    expect(() => loadCheckpointPair(pair)).toThrow('tensor v.transformer.ln_f.bias holds NaN at index 2');
  });
});

describe('the checkpoint pair', () => {
  it('binds the optimizer file to the exact weights bytes, and refuses another pairing', () => {
    const a = saveCheckpointPair(initWeights(TINY, 1), state(TINY, 4, 0.1), { seed: '1' });
    const b = saveCheckpointPair(initWeights(TINY, 2), state(TINY, 5, 0.2));
    expect(readSafetensorsHeader(a.optimizer).metadata?.[WEIGHTS_DIGEST_KEY]).toBe(sha256Hex(a.weights));
    expect(nodeSha256(a.weights)).toBe(sha256Hex(a.weights));
    expect(readSafetensorsHeader(a.weights).metadata?.step).toBe('4');
    const loaded = loadCheckpointPair(a);
    expect(loaded.optimizer?.step).toBe(4);
    expect(checkPair(a.weights, a.optimizer)).toEqual({ ok: true, bound: true });
    expect(() => loadCheckpointPair({ weights: b.weights, optimizer: a.optimizer })).toThrow(
      `checkpoint: the optimizer state (step 4) was saved with other weights (${WEIGHTS_DIGEST_KEY} differs)`,
    );
  });

  it('accepts an older optimizer file without a digest when the steps agree, refuses it when they differ', () => {
    const weights = initWeights(TINY, 3);
    const legacy = saveOptimizerState(TINY, state(TINY, 7, 0.1));
    expect(checkPair(saveCheckpoint(weights, { step: '7' }), legacy)).toEqual({ ok: true, bound: false });
    expect(checkPair(saveCheckpoint(weights), legacy)).toEqual({ ok: true, bound: false });
    expect(checkPair(saveCheckpoint(weights, { step: '8' }), legacy)).toEqual({
      ok: false,
      reason: 'the optimizer state is at step 7, the weights at step 8: a mixed pair, e.g. from an interrupted save',
    });
  });

  it('binds optimizer bytes made elsewhere without changing their data', () => {
    const weights = saveCheckpoint(initWeights(TINY, 4), { step: '2' });
    const s = state(TINY, 2, 0.3);
    const bound = bindOptimizerState({ weights, optimizer: saveOptimizerState(TINY, s) });
    expect(checkPair(weights, bound.optimizer)).toEqual({ ok: true, bound: true });
    const back = loadCheckpointPair(bound).optimizer!;
    expect(back.step).toBe(2);
    expect(Array.from(back.m.get('wte.weight')!.subarray(0, 3))).toEqual(Array.from(s.m.get('wte.weight')!.subarray(0, 3)));
    expect(new DataView(bound.optimizer.buffer).getUint32(0, true) % 8).toBe(0);
  });
});

describe('checkpoint pair files', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'mw-pair-'));
  const partials = (d: string) => readdirSync(d).filter((f) => f.endsWith('.partial'));

  it('rolls forward a save cut between its two renames, refuses a mixed pair without its partial', () => {
    const d = dir();
    const path = join(d, 'run.safetensors');
    writeCheckpointPair(path, saveCheckpointPair(initWeights(TINY, 1), state(TINY, 1, 0.1)));
    const oldOptimizer = readFileSync(optimizerStatePath(path));
    // The next save, cut after its weights rename: new weights, old optimizer, new optimizer .partial.
    const next = saveCheckpointPair(initWeights(TINY, 2), state(TINY, 2, 0.2));
    writeFileSync(path, next.weights);
    writeFileSync(`${optimizerStatePath(path)}.4242.partial`, next.optimizer);
    const pair = readCheckpointPair(path);
    expect(pair.recovered).toBe(true);
    expect(pair.optimizer?.step).toBe(2);
    expect(partials(d)).toEqual([]);
    // The same cut without the partial (lost): refused, naming the optimizer file.
    writeFileSync(optimizerStatePath(path), oldOptimizer);
    expect(() => readCheckpointPair(path)).toThrow(`${optimizerStatePath(path)}: checkpoint: the optimizer state (step 1) was saved with other weights`);
  });

  it('removes stale .partial files at the next save and leaves exactly the pair', () => {
    const d = dir();
    const path = join(d, 'run.safetensors');
    writeFileSync(`${path}.111.partial`, 'cut short');
    writeFileSync(`${optimizerStatePath(path)}.222.partial`, 'cut short');
    writeFileSync(join(d, 'other.safetensors.333.partial'), 'not ours');
    writeCheckpointPair(path, saveCheckpointPair(initWeights(TINY, 5), state(TINY, 9, 0.1)));
    expect(readdirSync(d).sort()).toEqual(['other.safetensors.333.partial', 'run.optim.safetensors', 'run.safetensors']);
    expect(readCheckpointPair(path).optimizer?.step).toBe(9);
  });

  it('binds a trainer-made optimizer file on write, and drops a stale optimizer file when saving weights alone', () => {
    const d = dir();
    const path = join(d, 'run.safetensors');
    const weights = saveCheckpoint(initWeights(TINY, 6), { step: '3' });
    writeCheckpointPair(path, { weights, optimizer: saveOptimizerState(TINY, state(TINY, 3, 0.1)) });
    expect(readSafetensorsHeader(new Uint8Array(readFileSync(optimizerStatePath(path)))).metadata?.[WEIGHTS_DIGEST_KEY]).toBe(nodeSha256(weights));
    writeCheckpointPair(path, { weights: saveCheckpoint(initWeights(TINY, 7)) });
    expect(existsSync(optimizerStatePath(path))).toBe(false);
    expect(readCheckpointPair(path).optimizer).toBeNull();
  });
});
