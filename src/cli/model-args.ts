// What the model-facing commands (score, verify, train, drift) share: their flags' values, the model
// (a GPT-2 checkpoint, or a seeded random init of a preset), the check that the model can take a
// file's rollouts, and the WebGPU device. A bad checkpoint is invalid input (exit 2, the codec's
// message); no WebGPU is exit 69 (EX_UNAVAILABLE) with one line saying what to install.

import { mkdirSync, readFileSync } from 'node:fs';
import { writeOutputSync } from '../util/output-file';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createGpu, GpuUnavailableError, type Gpu } from '../gpu/runtime/device';
import { GpuLimitError } from '../gpu/runtime/limits';
import { CheckpointFileError, readCheckpointFile, type CheckpointPair } from '../model/checkpoint-file';
import { MODEL_PRESETS, describeConfig, presetConfig, type ModelConfig } from '../model/config';
import { PRESETS } from '../run/config';
import { initWeights, type ModelWeights } from '../model/params';
import { methodNeeds } from '../plan/needs';
import { positionsNeeded } from '../plan/positions';
import { METHODS, SEQUENCE_METHODS, isMethod, type Method, type SequenceMethod } from '../plan/types';
import { ValidationError, quote } from '../rollout/errors';
import type { Rollout } from '../rollout/rollout';
import { tokenizerMismatch } from '../rollout/tokenizer';
import type { FamilyConfig } from '../model/family/config';
import { ModelFolderError } from '../model/family/folder';
import { isModelFolderPath, loadFamilyModel, modelFolderDir, type FamilyModel } from '../model/family/folder-node';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import { parseEnvSpec, type EnvSpec } from '../harness/env';
import { EDITOR_KINDS, editorSpec, isEditorKind, type EditorKind } from '../harness/editors';
import type { SamplingOptions } from '../harness/policies/model';
import type { TuningStorage } from '../gpu/kernels/matmul/matmul-autotune';
import type { ScoredModel } from '../gpu/score';
import { UsageError, type CliIO, type FlagSpec, type ParsedArgs } from './command';
import { hubCheckpointArg, hubModelName } from './hub-arg';

/** Exit status when the runtime has no usable WebGPU device (sysexits' EX_UNAVAILABLE). */
export const GPU_UNAVAILABLE_EXIT = 69;

/**
 * Random initialisations: `gpt2` is GPT-2's own (N(0, 0.02²), what training starts from); `wide`
 * draws larger, noisier weights (std 0.15, perturbed LayerNorms, non-zero biases) so that attention
 * patterns, and so masking mistakes, show in the outputs: what verification wants.
 */
export const INITS = ['gpt2', 'wide'] as const;
export type Init = (typeof INITS)[number];

/** --config, --init and --seed: a random init, with the command's default init. */
export function modelFlags(init: Init) {
  return {
    config: { type: 'string', value: PRESETS.join('|'), help: `model preset for a random init (default "default": ${describeConfig(MODEL_PRESETS.default)})` },
    init: { type: 'string', value: INITS.join('|'), help: `random initialisation (default ${init})` },
    seed: { type: 'string', value: 'S', help: 'seed of the random init (default 0)' },
  } as const satisfies Record<string, FlagSpec>;
}

