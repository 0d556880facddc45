// GPT-2 checkpoints (docs/model.md): safetensors with Hugging Face names (`transformer.` prefix), shapes
// and layouts, config in `__metadata__`, so PyTorch's GPT2LMHeadModel loads what we save and we load
// GPT-2-architecture files trained elsewhere. AdamW state goes in a second file of the same kind.

import { type ModelConfig, validateConfig } from './config';
import { type ModelWeights, parameterShapes } from './params';
import { type SafetensorsHeader, type TensorEntry, readSafetensorsHeader, readTensor, writeSafetensors } from './safetensors';

export const HF_PREFIX = 'transformer.';
export const PRODUCER = 'memorywalker-workbench';

/** `__metadata__` keys of the config (Hugging Face GPT2Config names). */
const CONFIG_KEYS = {
  vocabSize: 'vocab_size',
  nEmbd: 'n_embd',
  nLayer: 'n_layer',
  nHead: 'n_head',
  nPositions: 'n_positions',
} as const satisfies Record<keyof ModelConfig, string>;

/** Keys written by us; caller metadata may not override them. */
const RESERVED = new Set<string>([...Object.values(CONFIG_KEYS), 'format', 'producer', 'model_type']);

function fail(message: string): never {
  throw new Error(`checkpoint: ${message}`);
}

function configMetadata(config: ModelConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, key] of Object.entries(CONFIG_KEYS)) out[key] = String(config[field as keyof ModelConfig]);
  return out;
}

function checkExtra(extra: Record<string, string>): void {
  for (const k of Object.keys(extra)) if (RESERVED.has(k)) fail(`metadata key ${k} is reserved`);
}

/**
 * The checkpoint file. `format: "pt"` is what transformers' from_pretrained requires of a
 * safetensors file; `lm_head.weight` is left out because it is tied to wte.
 */
export function saveCheckpoint(weights: ModelWeights, extraMetadata: Record<string, string> = {}): Uint8Array {
  checkExtra(extraMetadata);
  const config = validateConfig(weights.config);
  const tensors = parameterShapes(config).map(({ name, shape }) => {
    const data = weights.tensors.get(name);
    if (!data) fail(`missing tensor ${name}`);
    return { name: HF_PREFIX + name, shape, data };
  });
  return writeSafetensors(tensors, { ...extraMetadata, format: 'pt', producer: PRODUCER, model_type: 'gpt2', ...configMetadata(config) });
}

export interface LoadOptions {
  /** Refuse checkpoints whose vocabulary is larger (e.g. the byte tokenizer's 272). */
  maxVocab?: number;
  /** Head count for files without `__metadata__` (shapes cannot tell it); default C / 64 as in every published GPT-2. */
  nHead?: number;
}

/** GPT-2 buffers that are not parameters (causal mask and its fill value). */
const IGNORED = /^h\.\d+\.attn\.(bias|masked_bias)$/;

function strip(name: string): string {
  return name.startsWith(HF_PREFIX) ? name.slice(HF_PREFIX.length) : name;
}

function parseInt10(key: string, value: string): number {
  if (!/^\d+$/.test(value)) fail(`__metadata__.${key} = ${JSON.stringify(value)} is not a non-negative integer`);
  return Number(value);
}

