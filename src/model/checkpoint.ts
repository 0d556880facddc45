// GPT-2 checkpoints (docs/model.md): safetensors with Hugging Face names (`transformer.` prefix), shapes
// and layouts, config in `__metadata__`, so PyTorch's GPT2LMHeadModel loads what we save and we load
// GPT-2-architecture files trained elsewhere. AdamW state goes in a second file of the same kind.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { type ModelConfig, configLimitProblems, validateConfig } from './config';
import { type ModelWeights, type ParameterShape, parameterShapes } from './params';
import { type SafetensorsHeader, type TensorEntry, readSafetensorsHeader, readTensor, writeSafetensors } from '../util/safetensors';

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
    nLayer = 0; // a loop, not Math.max(...): a header may name a million tensors
    for (const n of byName.keys()) {
      const m = /^h\.(\d+)\./.exec(n);
      if (m) nLayer = Math.max(nLayer, Number(m[1]) + 1);
    }
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

// ---------------------------------------------------------------------------------------------
// Validation before allocation, in this order: the config against CONFIG_LIMITS (before the list of
// expected tensors exists), every tensor's presence and shape (before any data is read),
// then every value finite (a NaN weight would make every score null and training fail later).

function checkConfigLimits(config: ModelConfig, options: LoadOptions): void {
  const problems = configLimitProblems(config);
  if (problems.length) fail(`config out of bounds: ${problems.join('; ')}`);
  try {
    validateConfig(config);
  } catch (e) {
    fail((e as Error).message);
  }
  if (options.maxVocab !== undefined && config.vocabSize > options.maxVocab) {
    fail(`vocabulary ${config.vocabSize} is larger than the allowed ${options.maxVocab}`);
  }
}

function checkTensorEntries(
  config: ModelConfig,
  expected: readonly ParameterShape[],
  byName: ReadonlyMap<string, TensorEntry>,
  lmHead: TensorEntry | undefined,
): void {
  for (const { name, shape } of expected) {
    const entry = byName.get(name);
    if (!entry) fail(`missing tensor ${HF_PREFIX}${name}`);
    if (!sameShape(entry.shape, shape)) {
      fail(`tensor ${entry.name}: expected shape [${shape.join(', ')}], got [${entry.shape.join(', ')}]`);
    }
  }
  const known = new Set(expected.map((p) => p.name));
  for (const [name, entry] of byName) if (!known.has(name)) fail(`unexpected tensor ${entry.name} (not a parameter of GPT-2 with ${config.nLayer} layers)`);
  if (lmHead) {
    if (!sameShape(lmHead.shape, [config.vocabSize, config.nEmbd])) {
      fail(`${lmHead.name} differs from wte.weight: an untied output head is not supported (this model ties it to wte)`);
    }
  }
}