// ---------------------------------------------------------------------------------------------
// Flag values.

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} needs a value`);
  return value;
}

export function requiredFlag(args: ParsedArgs, name: string, what: string): string {
  const value = stringFlag(args, name);
  if (value === undefined) throw new UsageError(`--${name} ${what} is required`);
  return value;
}

export function integerFlag(args: ParsedArgs, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const text = stringFlag(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw new UsageError(`--${name} must be an integer ${range}, got ${quote(text)}`);
  }
  return value;
}

/** A finite number in [min, max]. */
export function numberFlag(args: ParsedArgs, name: string, fallback: number, min = -Infinity, max = Infinity): number {
  const text = stringFlag(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Infinity ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw new UsageError(`--${name} must be a number ${range}, got ${quote(text)}`);
  }
  return value;
}

export function choiceFlag<T extends string>(args: ParsedArgs, name: string, choices: readonly T[], fallback: T): T {
  const value = stringFlag(args, name) ?? fallback;
  if (!(choices as readonly string[]).includes(value)) throw new UsageError(`unknown --${name} ${quote(value)} (${choices.join(', ')})`);
  return value as T;
}

/** `f()`, a refusal of the layer below (an Error) thrown again as a usage error, its message after `prefix`. */
export function asUsageError<T>(f: () => T, prefix = ''): T {
  try {
    return f();
  } catch (error) {
    throw new UsageError(`${prefix}${(error as Error).message}`);
  }
}

/** `--NAME a,b`: a comma-separated list of valid entries, no entry twice; FALLBACK when the flag is absent. */
export function listFlag<T extends string>(args: ParsedArgs, name: string, valid: (v: string) => v is T, all: readonly string[], fallback: readonly T[]): T[] {
  const text = stringFlag(args, name);
  if (text === undefined) return [...fallback];
  const items = text.split(',').map((s) => s.trim());
  for (const item of items) if (!valid(item)) throw new UsageError(`unknown --${name} entry ${quote(item)} (${all.join(', ')})`);
  if (new Set(items).size !== items.length) throw new UsageError(`--${name} lists an entry twice`);
  return items as T[];
}

/**
 * Creates --out DIR (and the folders above it). A bad --out is a usage error (exit 1), found
 * before any work: a file where the folder should be, or a file on its path.
 */
export function outFolder(out: string): void {
  try {
    mkdirSync(out, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const flag = `--out ${quote(out)}`;
    throw new UsageError(
      code === 'EEXIST'
        ? `${flag} is a file; give a folder`
        : code === 'ENOTDIR'
          ? `${flag}: a folder on its path is a file`
          : `${flag}: cannot create the folder (${code ?? String(error)})`,
    );
  }
}

/** `--env lookup:hops=2,distractors=1`: an environment id with optional difficulty knobs. */
export function envFlag(text: string): EnvSpec {
  return asUsageError(() => parseEnvSpec(text), '--env: ');
}

/** `--editor H [--budget N]`: the memory editor and its budget, checked before any GPU work. */
export function editorFlags(args: ParsedArgs, what: string): { editor: EditorKind; budget: number | undefined } {
  const editor = requiredFlag(args, 'editor', `H (${EDITOR_KINDS.join(', ')})${what}`);
  if (!isEditorKind(editor)) throw new UsageError(`unknown editor ${quote(editor)} (${EDITOR_KINDS.join(', ')})`);
  const budget = stringFlag(args, 'budget') === undefined ? undefined : integerFlag(args, 'budget', 0, 1);
  if (budget !== undefined && editor === 'none') throw new UsageError('--budget: editor none has no budget');
  asUsageError(() => editorSpec(editor, { budget }));
  return { editor, budget };
}

/** `--temperature T --top-k K --top-p P`: how the model policy samples (the recorded logprobs stay at temperature 1). */
export function samplingFlags(what: string, defaults: Required<SamplingOptions>): Record<'temperature' | 'top-k' | 'top-p', FlagSpec> {
  return {
    temperature: { type: 'string', value: 'T', help: `${what}sampling temperature, 0 = greedy (default ${defaults.temperature})` },
    'top-k': { type: 'string', value: 'K', help: `${what}sample among the K most likely tokens (default ${defaults.topK || 'all'})` },
    'top-p': { type: 'string', value: 'P', help: `${what}then among the fewest most likely tokens holding probability P (default ${defaults.topP})` },
  };
}

export function samplingFromArgs(args: ParsedArgs, defaults: Required<SamplingOptions>): Required<SamplingOptions> {
  const sampling = {
    temperature: numberFlag(args, 'temperature', defaults.temperature, 0),
    topK: integerFlag(args, 'top-k', defaults.topK, 0),
    topP: numberFlag(args, 'top-p', defaults.topP, 0, 1),
  };
  if (sampling.topP === 0) throw new UsageError('--top-p must be a number in (0, 1], got 0');
  return sampling;
}

export function methodFlag(args: ParsedArgs): Method {
  const method = requiredFlag(args, 'method', 'M');
  if (!isMethod(method)) throw new UsageError(`unknown method ${quote(method)} (${METHODS.join(', ')})`);
  return method;
}

export function scoringMethodFlag(args: ParsedArgs): SequenceMethod {
  const method = methodFlag(args);
  if (method === 'sdcc') {
    throw new UsageError(
      'sdcc is an objective (a loss for mw train), not a scoring: its student scores like naive-compressed, ' +
        `its teachers like logit-tree (${SEQUENCE_METHODS.join(', ')})`,
    );
  }
  return method;
}

// ---------------------------------------------------------------------------------------------
// The model.

export type Checkpoint = Pick<CheckpointPair, 'weights' | 'metadata'> & { path: string };

/** The architecture a model folder's config.json names (for one-line refusals), or null when it names none. */
function folderArchitecture(path: string): string | null {
  try {
    const config = JSON.parse(readFileSync(join(modelFolderDir(path), 'config.json'), 'utf8'));
    const arch = Array.isArray(config?.architectures) ? config.architectures[0] : null;
    return typeof arch === 'string' ? arch : null;
  } catch {
    return null;
  }
}

/**
 * A family model named by `--ckpt PATH` (docs/model.md): config, tensor source and tokenizer; a folder
 * that does not open is invalid input naming the file (exit 2). score / drift / verify / generate hand
 * `config` and `source` to the GPU family model and check rollouts with checkModelTakes(model.config, …).
 */
export async function familyModelArg(path: string, name?: string): Promise<FamilyModel> {
  try {
    return await loadFamilyModel(path, name);
  } catch (error) {
    if (error instanceof ModelFolderError) {
      // The folder reader names files inside the folder; the folder itself by its name.
      const folder = modelFolderDir(path);
      throw new ValidationError({ file: error.file === basename(resolve(folder)) ? folder : join(folder, error.file) }, error.reason);
    }
    throw error;
  }
}

/** `mw train` (and the GPT-2-only paths) given a model folder: one line saying what it is. */
export function refuseFamilyModel(path: string, why: string): void {
  if (!isModelFolderPath(path)) return;
  // A folder without a readable config.json is no model folder: the checkpoint reader names it ("not a file").
  const arch = folderArchitecture(path);
  if (arch) throw new ValidationError({ file: path }, `${why}; this is a ${arch} model folder`);
}

/** The checkpoint alone (mw train reads the optimizer state beside it too); errors name the file (exit 2). */
export function readCheckpointArg(path: string): Checkpoint {
  refuseFamilyModel(path, 'this command reads GPT-2 checkpoints only');
  try {
    const { weights, metadata } = readCheckpointFile(path);
    return { path, weights, metadata };
  } catch (error) {
    if (error instanceof CheckpointFileError) throw new ValidationError({ file: error.file }, error.reason);
    throw error;
  }
}

/** What `--ckpt PATH` names for the scoring commands (score, drift): a GPT-2 checkpoint, or a family model folder. */
export type ScoringModelArg = (
  | { kind: 'gpt2'; weights: ModelWeights; config: ModelConfig }
  | { kind: 'family'; model: FamilyModel; config: FamilyConfig; path: string }
) & {
  /** The model's positions P: GPT-2's n_positions, a family model's max_position_embeddings. */
  positions: number;
  /**
   * checkModelTakes for this model (a folder's rollouts: of its tokenizer.json, by vocabulary when it has none),
   * without the positions: the scoring commands score a long rollout as far as the model reaches (src/plan/reach.ts).
   */
  takes(rollouts: readonly Rollout[], methods: readonly Method[]): void;
};

/**
 * A GPT-2 checkpoint, a model folder (isModelFolderPath) or a model on the Hub (`hf:ORG/NAME[@REV]`, fetched
 * into the cache first); any refused in one line naming the file or the model (exit 2).
 */
export async function scoringModelArg(ckpt: string, io: CliIO, command: string): Promise<ScoringModelArg> {
  const hub = ckpt.startsWith('hf:');
  const path = hub ? await hubCheckpointArg(ckpt, io, command) : ckpt;
  if (isModelFolderPath(path)) {
    // A Hub model is named as its folder would be once downloaded by hand: NAME of ORG/NAME.
    const model = await familyModelArg(path, hub ? hubModelName(ckpt) : undefined);
    return {
      kind: 'family',
      model,
      config: model.config,
      path,
      positions: model.config.maxPositionEmbeddings,
      takes: (rollouts, methods) => checkModelTakes(model.config, rollouts, methods, undefined, { modelTokenizer: model.tokenizer?.name, reach: true }),
    };
  }
  const { weights } = readCheckpointArg(path);
  return {
    kind: 'gpt2',
    weights,
    config: weights.config,
    positions: weights.config.nPositions,
    takes: (rollouts, methods) => checkModelTakes(weights.config, rollouts, methods, undefined, { reach: true }),
  };
}

/** Folders this large report their load on stderr (bytes streamed of the total). */
export const LOAD_PROGRESS_BYTES = 64 * 2 ** 20;

/**
 * The model on the GPU, GPT-2 or a family model (its folder streamed a tensor at a time; a folder of
 * LOAD_PROGRESS_BYTES or more reports the bytes loaded on stderr). A folder whose config the kernels
 * cannot run is invalid input naming it (exit 2).
 */
export async function createScoredModel(session: GpuSession, arg: ScoringModelArg, io: CliIO, command: string): Promise<ScoredModel> {
  if (arg.kind === 'gpt2') return session.engine.createGpuModel(session.gpu, arg.weights);
  const { config, source } = arg.model;
  const tty = !!process.stderr.isTTY;
  const report = source.totalBytes >= LOAD_PROGRESS_BYTES;
  let shown = -1;
  const onProgress = report
    ? ({ bytes, total }: { bytes: number; total: number }) => {
        const percent = Math.floor((100 * bytes) / total);
        if (percent === shown && bytes < total) return;
        shown = percent;
        const line = `mw ${command}: loading ${config.name}: ${mib(bytes)} of ${mib(total)} (${percent}%)`;
        io.err(tty ? `\r${line}${bytes >= total ? '\n' : ''}` : bytes >= total || percent % 10 === 0 ? `${line}\n` : '');
      }
    : undefined;
  try {
    return await session.engine.createFamilyGpuModel(session.gpu, config, source, onProgress);
  } catch (error) {
    if (error instanceof ModelFolderError) throw new ValidationError({ file: join(modelFolderDir(arg.path), error.file) }, error.reason);
    if (error instanceof GpuLimitError || !(error instanceof Error) || error.constructor !== Error) throw error;
    // The loader's refusals (a shape the config does not give, a missing tensor, a head size the kernels do not take).
    throw new ValidationError({ file: arg.path }, error.message);
  }
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export interface ModelChoice<C extends Checkpoint = Checkpoint> {
  weights: ModelWeights;
  /** The checkpoint, when the weights came from one. */
  checkpoint: C | null;
  /** For people: "ckpt.safetensors (V 272, C 32, …)" or "random init wide, seed 0 (…)". */
  description: string;
}

/**
 * The weights a command runs: the checkpoint named by `--<ckptFlag>`, else a random init from
 * --config, --init and --seed. A checkpoint fixes the config, so --config and --init do not go with it.
 * `read` reads the checkpoint (mw train: with its optimizer state, as one pair).
 */
export function modelFromArgs<C extends Checkpoint = Checkpoint>(
  args: ParsedArgs,
  options: { ckptFlag: string; init: Init; read?: (path: string) => C },
): ModelChoice<C> {
  const path = stringFlag(args, options.ckptFlag);
  const seed = integerFlag(args, 'seed', 0, 0, 2 ** 32 - 1);
  const preset = choiceFlag(args, 'config', PRESETS, 'default');
  const init = choiceFlag(args, 'init', INITS, options.init);
  if (path !== undefined) {
    const fixed = ['config', 'init'].find((flag) => args.flags[flag] !== undefined);
    if (fixed) throw new UsageError(`--${fixed} does not go with --${options.ckptFlag}: the checkpoint fixes the model`);
    const checkpoint = options.read ? options.read(path) : (readCheckpointArg(path) as C);
    return { weights: checkpoint.weights, checkpoint, description: `${path} (${describeConfig(checkpoint.weights.config)})` };
  }
  const config = presetConfig(preset);
  return {
    weights: init === 'wide' ? randomWeights(config, seed) : initWeights(config, seed),
    checkpoint: null,
    description: `random init ${init}, seed ${seed} (${preset}: ${describeConfig(config)})`,
  };
}

/**
 * Every rollout's tokens must lie in the model's vocabulary and every sequence of the methods'
 * plans within its positions (learned position embeddings stop at P; not checked with `reach`: the
 * scoring commands cut the plans, src/plan/reach.ts); else invalid input naming the rollout and what it needs.
 */
export function checkModelTakes(
  config: ModelConfig | FamilyConfig,
  rollouts: readonly Rollout[],
  methods: readonly Method[],
  trees?: readonly ConditioningTree[],
  options: { modelTokenizer?: string; reach?: boolean } = {},
): void {
  // A family model (RoPE) reaches max_position_embeddings. A model reads its own tokenizer's rollouts:
  // `modelTokenizer` (a folder's `hf:<name>`, from its tokenizer.json), else the one its vocabulary names.
  const { modelTokenizer } = options;
  const nPositions = 'architecture' in config ? config.maxPositionEmbeddings : config.nPositions;
  rollouts.forEach((rollout, r) => {
    const where = `rollout ${quote(rollout.id)}`;
    // A model reads one tokenizer's tokens (docs/tokenizers.md): GPT-2's vocabulary of 50257 the gpt2
    // tokenizer's, every other the byte tokenizer's. Token ids of the other tokenizer may well lie in
    // range and would be scored as nonsense, so a rollout of a known tokenizer must meet its own.
    const mismatch = tokenizerMismatch(rollout.tokenizer, config.vocabSize, modelTokenizer);
    const fix =
      mismatch?.model === 'gpt2'
        ? ' (import the log with mw import --tokenizer gpt2)'
        : modelTokenizer
          ? ' (import the log with mw import --tokenizer MODEL-FOLDER)'
          : '';
    if (mismatch) throw new ValidationError(rollout.source, `${where} ${mismatch.reason}${fix}`);
    const id = rollout.tokens.findIndex((t) => t >= config.vocabSize);
    if (id >= 0)
      throw new ValidationError(rollout.source, `${where}: token ${rollout.tokens[id]} (id ${id}) is outside the model's vocabulary of ${config.vocabSize}`);
    // With `reach`, a rollout longer than the model is scored as far as it reaches (the scoring commands).
    for (const method of options.reach ? [] : methods) {
      // From the events alone (src/plan/positions.ts): a rollout too long is refused before its
      // tree and plans are built. SDCC's teachers depend on its diverging leaves: its tree is built.
      const positions = method === 'sdcc' ? methodNeeds(trees?.[r] ?? deriveTree(rollout), method).positions : positionsNeeded(rollout, method);
      if (positions > nPositions) {
        throw new ValidationError(rollout.source, `${where}: ${method} needs ${positions} positions, the model has ${nPositions}`);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The device.

/**
 * The GPU engine, imported when a command runs: its kernels and shaders would otherwise slow the
 * start of every `mw` command, `mw tree` included.
 */
async function loadEngine() {
  const [{ createGpuModel }, { computeGradients }, { pickMatmulVariant }, { evaluate, scoreRollouts }, { loadFamilyModel: createFamilyGpuModel }] =
    await Promise.all([
      import('../gpu/model'),
      import('../gpu/train'),
      import('../gpu/kernels/matmul/matmul-autotune'),
      import('../gpu/score'),
      import('../gpu/family-model'),
    ]);
  return { pickMatmulVariant, createGpuModel, createFamilyGpuModel, evaluate, scoreRollouts, computeGradients };
}

export type Engine = Awaited<ReturnType<typeof loadEngine>>;

/** Writes PATH whole or not at all: a partial beside it, renamed into place (src/util/output-file.ts: only over a regular file). */
export function writeAtomically(path: string, text: string): void {
  writeOutputSync(path, text);
}

/**
 * Settles the matmul variant this adapter prefers (shared-memory tiles on GPUs, registers on SwiftShader),
 * measured once per adapter and kept in the CLI's cache directory (a few seconds on SwiftShader otherwise):
 * $MW_CACHE_DIR, else $XDG_CACHE_HOME/memorywalker, else ~/.cache/memorywalker. `pick` is the engine's
 * pickMatmulVariant (loaded lazily by the commands).
 */
export async function settleMatmulVariant(gpu: Gpu, pick: (gpu: Gpu, options: { storage: TuningStorage }) => Promise<unknown>): Promise<void> {
  const cache = process.env.MW_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'memorywalker');
  await pick(gpu, { storage: fileStorage(join(cache, 'matmul-variants.json')) });
}

/** A Web-Storage-like map kept in one JSON file (written whole, atomically); unreadable reads as empty. */
function fileStorage(path: string): TuningStorage {
  const read = (): Record<string, string> => {
    try {
      const all = JSON.parse(readFileSync(path, 'utf8'));
      return typeof all === 'object' && all !== null ? all : {};
    } catch {
      return {};
    }
  };
  return {
    getItem(key) {
      const value = read()[key];
      return typeof value === 'string' ? value : null;
    },
    setItem(key, value) {
      const all = { ...read(), [key]: value };
      mkdirSync(join(path, '..'), { recursive: true });
      writeAtomically(path, JSON.stringify(all, null, 2) + '\n');
    },
  };
}

export interface GpuSession {
  gpu: Gpu;
  engine: Engine;
  /** Throws when WebGPU reported an error (validation, out of memory, device lost) since the start. */
  assertHealthy(): Promise<void>;
}

/**
 * Runs `compute` on a WebGPU device, releases the device, then runs the report `compute` returned
 * (printing happens only after the GPU work is known good: a validation error would have left
 * wrong numbers). No WebGPU: one line on stderr, exit 69.
 */
export async function withGpu(io: CliIO, command: string, compute: (session: GpuSession) => Promise<() => number>): Promise<number> {
  // Dawn's Vulkan loader complains on stderr about an unset XDG_RUNTIME_DIR; any directory will do.
  process.env.XDG_RUNTIME_DIR ??= tmpdir();
  const engine = await loadEngine();
  let gpu: Gpu;
  try {
    gpu = await createGpu();
  } catch (error) {
    if (error instanceof GpuUnavailableError) {
      io.err(`mw ${command}: no WebGPU device (${error.reason}): ${error.message}\n`);
      return GPU_UNAVAILABLE_EXIT;
    }
    throw error;
  }
  await settleMatmulVariant(gpu, engine.pickMatmulVariant);
  const errors: string[] = [];
  const unsubscribe = gpu.onEvent((event) => {
    if (event.type === 'uncaptured-error') errors.push(`${event.kind} error: ${event.message}`);
    else if (event.reason !== 'destroyed') errors.push(`device lost: ${event.message}`);
  });
  const session: GpuSession = {
    gpu,
    engine,
    async assertHealthy() {
      await gpu.device.queue.onSubmittedWorkDone();
      if (errors.length) throw new Error(`WebGPU ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
    },
  };
  let report: () => number;
  try {
    report = await compute(session);
    await session.assertHealthy();
  } catch (error) {
    // The model (or a batch of it) is larger than this adapter holds: one line, like no WebGPU.
    if (!(error instanceof GpuLimitError)) throw error;
    io.err(`mw ${command}: ${error.message}\n`);
    return GPU_UNAVAILABLE_EXIT;
  } finally {
    unsubscribe();
    gpu.destroy();
  }
  return report();
}
