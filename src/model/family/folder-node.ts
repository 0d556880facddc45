// A model folder on disk, for Node (the CLI, tests): each file read by byte ranges through a file
// handle, never whole. `PATH` is the folder, or a `.safetensors` file with a config.json beside it.

import { existsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createHfTokenizer, type HfTokenizer } from '../../rollout/tokenizer-hf';
import { FAMILY_ARCHITECTURES, describeFamilyConfig, parseFamilyConfig, type FamilyConfig, type FolderTensorSource } from './config';
import { type ByteRangeReader, type ModelFolder, ModelFolderError, type ModelFolderFiles, folderTokenizer, openModelFolder } from './folder';

/** One file as byte ranges: a handle opened per read, so nothing stays open between tensors. */
export function fileRangeReader(path: string): ByteRangeReader {
  return {
    size: statSync(path).size,
    async read(begin, end) {
      const handle = await open(path, 'r');
      try {
        const out = new Uint8Array(end - begin);
        let at = 0;
        while (at < out.length) {
          const { bytesRead } = await handle.read(out, at, out.length - at, begin + at);
          if (bytesRead === 0) throw new ModelFolderError(path, `ends at byte ${begin + at}, expected ${end} bytes`);
          at += bytesRead;
        }
        return out;
      } finally {
        await handle.close();
      }
    },
  };
}

/** `name`: the model's name when config.json gives none; the folder's name by default. */
export function nodeModelFolderFiles(folder: string, name = basename(resolve(folder))): ModelFolderFiles {
  return {
    name,
    has: (file) => existsSync(join(folder, file)) && statSync(join(folder, file)).isFile(),
    async open(file) {
      return fileRangeReader(join(folder, file));
    },
  };
}

/**
 * Whether PATH names a model folder (a directory), or a single .safetensors file whose config.json beside
 * it names an architecture of the family (a GPT-2 file saved with its config.json stays a GPT-2 checkpoint).
 */
export function isModelFolderPath(path: string): boolean {
  if (!existsSync(path)) return false;
  if (statSync(path).isDirectory()) return true;
  const config = join(dirname(path), 'config.json');
  if (!path.endsWith('.safetensors') || !existsSync(config)) return false;
  try {
    const architectures = (JSON.parse(readFileSync(config, 'utf8')) as { architectures?: unknown }).architectures;
    return Array.isArray(architectures) && architectures.some((a) => (FAMILY_ARCHITECTURES as readonly unknown[]).includes(a));
  } catch {
    return false;
  }
}

/** The folder PATH names: PATH itself, or the folder of X.safetensors. */
export function modelFolderDir(path: string): string {
  return statSync(path).isDirectory() ? path : dirname(path);
}

/** Opens PATH (a folder, or X.safetensors with config.json beside it); problems name the file. */
export async function openModelFolderPath(path: string, name?: string): Promise<ModelFolder> {
  if (statSync(path).isDirectory()) return openModelFolder(nodeModelFolderFiles(path, name));
  const folder = dirname(path);
  return openModelFolder(nodeModelFolderFiles(folder, name), { weights: basename(path) });
}

/** What a command needs of a family model: its config, its tensors (streamed), its tokenizer when the folder has one. */
export interface FamilyModel {
  config: FamilyConfig;
  source: FolderTensorSource;
  tokenizer: HfTokenizer | null;
  folder: ModelFolder;
  /** For people: "qwen3 (Qwen3ForCausalLM qwen3: V 151936, C 1024, 28 layers, 16 heads (8 kv) of 128, FF 3072, P 40960, 1.11 GiB)". */
  description: string;
}

/**
 * The seam the GPU side builds on: `mw score / drift / verify / generate --ckpt PATH` open PATH with this,
 * check rollouts with checkModelTakes(model.config, …) and hand `config` and `source` to the GPU family
 * model's factory (src/gpu, docs/model.md).
 */
export async function loadFamilyModel(path: string, name?: string): Promise<FamilyModel> {
  const folder = await openModelFolderPath(path, name);
  const bytes = folder.source.totalBytes;
  const size =
    bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 2 ** 10).toFixed(1)} KiB`;
  return {
    config: folder.config,
    source: folder.source,
    tokenizer: folderTokenizer(folder),
    folder,
    description: `${path} (${describeFamilyConfig(folder.config)}, ${size})`,
  };
}

function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ModelFolderError(basename(path), `not JSON (${(error as Error).message})`);
  }
}

/**
 * A model folder's tokenizer alone (mw import --tokenizer FOLDER): tokenizer.json, tokenizer_config.json
 * and chat_template.jinja, named and sized by config.json as loadFamilyModel names it; no weights read.
 */
export function loadFolderTokenizer(path: string, folderName?: string): HfTokenizer {
  const folder = modelFolderDir(path);
  const file = (name: string) => join(folder, name);
  if (!existsSync(file('tokenizer.json')))
    throw new ModelFolderError(folderName ?? basename(resolve(folder)), 'no tokenizer.json (a model folder as the Hub publishes it)');
  let name = folderName ?? basename(resolve(folder));
  let vocab: number | undefined;
  if (existsSync(file('config.json'))) {
    try {
      const config = parseFamilyConfig(readJsonFile(file('config.json')), name);
      name = config.name;
      vocab = config.vocabSize;
    } catch (error) {
      if (error instanceof ModelFolderError) throw error;
      throw new ModelFolderError('config.json', (error as Error).message.replace(/^config\.json: /, ''));
    }
  }
  try {
    return createHfTokenizer({
      name,
      vocab,
      tokenizer: readJsonFile(file('tokenizer.json')),
      tokenizerConfig: existsSync(file('tokenizer_config.json')) ? readJsonFile(file('tokenizer_config.json')) : {},
      chatTemplate: existsSync(file('chat_template.jinja')) ? readFileSync(file('chat_template.jinja'), 'utf8') : null,
    });
  } catch (error) {
    if (error instanceof ModelFolderError) throw error;
    throw new ModelFolderError('tokenizer.json', (error as Error).message.replace(/^tokenizer\.json: /, ''));
  }
}