/** Throws naming the first tensor (by its name in the file) that holds a NaN or an infinity. */
function checkFinite(tensors: ReadonlyMap<string, Float32Array>, fileName: (name: string) => string): void {
  for (const [name, data] of tensors) {
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i])) fail(`tensor ${fileName(name)} holds ${data[i]} at index ${i}: every value must be finite`);
    }
  }
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
  checkConfigLimits(config, options);
  const expected = parameterShapes(config);
  checkTensorEntries(config, expected, byName, lmHead);

  const tensors = new Map<string, Float32Array>();
  for (const { name } of expected) tensors.set(name, readTensor(bytes, byName.get(name)!));
  checkFinite(tensors, (name) => byName.get(name)!.name);

  if (lmHead) {
    const wte = tensors.get('wte.weight')!;
    if (!sameValues(readTensor(bytes, lmHead), wte)) {
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
  if (meta.format !== OPTIMIZER_FORMAT)
    fail(`not an optimizer state file (__metadata__.format is ${JSON.stringify(meta.format)}, expected "${OPTIMIZER_FORMAT}")`);
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
    }
  }
  for (const name of header.entries.keys()) if (!expectedNames.has(name)) fail(`unexpected tensor ${name} in optimizer state`);
  // Shapes all checked: now the data, every moment finite.
  for (const moment of ['m', 'v'] as const) {
    for (const { name } of parameterShapes(config)) state[moment].set(name, readTensor(bytes, header.entries.get(`${moment}.${HF_PREFIX}${name}`)!));
    checkFinite(state[moment], (name) => `${moment}.${HF_PREFIX}${name}`);
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// The checkpoint pair (docs/reliability.md): weights and optimizer state are one unit. The weights
// file stays a plain GPT-2 file; the optimizer file's __metadata__ records the SHA-256 of the exact
// weights file bytes it was saved with, so a reader can tell a matching pair from a mixed one.
// Pure (browser and Node): Node's file writer (checkpoint-file.ts) passes a faster digest.

/** `__metadata__` key of the optimizer file: lowercase hex SHA-256 of its weights file's bytes. */
export const WEIGHTS_DIGEST_KEY = 'weights_sha256';

/** Lowercase hex SHA-256 of some bytes. */
export type Digest = (bytes: Uint8Array) => string;

export const sha256Hex: Digest = (bytes) => bytesToHex(sha256(bytes));

export interface CheckpointPairBytes {
  weights: Uint8Array;
  optimizer: Uint8Array;
}

/** The two files of a checkpoint, the optimizer file bound to the weights file's bytes. */
export function saveCheckpointPair(
  weights: ModelWeights,
  state: OptimizerState,
  metadata: Record<string, string> = {},
  digest: Digest = sha256Hex,
): CheckpointPairBytes {
  const weightsBytes = saveCheckpoint(weights, { ...metadata, step: String(state.step) });
  return { weights: weightsBytes, optimizer: saveOptimizerState(weights.config, state, { [WEIGHTS_DIGEST_KEY]: digest(weightsBytes) }) };
}

/**
 * Binds optimizer-state bytes made elsewhere (e.g. a trainer's checkpoint()) to the weights bytes
 * they go with: the same file with `weights_sha256` added to its __metadata__ (data unchanged).
 */
export function bindOptimizerState(pair: CheckpointPairBytes, digest: Digest = sha256Hex): CheckpointPairBytes {
  const header = readSafetensorsHeader(pair.optimizer);
  if (header.metadata?.format !== OPTIMIZER_FORMAT) fail('bindOptimizerState: the second file is not an optimizer state file');
  const view = new DataView(pair.optimizer.buffer, pair.optimizer.byteOffset, pair.optimizer.byteLength);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  const json = JSON.parse(new TextDecoder().decode(pair.optimizer.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  json.__metadata__ = { ...(json.__metadata__ as Record<string, string>), [WEIGHTS_DIGEST_KEY]: digest(pair.weights) };
  let text = JSON.stringify(json);
  text += ' '.repeat((8 - ((new TextEncoder().encode(text).length + 8) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(text);
  const data = pair.optimizer.subarray(8 + headerLength);
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  const outView = new DataView(out.buffer);
  outView.setUint32(0, headerBytes.length, true);
  outView.setUint32(4, Math.floor(headerBytes.length / 2 ** 32), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return { weights: pair.weights, optimizer: out };
}

export type PairCheck = { ok: true; bound: boolean } | { ok: false; reason: string };

/**
 * Whether optimizer-state bytes belong to weights bytes. A bound file (with weights_sha256) must
 * name exactly these weights. An older file without the digest is accepted unless the weights
 * record a `step` (mw train writes one) different from the optimizer's: that is a mixed pair.
 */
export function checkPair(weightsBytes: Uint8Array, optimizerBytes: Uint8Array, digest: Digest = sha256Hex): PairCheck {
  const meta = readSafetensorsHeader(optimizerBytes).metadata ?? {};
  const step = meta.step ?? '?';
  const bound = meta[WEIGHTS_DIGEST_KEY];
  if (bound !== undefined) {
    if (bound === digest(weightsBytes)) return { ok: true, bound: true };
    return {
      ok: false,
      reason: `the optimizer state (step ${step}) was saved with other weights (${WEIGHTS_DIGEST_KEY} differs): a mixed pair, e.g. from an interrupted save`,
    };
  }
  const weightsStep = readSafetensorsHeader(weightsBytes).metadata?.step;
  if (weightsStep !== undefined && weightsStep !== meta.step) {
    return { ok: false, reason: `the optimizer state is at step ${step}, the weights at step ${weightsStep}: a mixed pair, e.g. from an interrupted save` };
  }
  return { ok: true, bound: false };
}

/** Loads a checkpoint and, when given, its optimizer state, refusing a mixed pair. */
export function loadCheckpointPair(
  pair: { weights: Uint8Array; optimizer: Uint8Array | null },
  options: LoadOptions = {},
  digest: Digest = sha256Hex,
): { weights: ModelWeights; optimizer: OptimizerState | null } {
  const weights = loadCheckpoint(pair.weights, options);
  if (!pair.optimizer) return { weights, optimizer: null };
  const check = checkPair(pair.weights, pair.optimizer, digest);
  if (!check.ok) fail(check.reason);
  return { weights, optimizer: loadOptimizerState(pair.optimizer, weights.config) };
}
