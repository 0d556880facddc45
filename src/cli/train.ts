// `mw train`: trains the GPT-2 model on rollouts with a replay method and an objective (docs/methods.md, docs/objectives.md)
// and writes a GPT-2 checkpoint, its optimizer state beside it, and one metrics line per update.
// Rollouts come from a RolloutSource: a data file (`--data`), or episodes the model being trained
// plays in an environment under a memory editor, a fresh batch before every update (`--env`).

import { closeSync, existsSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { GpuModel } from '../gpu/model';
import type { Objective, StepMetrics, Trainer } from '../gpu/train';
import { optimizerStatePath } from '../model/checkpoint-file';
import type { ModelConfig } from '../model/config';
import type { LrSchedule } from '../objectives/adamw';
import { buildPlan } from '../plan/build';
import type { Method } from '../plan/types';
import { ValidationError, quote } from '../rollout/errors';
import type { RolloutJson } from '../rollout/format';
import type { Rollout } from '../rollout/rollout';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { generateDataset, type DatasetConfig } from '../harness/dataset';
import { EDITOR_KINDS, type EditorKind } from '../harness/editors';
import { ENV_IDS, formatEnvSpec, type EnvSpec } from '../harness/env';
import { checkSampling } from '../harness/policies/model';
import { endAtLastAction } from '../harness/episode';
import { verifyEpisode } from '../harness/verify';
import { createRng } from '../util/prng';
import { UsageError, type CliIO, type Command, type ParsedArgs } from './command';
import {
  checkModelTakes,
  choiceFlag,
  editorFlags,
  envFlag,
  integerFlag,
  methodFlag,
  modelFromArgs,
  modelFlags,
  numberFlag,
  readOptimizerArg,
  requiredFlag,
  stringFlag,
  withGpu,
} from './model-args';
import { loadRolloutFile, printJson } from './shared';

// ---------------------------------------------------------------------------------------------
// Where rollouts come from.

/** One update's rollouts, and what the source measured drawing them. */
export interface SourceBatch {
  rollouts: readonly Rollout[];
  /** Fields for the update's metrics line (a generated batch: reward, em, genMs, ...). */
  metrics?: Record<string, number>;
}

/** The rollouts each update trains on. */
export interface RolloutSource {
  /** For the log line: what the rollouts are and how batches are drawn. */
  description: string;
  /**
   * The batch of update `step` (0-based over the whole run, resumed updates included, so a resumed
   * run draws what the uninterrupted run would have). `model` is the model being trained: a source
   * that generates rollouts with the current policy samples from it.
   */
  batch(step: number, model: GpuModel): Promise<SourceBatch>;
}

/** The source has nothing to train update `step` on: the run stops as on a non-finite gradient. */
export class SourceExhaustedError extends Error {
  override readonly name = 'SourceExhaustedError';
}

export const ORDERS = ['random', 'file'] as const;
export type Order = (typeof ORDERS)[number];

/**
 * Indices of batch `step` (B of n rollouts). The run walks through epochs: each epoch is every
 * rollout once, in file order or in a shuffle seeded by (seed, epoch); a batch may span two epochs.
 * A pure function of its arguments, so resuming at any step continues the same sequence.
 */
export function batchIndices(n: number, B: number, step: number, order: Order, seed: number): number[] {
  const epochs = new Map<number, number[]>();
  const permutation = (epoch: number): number[] => {
    let p = epochs.get(epoch);
    if (!p) {
      p = Array.from({ length: n }, (_, i) => i);
      if (order === 'random') {
        const rng = createRng(seed * 2 ** 21 + epoch); // seed < 2^32: exact in 53 bits
        for (let i = n - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          [p[i], p[j]] = [p[j], p[i]];
        }
      }
      epochs.set(epoch, p);
    }
    return p;
  };
  return Array.from({ length: B }, (_, j) => {
    const k = step * B + j;
    return permutation(Math.floor(k / n))[k % n];
  });
}

export function fileRolloutSource(path: string, rollouts: readonly Rollout[], options: { batch: number; order: Order; seed: number }): RolloutSource {
  const { batch, order, seed } = options;
  const draw = order === 'random' ? `random batches of ${batch} (seed ${seed})` : `batches of ${batch} in file order`;
  return {
    description: `${path}: ${rollouts.length} rollout${rollouts.length === 1 ? '' : 's'}, ${draw}`,
    batch: async (step) => ({ rollouts: batchIndices(rollouts.length, batch, step, order, seed).map((i) => rollouts[i]) }),
  };
}

/** Targets the method scores in `rollout`, and the positions its plan's sequences need. */
function planFigures(rollout: Rollout, method: Method): { targets: number; positions: number } {
  const plan = buildPlan(deriveTree(rollout), method);
  const sequences = plan.method === 'sdcc' ? [plan.student, ...plan.teachers] : plan.sequences;
  let positions = 0;
  for (const s of sequences) for (const p of s.positions) positions = Math.max(positions, p + 1);
  const targets = plan.method === 'sdcc' ? plan.student.targets.length : plan.sequences.reduce((n, s) => n + s.targets.length, 0);
  return { targets, positions };
}

function scoredTargets(rollout: Rollout, method: Method): number {
  return planFigures(rollout, method).targets;
}

/**
 * The seed of update `step`'s prompts: a function of the run seed and the update alone, so a
 * resumed run plays the prompts the uninterrupted run would have.
 */
export function updateSeed(seed: number, step: number): number {
  return (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(step + 1, 0x85ebca6b)) >>> 0;
}

export interface EnvSettings {
  env: EnvSpec;
  editor: EditorKind;
  budget?: number;
  /** Rollouts per prompt (one group each). */
  group: number;
  temperature: number;
}

/**
 * Episodes of the model being trained: before update u, B/G prompts drawn from updateSeed(seed, u),
 * G rollouts each (one group per prompt), sampled from `model` as it is then: the decoder reads the
 * trainer's weight buffer, which AdamW updates in place, so every batch is on-policy. Each episode
 * is verified (its tree re-derives the views it was decoded from) and ends at its last action;
 * rollouts the method cannot train on (a plan longer than the model's positions, or no target the
 * method scores) are left out and counted. Reward and EM are those of every rollout played.
 */
export function envRolloutSource(settings: EnvSettings, options: { batch: number; seed: number; method: Method }): RolloutSource {
  const { env, editor, budget, group, temperature } = settings;
  const { batch, seed, method } = options;
  if (batch % group !== 0) throw new Error(`envRolloutSource: batch ${batch} is not a multiple of group ${group}`);
  const prompts = batch / group;
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  return {
    description:
      `${formatEnvSpec(env)} under ${editor}${budget === undefined ? '' : ` (budget ${budget})`}: ${plural(prompts, 'prompt')} × ${plural(group, 'rollout')} per update, ` +
      `played by the model being trained (temperature ${temperature}, seed ${seed})`,
    async batch(step, model) {
      const started = performance.now();
      const { createGpuModelPolicy } = await import('../gpu/generate');
      const P = model.config.nPositions;
      const config: DatasetConfig = { env, editor, budget, n: prompts, groupSize: group, seed: updateSeed(seed, step), episode: { maxContext: P } };
      const dataset = await generateDataset(config, createGpuModelPolicy(model, { temperature }), { onRollout: (result) => verifyEpisode(result) });
      const played = dataset.rollouts.map((json) => validateRollout(endAtLastAction(json), { file: json.id }));
      const rollouts: Rollout[] = [];
      let tooLong = 0;
      let noTargets = 0;
      for (const rollout of played) {
        const figures = planFigures(rollout, method);
        if (figures.positions > P) tooLong++;
        else if (figures.targets === 0) noTargets++;
        else rollouts.push(rollout);
      }
      const metrics = {
        reward: dataset.summary.meanReward,
        em: dataset.summary.em,
        genMs: performance.now() - started,
        leftOut: tooLong + noTargets,
      };
      if (rollouts.length === 0) {
        const why = [tooLong && `${tooLong} need more than the model's ${P} positions under ${method}`, noTargets && `${noTargets} have no target ${method} scores`];
        throw new SourceExhaustedError(`update ${step + 1}: none of the ${played.length} rollouts played can be trained on (${why.filter(Boolean).join(', ')})`);
      }
      return { rollouts, metrics };
    },
  };
}

/** RL's PPO ratio needs the rollout-time logprob of every target. */
function checkRolloutLogprobs(rollouts: readonly Rollout[]): void {
  for (const rollout of rollouts) {
    for (const id of rollout.targets) {
      if (!Number.isFinite(rollout.logprobs[id])) {
        throw new ValidationError(rollout.source, `rollout ${quote(rollout.id)}: target ${id} has no logprob; --objective rl needs the rollout-time logprobs`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The run's settings, and what a checkpoint remembers of them.

/** `__metadata__` keys mw train saves beside the config (the trainer adds `step`). */
const META = {
  peak: 'lr_peak',
  warmup: 'lr_warmup',
  total: 'lr_total',
  min: 'lr_min',
  seed: 'seed',
  batch: 'batch',
  order: 'order',
  group: 'group',
  temperature: 'temperature',
} as const;

export const DEFAULT_LR = 1e-3;

/** Exit status when an update's gradient is not finite (the run stops; its last good state is saved). */
export const TRAIN_STOPPED_EXIT = 4;

function savedNumber(metadata: Record<string, string>, key: string): number | undefined {
  if (!(key in metadata)) return undefined;
  const value = Number(metadata[key]);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * The lr schedule: flags first, then what the resumed checkpoint saved, then defaults (peak
 * DEFAULT_LR, warm-up 5 % of the schedule, cosine to peak/10 at the end of this run).
 */
function scheduleFrom(args: ParsedArgs, saved: Record<string, string>, start: number, steps: number): LrSchedule {
  const lr = stringFlag(args, 'lr') === undefined ? undefined : numberFlag(args, 'lr', DEFAULT_LR, 0);
  const peak = lr ?? savedNumber(saved, META.peak) ?? DEFAULT_LR;
  const total = integerFlag(args, 'lr-total', savedNumber(saved, META.total) ?? start + steps, 0);
  const warmup = integerFlag(args, 'warmup', savedNumber(saved, META.warmup) ?? Math.round(0.05 * total), 0);
  const min = lr === undefined ? (savedNumber(saved, META.min) ?? peak / 10) : peak / 10;
  if (warmup > total) throw new UsageError(`--warmup ${warmup} is longer than the schedule (--lr-total ${total})`);
  return { peak, warmup, total, min };
}

export interface Sampling {
  seed: number;
  /** Rollouts per update. */
  batch: number;
  order: Order;
}

/** Sampling settings: flags, else what the resumed checkpoint saved, else defaults. */
function samplingFrom(args: ParsedArgs, saved: Record<string, string>, defaultBatch: number): Sampling {
  const seed = integerFlag(args, 'seed', savedNumber(saved, META.seed) ?? 0, 0, 2 ** 32 - 1);
  const batch = integerFlag(args, 'batch', savedNumber(saved, META.batch) ?? defaultBatch, 1);
  const savedOrder = (ORDERS as readonly string[]).includes(saved[META.order]) ? (saved[META.order] as Order) : 'random';
  return { seed, batch, order: choiceFlag(args, 'order', ORDERS, savedOrder) };
}

/**
 * `--data FILE`: rollouts of any importable format, checked against the model (vocabulary,
 * positions under the method) and the objective (RL needs rollout logprobs) before the GPU starts.
 */
async function dataSource(
  args: ParsedArgs,
  io: CliIO,
  path: string,
  saved: Record<string, string>,
  model: { config: ModelConfig; method: Method; objective: Objective },
): Promise<{ source: RolloutSource; metadata: Record<string, string> }> {
  const file = await loadRolloutFile(path);
  checkModelTakes(model.config, file.rollouts, [model.method]);
  // A rollout whose targets the method all drops adds nothing to the loss; a batch of only such has none.
  const rollouts = file.rollouts.filter((r) => scoredTargets(r, model.method) > 0);
  if (rollouts.length === 0) throw new ValidationError({ file: path }, `no rollout has a target that ${model.method} scores`);
  if (rollouts.length < file.rollouts.length) {
    io.err(`mw train: ${path}: left out ${file.rollouts.length - rollouts.length} rollout(s) where ${model.method} scores no target\n`);
  }
  if (model.objective === 'rl') checkRolloutLogprobs(rollouts);
  const sampling = samplingFrom(args, saved, Math.min(8, rollouts.length));
  if (sampling.batch > rollouts.length) throw new UsageError(`--batch ${sampling.batch} is larger than the ${rollouts.length} rollouts of ${path}`);
  return { source: fileRolloutSource(path, rollouts, sampling), metadata: { [META.seed]: String(sampling.seed), [META.batch]: String(sampling.batch), [META.order]: sampling.order } };
}

/** Flags that only --env reads, and those that only --data reads. */
const ENV_ONLY = ['editor', 'budget', 'group', 'temperature'] as const;
const DATA_ONLY = ['order'] as const;

/** Rollouts per update when --batch is not given: about 8, whole groups. */
function defaultEnvBatch(group: number): number {
  return group * Math.max(1, Math.round(8 / group));
}

/**
 * `--env E --editor H`: a fresh batch before every update, played by the model being trained
 * (envRolloutSource). Settings: flags, else what the resumed checkpoint saved, else defaults
 * (group 4 for RL, 1 for SFT; about 8 rollouts per update; temperature 1).
 */
function envSource(
  args: ParsedArgs,
  saved: Record<string, string>,
  model: { config: ModelConfig; checkpoint: string | null; method: Method; objective: Objective },
): { source: RolloutSource; metadata: Record<string, string> } {
  const env = envFlag(requiredFlag(args, 'env', `E (${ENV_IDS.join(', ')})`));
  const { editor, budget } = editorFlags(args, ": the memory editor of --env's episodes");
  const group = integerFlag(args, 'group', savedNumber(saved, META.group) ?? (model.objective === 'rl' ? 4 : 1), 1);
  if (model.objective === 'rl' && group < 2) {
    throw new UsageError(`--objective rl needs --group G ≥ 2 rollouts per prompt (got ${group}): its advantages are relative to the prompt's group, and a group of one has none`);
  }
  const seed = integerFlag(args, 'seed', savedNumber(saved, META.seed) ?? 0, 0, 2 ** 32 - 1);
  const batch = integerFlag(args, 'batch', savedNumber(saved, META.batch) ?? defaultEnvBatch(group), 1);
  if (batch % group !== 0) throw new UsageError(`--batch ${batch} is not a multiple of --group ${group} (B/G prompts × G rollouts per update)`);
  const temperature = numberFlag(args, 'temperature', savedNumber(saved, META.temperature) ?? 1, 0);
  checkSampling({ temperature });
  if (model.config.vocabSize !== BYTE_VOCAB) {
    throw new ValidationError(
      { file: model.checkpoint ?? '--config' },
      `vocabulary ${model.config.vocabSize}: --env episodes speak the byte tokenizer (${BYTE_VOCAB} tokens)`,
    );
  }
  const settings: EnvSettings = { env, editor, budget, group, temperature };
  return {
    source: envRolloutSource(settings, { batch, seed, method: model.method }),
    metadata: {
      [META.seed]: String(seed),
      [META.batch]: String(batch),
      [META.group]: String(group),
      [META.temperature]: String(temperature),
      env: formatEnvSpec(env),
      editor,
      ...(budget === undefined ? {} : { budget: String(budget) }),
    },
  };
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  const hms = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  return hms[0] ? `${hms[0]}:${String(hms[1]).padStart(2, '0')}:${String(hms[2]).padStart(2, '0')}` : `${hms[1]}:${String(hms[2]).padStart(2, '0')}`;
}

/** stderr progress: refreshed in place on a terminal, else a line every ~10 % of the run. */
function createProgress(io: CliIO, steps: number, start: number, tty: boolean) {
  const every = Math.max(1, Math.ceil(steps / 10));
  const started = performance.now();
  let tokens = 0;
  return {
    update(done: number, m: StepMetrics, reward?: number) {
      tokens += m.tokens;
      const elapsed = (performance.now() - started) / 1000;
      const line =
        `mw train: step ${done}/${steps}${start ? ` (update ${start + done})` : ''}  loss ${m.loss.toFixed(4)}  ` +
        `${reward === undefined ? '' : `reward ${reward.toFixed(3)}  `}` +
        `${Math.round(tokens / elapsed)} tok/s  ETA ${formatDuration(((steps - done) * elapsed) / done)}`;
      if (tty) io.err(`\r${line}\x1b[K${done === steps ? '\n' : ''}`);
      else if (done % every === 0 || done === steps) io.err(`${line}\n`);
    },
  };
}

/** Writes to a temporary file beside `path`, then renames: a reader never sees half a checkpoint. */
function writeFileAtomically(path: string, bytes: Uint8Array): void {
  const temp = `${path}.${process.pid}.partial`;
  writeFileSync(temp, bytes);
  renameSync(temp, path);
}

async function saveRun(trainer: Trainer, path: string, metadata: Record<string, string>): Promise<void> {
  const { weights, optimizer } = await trainer.checkpoint(metadata);
  writeFileAtomically(path, weights);
  writeFileAtomically(optimizerStatePath(path), optimizer);
}

function metricsLine(m: StepMetrics, batch: SourceBatch): string {
  const { logprobs: _perTarget, ...fields } = m;
  return `${JSON.stringify({ ...fields, ...batch.metrics, rollouts: batch.rollouts.map((r) => r.id) })}\n`;
}

// ---------------------------------------------------------------------------------------------

const OBJECTIVES = ['sft', 'rl'] as const satisfies readonly Objective[];
const TEACHERS = ['logit-tree', 'packed-4d'] as const;

export const trainCommand: Command = {
  name: 'train',
  summary: 'train the model on rollouts (any replay method, SFT or RL, SDCC), from a file or played on-policy; writes a GPT-2 checkpoint and metrics',
  usage: [
    'mw train --method M --objective sft|rl --data FILE [--batch B] [--order random|file] --steps N --ckpt-out CKPT --metrics FILE.jsonl [...]',
    'mw train --method M --objective sft|rl --env E --editor H [--budget N] [--batch B] [--group G] [--temperature T] --steps N ... [...]',
    '  [...]: [--lambda X] [--teacher T] [--lr LR] [--warmup W] [--lr-total U] [--seed S]',
    '         [--config tiny|small|default] [--init gpt2|wide] [--ckpt-in CKPT] [--json]',
  ],
  details: [
    'Rollouts come from exactly one of --data and --env.',
    '--data FILE: each update trains on a batch of B rollouts of FILE (any importable format): an epoch is',
    'every rollout once, shuffled by --seed (or in file order); the batch of update u depends only on (seed, u).',
    `--env E --editor H (E: ${ENV_IDS.join(', ')}; H: ${EDITOR_KINDS.join(', ')}): on-policy. Before each update the model,`,
    'with the weights of that update, plays B/G prompts × G rollouts (one group per prompt) in E under H;',
    'the prompts and sampling of update u depend only on (seed, u). The rollouts record the model\'s own',
    'log π at temperature 1 (RL\'s π_rollout; T ≠ 1 samples off it). RL needs G ≥ 2 (advantages are relative',
    'to the group); SFT on these rollouts is self-distillation (the model imitates its own samples; no',
    'reward enters the loss). Each episode ends at its last action; one whose plan under M needs more than',
    'the model\'s positions, or has no target M scores, is left out and counted (leftOut).',
    'The lr schedule is linear warm-up to LR, then a half cosine to LR/10 at update U (default: the last',
    'update of this run), then LR/10; a checkpoint saves it with the seed and batch, and the order (--data)',
    'or the group and temperature (--env).',
    '--ckpt-in resumes: its weights, the AdamW state beside it (CKPT.optim.safetensors) with the update',
    'count, and the saved schedule, seed, batch, order, group and temperature (flags given now override',
    'them; --data or --env is given again). A checkpoint without optimizer state (e.g. a GPT-2 from',
    'elsewhere) starts a fresh run from its weights.',
    'CKPT gets the weights and CKPT.optim.safetensors the optimizer state. --metrics gets one JSON line per',
    'update: every training metric (step, loss, taskLoss, klSdcc, logdiff, mu, conditioningDrift, gradNorm,',
    'tokens, stepMs, ...), with --env the played batch\'s mean reward, EM, generation time (genMs) and',
    'leftOut, and the trained rollout ids. Progress (step, loss, --env reward, tokens/s, ETA) goes to stderr.',
    `An update whose gradient is not finite, or (--env) whose played rollouts none can be trained on, stops the run`,
    `(exit ${TRAIN_STOPPED_EXIT}); the checkpoint of the last good update is written.`,
  ].join('\n'),
  flags: {
    method: { type: 'string', value: 'M', help: 'replay method the loss is computed under (sdcc: naive-compressed + λ·KL)' },
    objective: { type: 'string', value: 'sft|rl', help: 'SFT (mean NLL of targets) or RL (PPO-clipped, GRPO advantages)' },
    lambda: { type: 'string', value: 'X', help: 'sdcc only: weight of the KL term (default 0.1)' },
    teacher: { type: 'string', value: 'T', help: `sdcc only: teacher layout, ${TEACHERS.join(' or ')} (default packed-4d)` },
    data: { type: 'string', value: 'FILE', help: 'rollouts to train on' },
    env: { type: 'string', value: 'E', help: `instead of --data: environment the model plays each update's rollouts in (${ENV_IDS.join(', ')})` },
    editor: { type: 'string', value: 'H', help: `--env only: memory editor of the episodes (${EDITOR_KINDS.join(', ')})` },
    budget: { type: 'string', value: 'N', help: "--env only: the editor's token budget (default: the editor's)" },
    group: { type: 'string', value: 'G', help: '--env only: rollouts per prompt, one group each (default 4 for rl, which needs ≥ 2; 1 for sft)' },
    temperature: { type: 'string', value: 'T', help: '--env only: sampling temperature, 0 = greedy (default 1)' },
    steps: { type: 'string', value: 'N', help: 'updates to run' },
    batch: { type: 'string', value: 'B', help: 'rollouts per update (default min(8, rollouts in FILE); --env: about 8, a multiple of G)' },
    order: { type: 'string', value: ORDERS.join('|'), help: '--data only: batches drawn from seeded shuffles (default) or in file order' },
    lr: { type: 'string', value: 'LR', help: `peak learning rate (default ${DEFAULT_LR})` },
    warmup: { type: 'string', value: 'W', help: 'updates of linear warm-up (default 5 % of U)' },
    'lr-total': { type: 'string', value: 'U', help: 'update at which the cosine reaches LR/10 (default: the end of this run)' },
    ...modelFlags('gpt2'),
    seed: { type: 'string', value: 'S', help: 'seed of the random init and of the batches (order, or --env prompts and sampling) (default 0)' },
    'ckpt-in': { type: 'string', value: 'CKPT', help: 'checkpoint to start from (resumes when its optimizer state is beside it)' },
    'ckpt-out': { type: 'string', value: 'CKPT', help: 'checkpoint to write (.safetensors)' },
    metrics: { type: 'string', value: 'FILE', help: 'metrics JSONL to write' },
    json: { type: 'boolean', help: 'print the run summary as JSON' },
  },
  async run(args, io) {
    const method: Method = methodFlag(args);
    if (stringFlag(args, 'objective') === undefined) throw new UsageError(`--objective is required (${OBJECTIVES.join(', ')})`);
    const objective = choiceFlag(args, 'objective', OBJECTIVES, 'sft');
    for (const flag of ['lambda', 'teacher']) {
      if (args.flags[flag] !== undefined && method !== 'sdcc') throw new UsageError(`--${flag} applies to --method sdcc only`);
    }
    const lambda = args.flags.lambda === undefined ? undefined : numberFlag(args, 'lambda', 0, 0);
    const teacher = args.flags.teacher === undefined ? undefined : choiceFlag(args, 'teacher', TEACHERS, 'logit-tree');
    if (stringFlag(args, 'steps') === undefined) throw new UsageError('--steps N is required');
    const steps = integerFlag(args, 'steps', 0, 1);
    const dataPath = stringFlag(args, 'data');
    const envName = stringFlag(args, 'env');
    if ((dataPath === undefined) === (envName === undefined)) {
      throw new UsageError(`${dataPath === undefined ? 'one' : 'only one'} of --data FILE and --env E is required (rollouts from a file, or played by the model)`);
    }
    for (const flag of dataPath === undefined ? DATA_ONLY : ENV_ONLY) {
      if (args.flags[flag] !== undefined) throw new UsageError(`--${flag} applies to ${dataPath === undefined ? '--data' : '--env'} only`);
    }
    const out = requiredFlag(args, 'ckpt-out', 'CKPT');
    const metricsPath = requiredFlag(args, 'metrics', 'FILE.jsonl');
    if (args.positionals.length) throw new UsageError(`unexpected argument ${quote(args.positionals[0])} (the rollouts go in --data FILE)`);
    for (const [flag, path] of [['ckpt-out', out], ['metrics', metricsPath]] as const) {
      if (!existsSync(dirname(resolve(path)))) throw new UsageError(`--${flag} ${path}: no such directory`);
    }
    if (resolve(metricsPath) === resolve(out) || (dataPath !== undefined && resolve(metricsPath) === resolve(dataPath))) throw new UsageError('--metrics must be a file of its own');

    const choice = modelFromArgs(args, { ckptFlag: 'ckpt-in', init: 'gpt2' });
    const { weights } = choice;
    const optimizerState = choice.checkpoint ? readOptimizerArg(choice.checkpoint.path, weights.config) : null;
    // Settings a resumed run takes from its checkpoint; a fresh run (even from a checkpoint's weights) does not.
    const saved = optimizerState ? choice.checkpoint!.metadata : {};
    const start = optimizerState?.step ?? 0;
    const { source, metadata: sourceMetadata } =
      dataPath !== undefined
        ? await dataSource(args, io, dataPath, saved, { config: weights.config, method, objective })
        : envSource(args, saved, { config: weights.config, checkpoint: choice.checkpoint?.path ?? null, method, objective });
    const schedule = scheduleFrom(args, saved, start, steps);
    const metadata: Record<string, string> = {
      [META.peak]: String(schedule.peak),
      [META.warmup]: String(schedule.warmup),
      [META.total]: String(schedule.total),
      [META.min]: String(schedule.min),
      ...sourceMetadata,
      method,
      objective,
    };

    if (choice.checkpoint && !optimizerState) {
      io.err(`mw train: no optimizer state beside ${choice.checkpoint.path}: a fresh run from its weights (update 0)\n`);
    }
    io.err(
      `mw train: ${method} ${objective}${method === 'sdcc' ? ` λ ${lambda ?? 0.1}` : ''} on ${source.description}\n` +
        `mw train: model ${choice.description}; updates ${start + 1}..${start + steps}, ` +
        `lr ${schedule.peak} (warm-up ${schedule.warmup}, cosine to ${schedule.min} at update ${schedule.total})\n`,
    );

    return withGpu(io, 'train', async ({ assertHealthy, gpu, engine }) => {
      const trainer = engine.createTrainer(gpu, weights, { schedule, optimizerState: optimizerState ?? undefined });
      const metricsFd = openSync(metricsPath, 'w');
      const progress = createProgress(io, steps, start, process.stderr.isTTY === true);
      let first: StepMetrics | undefined;
      let last: StepMetrics | undefined;
      const rewards: number[] = [];
      try {
        for (let done = 1; done <= steps; done++) {
          let metrics: StepMetrics;
          let batchOfStep: SourceBatch;
          try {
            batchOfStep = await source.batch(trainer.step, trainer.model);
            metrics = await trainer.trainStep(batchOfStep.rollouts, { method, objective, lambda, sdccTeacher: teacher, conditioningDrift: true });
          } catch (error) {
            if (!(error instanceof engine.NonFiniteGradientError || error instanceof SourceExhaustedError)) throw error;
            // The weights are those of the last good update: keep them, resumable.
            if (last) await saveRun(trainer, out, metadata);
            const saved = last ? ` Wrote the checkpoint of update ${trainer.step} to ${out}.` : '';
            return () => {
              io.err(`mw train: stopped: ${error.message}${saved}\n`);
              return TRAIN_STOPPED_EXIT;
            };
          }
          writeSync(metricsFd, metricsLine(metrics, batchOfStep));
          first ??= metrics;
          last = metrics;
          const reward = batchOfStep.metrics?.reward;
          if (reward !== undefined) rewards.push(reward);
          progress.update(done, metrics, reward);
        }
        await assertHealthy();
        await saveRun(trainer, out, metadata);
      } finally {
        closeSync(metricsFd);
        trainer.destroy();
      }
      const summary = {
        updates: steps,
        firstUpdate: first!.step,
        lastUpdate: last!.step,
        loss: { first: first!.loss, last: last!.loss },
        ...(rewards.length ? { reward: { first: rewards[0], last: rewards.at(-1)! } } : {}),
        checkpoint: out,
        optimizer: optimizerStatePath(out),
        metrics: metricsPath,
      };
      return () => {
        if (args.flags.json) printJson(io, summary);
        else {
          io.out(
            `trained updates ${summary.firstUpdate}..${summary.lastUpdate} (${method}, ${objective}): ` +
              `loss ${summary.loss.first.toFixed(4)} → ${summary.loss.last.toFixed(4)}` +
              `${summary.reward ? `, reward ${summary.reward.first.toFixed(3)} → ${summary.reward.last.toFixed(3)}` : ''}\n` +
              `wrote ${summary.checkpoint}, ${summary.optimizer}, ${summary.metrics}\n`,
          );
        }
        return 0;
      };
    });
  },
};
