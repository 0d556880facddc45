// A model folder as the Hugging Face Hub publishes it (config.json, model.safetensors or shards named by
// model.safetensors.index.json, tokenizer.json, tokenizer_config.json, generation_config.json), read
// over an abstract folder of byte-range readers: Node reads ranges through a file handle
// (folder-node.ts), the page through File.slice() (blobRangeReader). Only headers are read to open it;
// tensors then stream one at a time, raw (BF16 / F16 / F32 as stored). Every problem is one line.

import { dtypeBytes, readSafetensorsHeader, readTensor, safetensorsDataStart, type TensorEntry } from '../../util/safetensors';
import { createHfTokenizer, type HfTokenizer, type HfTokenizerFiles } from '../../rollout/tokenizer-hf';
import { type FamilyConfig, type FolderTensor, type FolderTensorSource, type WeightDtype, familyParameters, parseFamilyConfig } from './config';

/** Bytes [begin, end) of one file, fetched on demand. */
export interface ByteRangeReader {
  size: number;
  read(begin: number, end: number): Promise<Uint8Array>;
}

/** The files of a model folder by name (flat: `config.json`, `model-00001-of-00002.safetensors`, …). */
export interface ModelFolderFiles {
  /** The folder's name: the model's name when config.json has no `_name_or_path`. */
  name: string;
  has(file: string): boolean;
  open(file: string): Promise<ByteRangeReader>;
}

/** What a folder holds besides the weights: the tokenizer's files and the generation defaults, as parsed JSON. */
export interface ModelFolderExtras {
  tokenizer: unknown | null; // tokenizer.json
  tokenizerConfig: unknown | null; // tokenizer_config.json
  generationConfig: unknown | null; // generation_config.json
  chatTemplate: string | null; // chat_template.jinja, where newer folders keep the template
}

export interface ModelFolder extends ModelFolderExtras {
  config: FamilyConfig;
  source: FolderTensorSource;
  /** The safetensors files read, in order. */
  weightFiles: string[];
}

export const WEIGHT_DTYPES: readonly WeightDtype[] = ['BF16', 'F16', 'F32'];
export const INDEX_FILE = 'model.safetensors.index.json';
export const SINGLE_WEIGHTS_FILE = 'model.safetensors';

/** A model folder's problem: one line naming the file. */
export class ModelFolderError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** Tensors a published folder may carry that the model does not use: rotary tables some exports kept. */
const IGNORED = /(^|\.)rotary_emb\.inv_freq$/;

async function readJson(files: ModelFolderFiles, file: string): Promise<unknown> {
  const reader = await files.open(file);
  const text = new TextDecoder().decode(await reader.read(0, reader.size));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ModelFolderError(file, `not JSON (${(error as Error).message})`);
  }
}

async function optionalJson(files: ModelFolderFiles, file: string): Promise<unknown | null> {
  return files.has(file) ? readJson(files, file) : null;
}

/** The safetensors files to read: `weights` when given, else the index's shards, else model.safetensors. */
async function weightFilesOf(files: ModelFolderFiles, weights: string | undefined): Promise<{ files: string[]; map: Map<string, string> | null }> {
  if (weights !== undefined) return { files: [weights], map: null };
  if (files.has(INDEX_FILE)) {
    const index = await readJson(files, INDEX_FILE);
    const weightMap = typeof index === 'object' && index !== null ? (index as { weight_map?: unknown }).weight_map : undefined;
    if (typeof weightMap !== 'object' || weightMap === null || Array.isArray(weightMap)) throw new ModelFolderError(INDEX_FILE, 'no "weight_map" object');
    const map = new Map<string, string>();
    for (const [name, shard] of Object.entries(weightMap)) {
      if (typeof shard !== 'string') throw new ModelFolderError(INDEX_FILE, `weight_map names ${JSON.stringify(shard)} for ${name}, not a file name`);
      map.set(name, shard);
    }
    const shards = [...new Set(map.values())].sort();
    const missing = shards.filter((s) => !files.has(s));
    if (missing.length)
      throw new ModelFolderError(INDEX_FILE, `weight_map names shard${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, not in the folder`);
    return { files: shards, map };
  }
  if (files.has(SINGLE_WEIGHTS_FILE)) return { files: [SINGLE_WEIGHTS_FILE], map: null };
  throw new ModelFolderError(files.name, `no ${SINGLE_WEIGHTS_FILE} and no ${INDEX_FILE}`);
}