/** Config from `__metadata__` where present, else from the shapes of wte, wpe and the layer count. */
function readConfig(header: SafetensorsHeader, byName: Map<string, TensorEntry>, options: LoadOptions): ModelConfig {
  const meta = header.metadata ?? {};
  const fromMeta = (field: keyof ModelConfig): number | undefined => {
    const key = CONFIG_KEYS[field];
    return key in meta ? parseInt10(key, meta[key]) : undefined;
  };
  const wte = byName.get('wte.weight');
  const wpe = byName.get('wpe.weight');
  const need = (entry: TensorEntry | undefined, name: string, field: keyof ModelConfig): TensorEntry => {
    if (!entry) fail(`missing tensor ${HF_PREFIX}${name} (needed to infer ${CONFIG_KEYS[field]}, absent from __metadata__)`);
    if (entry.shape.length !== 2) fail(`tensor ${entry.name}: expected 2 dimensions, got shape [${entry.shape.join(', ')}]`);
    return entry;
  };
  const vocabSize = fromMeta('vocabSize') ?? need(wte, 'wte.weight', 'vocabSize').shape[0];
  const nEmbd = fromMeta('nEmbd') ?? need(wte, 'wte.weight', 'nEmbd').shape[1];
  const nPositions = fromMeta('nPositions') ?? need(wpe, 'wpe.weight', 'nPositions').shape[0];
  let nLayer = fromMeta('nLayer');
  if (nLayer === undefined) {
    const layers = [...byName.keys()].map((n) => /^h\.(\d+)\./.exec(n)).filter((m) => m !== null);
    nLayer = layers.length ? Math.max(...layers.map((m) => Number(m[1]))) + 1 : 0;
    if (nLayer === 0) fail('no transformer layers (h.{i}.*) found');
  }
  let nHead = fromMeta('nHead') ?? options.nHead;
  if (nHead === undefined) {
    if (nEmbd % 64 !== 0) fail(`n_head is not in __metadata__ and n_embd ${nEmbd} is not a multiple of 64; pass nHead`);
    nHead = nEmbd / 64;
  }
  return { vocabSize, nEmbd, nLayer, nHead, nPositions };
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/**
 * Loads a GPT-2 checkpoint: names with or without `transformer.`, GPT-2's mask buffers ignored, a
 * tied `lm_head.weight` accepted (an untied one is an error: this model ties its head).
 */
export function loadCheckpoint(bytes: Uint8Array, options: LoadOptions = {}): ModelWeights {
  const header = readSafetensorsHeader(bytes);
  const byName = new Map<string, TensorEntry>();
  let lmHead: TensorEntry | undefined;
  for (const entry of header.entries.values()) {
    const name = strip(entry.name);
    if (IGNORED.test(name)) continue;
    if (name === 'lm_head.weight') {
      lmHead = entry;
      continue;
    }
    const twin = byName.get(name);
    if (twin) fail(`tensor ${name} appears twice (${twin.name} and ${entry.name})`);
    byName.set(name, entry);
  }

  const config = readConfig(header, byName, options);
  try {
    validateConfig(config);
  } catch (e) {
    fail((e as Error).message);
  }
  if (options.maxVocab !== undefined && config.vocabSize > options.maxVocab) {
    fail(`vocabulary ${config.vocabSize} is larger than the allowed ${options.maxVocab}`);
  }

  const tensors = new Map<string, Float32Array>();
  const expected = parameterShapes(config);
  for (const { name, shape } of expected) {
    const entry = byName.get(name);
    if (!entry) fail(`missing tensor ${HF_PREFIX}${name}`);
    if (!sameShape(entry.shape, shape)) {
      fail(`tensor ${entry.name}: expected shape [${shape.join(', ')}], got [${entry.shape.join(', ')}]`);
    }
    tensors.set(name, readTensor(bytes, entry));
  }
  const known = new Set(expected.map((p) => p.name));
  for (const [name, entry] of byName) if (!known.has(name)) fail(`unexpected tensor ${entry.name} (not a parameter of GPT-2 with ${config.nLayer} layers)`);

  if (lmHead) {
    const wte = tensors.get('wte.weight')!;
    if (!sameShape(lmHead.shape, [config.vocabSize, config.nEmbd]) || !sameValues(readTensor(bytes, lmHead), wte)) {
      fail(`${lmHead.name} differs from wte.weight: an untied output head is not supported (this model ties it to wte)`);
    }
  }
  return { config, tensors };
}

// ---------------------------------------------------------------------------------------------
// AdamW state: first and second moments per parameter and the step count.

export interface OptimizerState {
  step: number; // number of updates applied
  m: Map<string, Float32Array>; // first moment, per canonical parameter name
  v: Map<string, Float32Array>; // second moment
}

export const OPTIMIZER_FORMAT = 'memorywalker.adamw/v1';

/** Tensors `m.transformer.<name>` and `v.transformer.<name>`; step and config in `__metadata__`. */
export function saveOptimizerState(config: ModelConfig, state: OptimizerState, extraMetadata: Record<string, string> = {}): Uint8Array {
  checkExtra(extraMetadata);
  if ('step' in extraMetadata) fail('metadata key step is reserved');
  if (!Number.isSafeInteger(state.step) || state.step < 0) fail(`optimizer step must be a non-negative integer, got ${state.step}`);
  const tensors = [];
  for (const [moment, map] of [
    ['m', state.m],
    ['v', state.v],
  ] as const) {
    for (const { name, shape } of parameterShapes(config)) {
      const data = map.get(name);
      if (!data) fail(`optimizer state: missing ${moment} for ${name}`);
      tensors.push({ name: `${moment}.${HF_PREFIX}${name}`, shape, data });
    }
  }
  return writeSafetensors(tensors, { ...extraMetadata, format: OPTIMIZER_FORMAT, producer: PRODUCER, step: String(state.step), ...configMetadata(config) });
}

/** Loads optimizer state saved for `config`; a state saved for another config is an error. */
export function loadOptimizerState(bytes: Uint8Array, config: ModelConfig): OptimizerState {
  const header = readSafetensorsHeader(bytes);
  const meta = header.metadata ?? {};
  if (meta.format !== OPTIMIZER_FORMAT) fail(`not an optimizer state file (__metadata__.format is ${JSON.stringify(meta.format)}, expected "${OPTIMIZER_FORMAT}")`);
  for (const [field, key] of Object.entries(CONFIG_KEYS)) {
    const want = config[field as keyof ModelConfig];
    if (key in meta && parseInt10(key, meta[key]) !== want) fail(`optimizer state was saved for ${key} ${meta[key]}, the model has ${want}`);
  }
  if (!('step' in meta)) fail('optimizer state: __metadata__.step is missing');
  const step = parseInt10('step', meta.step);
  const state: OptimizerState = { step, m: new Map(), v: new Map() };
  const expectedNames = new Set<string>();
  for (const moment of ['m', 'v'] as const) {
    for (const { name, shape } of parameterShapes(config)) {
      const fileName = `${moment}.${HF_PREFIX}${name}`;
      expectedNames.add(fileName);
      const entry = header.entries.get(fileName);
      if (!entry) fail(`missing tensor ${fileName}`);
      if (!sameShape(entry.shape, shape)) {
        fail(`tensor ${fileName}: expected shape [${shape.join(', ')}], got [${entry.shape.join(', ')}]`);
      }
      state[moment].set(name, readTensor(bytes, entry));
    }
  }
  for (const name of header.entries.keys()) if (!expectedNames.has(name)) fail(`unexpected tensor ${name} in optimizer state`);
  return state;
}