interface Located {
  file: string;
  reader: ByteRangeReader;
  entry: TensorEntry;
}

async function readHeader(file: string, reader: ByteRangeReader): Promise<Map<string, TensorEntry>> {
  try {
    const dataStart = safetensorsDataStart(await reader.read(0, Math.min(8, reader.size)), reader.size);
    return readSafetensorsHeader(await reader.read(0, dataStart), reader.size).entries;
  } catch (error) {
    throw new ModelFolderError(file, (error as Error).message);
  }
}

/**
 * Opens a model folder: parses config.json, reads every safetensors header and checks the tensors the
 * family needs (present, shaped, stored BF16 / F16 / F32, where the index says), all before any data is
 * read. `weights` names a single safetensors file to read instead of the folder's own (a file with a
 * config.json beside it).
 */
export async function openModelFolder(files: ModelFolderFiles, options: { weights?: string } = {}): Promise<ModelFolder> {
  if (!files.has('config.json'))
    throw new ModelFolderError(files.name, 'no config.json (a model folder as the Hub publishes it holds config.json and the safetensors weights)');
  let config: FamilyConfig;
  try {
    config = parseFamilyConfig(await readJson(files, 'config.json'), files.name);
  } catch (error) {
    if (error instanceof ModelFolderError) throw error;
    throw new ModelFolderError('config.json', (error as Error).message.replace(/^config\.json: /, ''));
  }
  const { files: weightFiles, map } = await weightFilesOf(files, options.weights);

  const found = new Map<string, Located>();
  for (const file of weightFiles) {
    const reader = await files.open(file);
    for (const [name, entry] of await readHeader(file, reader)) {
      const other = found.get(name);
      if (other) throw new ModelFolderError(file, `tensor ${name} is also in ${other.file}`);
      if (map && map.get(name) !== file) {
        throw new ModelFolderError(file, `tensor ${name} is not where ${INDEX_FILE} puts it (${map.get(name) ?? 'not in its weight_map'})`);
      }
      found.set(name, { file, reader, entry });
    }
  }

  const expected = familyParameters(config);
  const wanted = new Set(expected.map((p) => p.name));
  const where = map ? INDEX_FILE : weightFiles[0];
  const missing = expected.filter((p) => !found.has(p.name)).map((p) => p.name);
  if (missing.length) {
    const shown = missing.length > 4 ? `${missing.slice(0, 4).join(', ')} and ${missing.length - 4} more` : missing.join(', ');
    throw new ModelFolderError(where, `missing tensor${missing.length > 1 ? 's' : ''} ${shown} (${config.architecture})`);
  }
  for (const { name, shape } of expected) {
    const { file, entry } = found.get(name)!;
    if (!(WEIGHT_DTYPES as readonly string[]).includes(entry.dtype))
      throw new ModelFolderError(file, `tensor ${name} is ${entry.dtype}; weights must be ${WEIGHT_DTYPES.join(', ')}`);
    if (entry.shape.length !== shape.length || entry.shape.some((d, i) => d !== shape[i])) {
      throw new ModelFolderError(file, `tensor ${name} has shape ${JSON.stringify(entry.shape)}, config.json makes it ${JSON.stringify(shape)}`);
    }
  }
  const unused = [...found.keys()].filter((n) => !wanted.has(n) && !IGNORED.test(n) && !(n === 'lm_head.weight' && config.tieWordEmbeddings));
  if (unused.length) {
    throw new ModelFolderError(found.get(unused[0])!.file, `tensor ${unused[0]} is not a parameter of ${config.architecture} as config.json describes it`);
  }
  const [tokenizer, tokenizerConfig, generationConfig] = await Promise.all(
    ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json'].map((f) => optionalJson(files, f)),
  );
  let chatTemplate: string | null = null;
  if (files.has('chat_template.jinja')) {
    const reader = await files.open('chat_template.jinja');
    chatTemplate = new TextDecoder().decode(await reader.read(0, reader.size));
  }

  // File order: each shard's tensors by offset, so a reader moves forward through each file.
  const order = expected
    .map((p) => found.get(p.name)!)
    .sort((a, b) => weightFiles.indexOf(a.file) - weightFiles.indexOf(b.file) || a.entry.begin - b.entry.begin);
  const source: FolderTensorSource = {
    totalBytes: order.reduce((n, { entry }) => n + entry.end - entry.begin, 0),
    async *tensors(): AsyncIterable<FolderTensor> {
      for (const { reader, entry } of order) {
        const data = await reader.read(entry.begin, entry.end);
        yield { name: entry.name, dtype: entry.dtype as WeightDtype, shape: entry.shape, data };
      }
    },
  };
  return { config, source, weightFiles, tokenizer, tokenizerConfig, generationConfig, chatTemplate };
}

/** A stored tensor as float32 values (BF16 and F16 widen exactly): what the CPU reference reads. */
export function decodeFolderTensor(t: FolderTensor): Float32Array {
  if (dtypeBytes(t.dtype) === undefined) throw new Error(`tensor ${t.name}: dtype ${t.dtype}`);
  return readTensor(t.data, { name: t.name, dtype: t.dtype, shape: [...t.shape], begin: 0, end: t.data.length });
}

/** Every tensor of a source, decoded (tests and the CPU reference: small models only). */
export async function readFolderWeights(source: FolderTensorSource): Promise<Map<string, Float32Array>> {
  const tensors = new Map<string, Float32Array>();
  for await (const t of source.tensors()) tensors.set(t.name, decodeFolderTensor(t));
  return tensors;
}

/** A Blob (a dropped File) as byte ranges: File.slice() reads only what is asked. */
export function blobRangeReader(blob: Blob): ByteRangeReader {
  return {
    size: blob.size,
    async read(begin, end) {
      return new Uint8Array(await blob.slice(begin, end).arrayBuffer());
    },
  };
}

/** Files picked or dropped in the page (names relative to the folder) as a model folder. */
export function blobModelFolder(name: string, blobs: ReadonlyMap<string, Blob>): ModelFolderFiles {
  return {
    name,
    has: (file) => blobs.has(file),
    async open(file) {
      const blob = blobs.get(file);
      if (!blob) throw new ModelFolderError(file, 'not in the folder');
      return blobRangeReader(blob);
    },
  };
}

/**
 * What the folder's tokenizer is made of (tokenizer.json, tokenizer_config.json and chat template, named
 * and sized by config.json), or null when the folder has no tokenizer.json: plain data, so a worker that
 * opened the folder can hand it to the page and the page to the rollout worker.
 */
export function folderTokenizerFiles(folder: ModelFolder): HfTokenizerFiles | null {
  if (folder.tokenizer === null) return null;
  return {
    name: folder.config.name,
    vocab: folder.config.vocabSize,
    tokenizer: folder.tokenizer,
    tokenizerConfig: folder.tokenizerConfig ?? {},
    chatTemplate: folder.chatTemplate,
  };
}

/**
 * The folder's `hf:<name>` tokenizer (its tokenizer.json, tokenizer_config.json and chat template, sized by
 * the config's vocabulary), or null when the folder has no tokenizer.json: token-level rollouts need none.
 */
export function folderTokenizer(folder: ModelFolder): HfTokenizer | null {
  const files = folderTokenizerFiles(folder);
  if (files === null) return null;
  try {
    return createHfTokenizer(files);
  } catch (error) {
    throw new ModelFolderError('tokenizer.json', (error as Error).message.replace(/^tokenizer\.json: /, ''));
  }
}
