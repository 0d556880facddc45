// `mw train`: trains the GPT-2 model on rollouts with a replay method and an objective (docs/methods.md,
// docs/objectives.md) and writes a GPT-2 checkpoint, its optimizer state beside it, and one metrics line
// per update. A thin caller of the run engine (src/run): its flags become a RunSpec whose source is a
// data file (`--data`), or episodes played before every update in an environment under a memory
// editor (`--env`), by the model being trained or by the scripted expert.

import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { optimizerStatePath } from '../model/checkpoint-file';
import { asOutputError, lockOutput } from '../util/output-file';
import type { ModelConfig } from '../model/config';
import type { LrSchedule } from '../objectives/adamw';
import { methodNeeds } from '../plan/needs';
import type { Method } from '../plan/types';
import { ValidationError, quote } from '../rollout/errors';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { deriveTree } from '../tree/derive';
import { EDITOR_KINDS, editorSpec } from '../harness/editors';
import { ENV_IDS, formatEnvSpec } from '../harness/env';
import { EPISODE_DEFAULTS } from '../harness/episode';
import { checkSampling } from '../harness/policies/model';
import { SDCC_GATES } from '../objectives/sdcc';
import { OBJECTIVES } from '../run/config';
import type { LaneStep, RolloutSource, RunSpec } from '../run/engine';
import { readLaneCheckpoint, writeLaneCheckpoint } from '../run/files';
import { ORDERS } from '../run/seeds';
import { stepFiguresOf, type StepMetrics } from '../metrics/step';
import { createProgress, everyTenth } from '../present/progress';
import { UsageError, type CliIO, type Command, type ParsedArgs } from './command';
import {
  checkModelTakes,
  choiceFlag,
  editorFlags,
  envFlag,
  integerFlag,
  methodFlag,
  modelFromArgs,
  refuseFamilyModel,
  modelFlags,
  numberFlag,
  requiredFlag,
  stringFlag,
  withGpu,
} from './model-args';
import { checkOutputPath, loadRolloutFile, printJson } from './shared';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

// ---------------------------------------------------------------------------------------------
// The run's settings, and what a checkpoint remembers of them (its `__metadata__`, docs/model.md).

export const DEFAULT_LR = 1e-3;

/** Updates between checkpoints when --checkpoint-every is not given: a crash loses at most this many. */
export const DEFAULT_CHECKPOINT_EVERY = 100;

/** Exit status when an update's gradient is not finite (the run stops; its last good state is saved). */
export const TRAIN_STOPPED_EXIT = 4;

const PLAYERS = ['model', 'expert'] as const;

function savedNumber(metadata: Record<string, string>, key: string): number | undefined {
  const value = Number(metadata[key]);
  return Number.isFinite(value) ? value : undefined;
}

function savedChoice<T extends string>(metadata: Record<string, string>, key: string, choices: readonly T[], fallback: T): T {
  return (choices as readonly string[]).includes(metadata[key]) ? (metadata[key] as T) : fallback;
}

/**
 * The lr schedule: flags first, then what the resumed checkpoint saved, then defaults (peak
 * DEFAULT_LR, warm-up 5 % of the schedule, cosine to peak/10 at the end of this run).
 */
function scheduleFrom(args: ParsedArgs, saved: Record<string, string>, start: number, steps: number): LrSchedule {
  const lr = stringFlag(args, 'lr') === undefined ? undefined : numberFlag(args, 'lr', DEFAULT_LR, 0);
  const peak = lr ?? savedNumber(saved, 'lr_peak') ?? DEFAULT_LR;
  const total = integerFlag(args, 'lr-total', savedNumber(saved, 'lr_total') ?? start + steps, 0);
  const warmup = integerFlag(args, 'warmup', savedNumber(saved, 'lr_warmup') ?? Math.round(0.05 * total), 0);
  const min = lr === undefined ? (savedNumber(saved, 'lr_min') ?? peak / 10) : peak / 10;
  if (warmup > total) throw new UsageError(`--warmup ${warmup} is longer than the schedule (--lr-total ${total})`);
  return { peak, warmup, total, min };
}

interface SourceChoice {
  source: RolloutSource;
  /** For the log line: what the rollouts are and how batches are drawn. */
  description: string;
  /** What a resumed run takes from the checkpoint, after the schedule and the seed. */
  metadata: Record<string, string>;
}

/** What both sources read of the run: the model, the method and objective, and the seed of the batches. */
interface RunSettings {
  config: ModelConfig;
  checkpoint: string | null;
  method: Method;
  objective: RunSpec['objective'];
  seed: number;
}

/**
 * `--data FILE`: rollouts of any importable format, checked against the model (vocabulary,
 * positions under the method) and the objective (RL needs rollout logprobs) before the GPU starts.
 */
async function dataSource(args: ParsedArgs, io: CliIO, path: string, saved: Record<string, string>, run: RunSettings): Promise<SourceChoice> {
  const file = await loadRolloutFile(path);
  const allTrees = file.rollouts.map(deriveTree);
  checkModelTakes(run.config, file.rollouts, [run.method], allTrees);
  // A rollout whose targets the method all drops adds nothing to the loss; a batch of only such has none.
  const kept = file.rollouts.flatMap((_r, i) => (methodNeeds(allTrees[i], run.method).targets > 0 ? [i] : []));
  if (kept.length === 0) throw new ValidationError({ file: path }, `no rollout has a target that ${run.method} scores`);
  if (kept.length < file.rollouts.length) {
    io.err(`mw train: ${path}: left out ${file.rollouts.length - kept.length} rollout(s) where ${run.method} scores no target\n`);
  }
  const rollouts = kept.map((i) => file.rollouts[i]);
  // RL's PPO ratio needs the rollout-time logprob of every target.
  if (run.objective === 'rl') {
    for (const rollout of rollouts) {
      const id = rollout.targets.find((t) => !Number.isFinite(rollout.logprobs[t]));
      if (id !== undefined)
        throw new ValidationError(rollout.source, `rollout ${quote(rollout.id)}: target ${id} has no logprob; --objective rl needs the rollout-time logprobs`);
    }
  }
  const batch = integerFlag(args, 'batch', savedNumber(saved, 'batch') ?? Math.min(8, rollouts.length), 1);
  const order = choiceFlag(args, 'order', ORDERS, savedChoice(saved, 'order', ORDERS, 'random'));
  if (batch > rollouts.length) throw new UsageError(`--batch ${batch} is larger than the ${rollouts.length} rollouts of ${path}`);
  const draw = order === 'random' ? `random batches of ${batch} (seed ${run.seed})` : `batches of ${batch} in file order`;
  return {
    source: { kind: 'file', rollouts, trees: kept.map((i) => allTrees[i]), batch, order, seed: run.seed },
    description: `${path}: ${plural(rollouts.length, 'rollout')}, ${draw}`,
    metadata: { batch: String(batch), order },
  };
}

/** Flags that only --env reads, and those that only --data reads. */
const ENV_ONLY = ['editor', 'budget', 'group', 'temperature', 'player'] as const;
const DATA_ONLY = ['order'] as const;

/**
 * `--env E --editor H`: a fresh batch before every update, B/G prompts drawn from the run's seed and
 * the update (src/run/seeds.ts), G rollouts each, played by the model being trained (on-policy: its
 * weights of that update) or by the scripted expert (`--player expert`, SFT on demonstrations).
 * Settings: flags, else what the resumed checkpoint saved, else defaults (group 4 for RL, 1 for SFT;
 * about 8 rollouts per update; temperature 1).
 */
function envSource(args: ParsedArgs, saved: Record<string, string>, run: RunSettings): SourceChoice {
  const env = envFlag(requiredFlag(args, 'env', `E (${ENV_IDS.join(', ')})`));
  const { editor, budget } = editorFlags(args, ": the memory editor of --env's episodes");
  const player = choiceFlag(args, 'player', PLAYERS, savedChoice(saved, 'player', PLAYERS, 'model'));
  if (player === 'expert' && run.objective !== 'sft')
    throw new UsageError('--player expert plays demonstrations for --objective sft (RL learns from its own episodes)');
  if (player === 'expert' && args.flags.temperature !== undefined) throw new UsageError('--temperature applies to --player model only');
  const group = integerFlag(args, 'group', savedNumber(saved, 'group') ?? (run.objective === 'rl' ? 4 : 1), 1);
  if (run.objective === 'rl' && group < 2) {
    throw new UsageError(
      `--objective rl needs --group G ≥ 2 rollouts per prompt (got ${group}): its advantages are relative to the prompt's group, and a group of one has none`,
    );
  }
  // About 8 rollouts, whole groups.
  const batch = integerFlag(args, 'batch', savedNumber(saved, 'batch') ?? group * Math.max(1, Math.round(8 / group)), 1);
  if (batch % group !== 0) throw new UsageError(`--batch ${batch} is not a multiple of --group ${group} (B/G prompts × G rollouts per update)`);
  const temperature = numberFlag(args, 'temperature', savedNumber(saved, 'temperature') ?? 1, 0);
  checkSampling({ temperature });
  if (run.config.vocabSize !== BYTE_VOCAB) {
    throw new ValidationError(
      { file: run.checkpoint ?? '--config' },
      `vocabulary ${run.config.vocabSize}: --env episodes speak the byte tokenizer (${BYTE_VOCAB} tokens)`,
    );
  }
  const prompts = batch / group;
  const by = player === 'expert' ? `the scripted expert (seed ${run.seed})` : `the model being trained (temperature ${temperature}, seed ${run.seed})`;
  return {
    source: {
      kind: 'played',
      play: { env, editor: editorSpec(editor, { budget }), prompts, group, seed: run.seed, maxActTokens: EPISODE_DEFAULTS.maxActTokens },
      player,
      sampling: { temperature },
    },
    description:
      `${formatEnvSpec(env)} under ${editor}${budget === undefined ? '' : ` (budget ${budget})`}: ${plural(prompts, 'prompt')} × ${plural(group, 'rollout')} per update, ` +
      `played by ${by}`,
    metadata: {
      batch: String(batch),
      group: String(group),
      temperature: String(temperature),
      player,
      env: formatEnvSpec(env),
      editor,
      ...(budget === undefined ? {} : { budget: String(budget) }),
    },
  };
}

/** stderr progress: refreshed in place on a terminal, else a line every ~10 % of the run. */
function trainProgress(io: CliIO, steps: number, start: number, tty: boolean) {
  const progress = createProgress((text) => io.err(text), { tty, due: everyTenth });
  let tokens = 0;
  return (done: number, m: StepMetrics, reward?: number) => {
    tokens += m.tokens;
    progress(
      done,
      steps,
      ({ elapsed, eta }) =>
        `mw train: step ${done}/${steps}${start ? ` (update ${start + done})` : ''}  loss ${m.loss.toFixed(4)}  ` +
        `${reward === undefined ? '' : `reward ${reward.toFixed(3)}  `}` +
        `${Math.round(tokens / elapsed)} tok/s  ETA ${eta}`,
    );
  };
}

/** One metrics line: the trainer's figures, a played batch's reward, EM, generation time and left-out count, the trained ids. */
function metricsLine(step: LaneStep): string {
  const played = step.batch.played;
  const batch = played ? { reward: played.reward, em: played.em, genMs: step.genMs, leftOut: step.leftOut.length } : {};
  return `${JSON.stringify({ ...stepFiguresOf(step.metrics!), ...batch, rollouts: step.trained.map((r) => r.id) })}\n`;
}

// ---------------------------------------------------------------------------------------------

const TEACHERS = ['logit-tree', 'packed-4d'] as const;

export const trainCommand: Command = {
  name: 'train',
  summary: 'train the model on rollouts (any replay method, SFT or RL, SDCC), from a file or played on-policy; writes a GPT-2 checkpoint and metrics',
  usage: [
    'mw train --method M --objective sft|rl --data FILE [--batch B] [--order random|file] --steps N --ckpt-out CKPT --metrics FILE.jsonl [...]',
    'mw train --method M --objective sft|rl --env E --editor H [--budget N] [--player model|expert] [--batch B] [--group G] [--temperature T] --steps N ... [...]',
    '  [...]: [--lambda X] [--teacher T] [--sdcc-gate leaves|advantage] [--lr LR] [--warmup W] [--lr-total U] [--seed S] [--checkpoint-every K]',
    '         [--config tiny|small|default] [--init gpt2|wide] [--ckpt-in CKPT] [--json]',
  ],
  details: [
    'Rollouts come from exactly one of --data and --env.',
    '--data FILE: each update trains on a batch of B rollouts of FILE (any importable format): an epoch is',
    'every rollout once, shuffled by --seed (or in file order); the batch of update u depends only on (seed, u).',
    `--env E --editor H (E: ${ENV_IDS.join(', ')}; H: ${EDITOR_KINDS.join(', ')}): on-policy. Before each update the model,`,
    'with the weights of that update, plays B/G prompts × G rollouts (one group per prompt) in E under H;',
    "the prompts and sampling of update u depend only on (seed, u), as in the browser's runs (update 1 plays",
    "`mw generate --seed S`'s prompts). The rollouts record the model's own log π at temperature 1 (RL's",
    'π_rollout; T ≠ 1 samples off it). RL needs G ≥ 2 (advantages are relative to the group); SFT on these',
    'rollouts is self-distillation (the model imitates its own samples; no reward enters the loss).',
    "--player expert (SFT only): the scripted expert plays the same prompts instead, the browser's SFT.",
    "Each episode ends at its last action; one whose plan under M needs more than the model's positions,",
    'or has no target M scores, is left out and counted (leftOut).',
    'The lr schedule is linear warm-up to LR, then a half cosine to LR/10 at update U (default: the last',
    'update of this run), then LR/10; a checkpoint saves it with the seed and batch, and the order (--data)',
    'or the group, temperature and player (--env).',
    `A checkpoint is written every K updates (default ${DEFAULT_CHECKPOINT_EVERY}) and at the end, so a crash loses at most K;`,
    '--ckpt-in resumes: its weights, the AdamW state beside it (CKPT.optim.safetensors) with the update',
    'count, and the saved schedule, seed, batch, order, group, temperature and player (flags given now',
    'override them; --data or --env is given again): the resumed updates are those of the uninterrupted run.',
    'A checkpoint without optimizer state (e.g. a GPT-2 from elsewhere) starts a fresh run from its weights.',
    'CKPT gets the weights and CKPT.optim.safetensors the optimizer state, saved as one unit (a kill during a',
    'save leaves the old pair or the new one; --ckpt-in completes a save cut short and refuses a mixed pair;',
    'docs/reliability.md). --metrics gets one JSON line per',
    'update: every training metric (step, loss, taskLoss, klSdcc, logdiff, mu, conditioningDrift, gradNorm,',
    "tokens, stepMs, ...), with --env the played batch's mean reward, EM, generation time (genMs) and",
    'leftOut, and the trained rollout ids. Progress (step, loss, --env reward, tokens/s, ETA) goes to stderr.',
    `An update whose gradient is not finite, or (--env) whose played rollouts none can be trained on, stops the run`,
    `(exit ${TRAIN_STOPPED_EXIT}); the checkpoint of the last good update is written.`,
  ].join('\n'),
  flags: {
    method: { type: 'string', value: 'M', help: 'replay method the loss is computed under (sdcc: naive-compressed + λ·KL)' },
    objective: { type: 'string', value: 'sft|rl', help: 'SFT (mean NLL of targets) or RL (PPO-clipped, GRPO advantages)' },
    lambda: { type: 'string', value: 'X', help: 'sdcc only: weight of the KL term (default 0.1)' },
    teacher: { type: 'string', value: 'T', help: `sdcc only: teacher layout, ${TEACHERS.join(' or ')} (default packed-4d)` },
    'sdcc-gate': {
      type: 'string',
      value: SDCC_GATES.join('|'),
      help: "sdcc only: the KL at every diverging leaf (leaves, the paper's form, default) or, under RL, only at those of rollouts with a non-zero advantage (advantage)",
    },
    data: { type: 'string', value: 'FILE', help: 'rollouts to train on' },
    env: { type: 'string', value: 'E', help: `instead of --data: environment the model plays each update's rollouts in (${ENV_IDS.join(', ')})` },
    editor: { type: 'string', value: 'H', help: `--env only: memory editor of the episodes (${EDITOR_KINDS.join(', ')})` },
    budget: { type: 'string', value: 'N', help: "--env only: the editor's token budget (default: the editor's)" },
    player: {
      type: 'string',
      value: PLAYERS.join('|'),
      help: '--env only: who plays the episodes, the model being trained (default) or the scripted expert (sft)',
    },
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
    'checkpoint-every': {
      type: 'string',
      value: 'K',
      help: `updates between checkpoints written to CKPT (default ${DEFAULT_CHECKPOINT_EVERY}; the last update always)`,
    },
    'ckpt-in': { type: 'string', value: 'CKPT', help: 'checkpoint to start from (resumes when its optimizer state is beside it)' },
    'ckpt-out': { type: 'string', value: 'CKPT', help: 'checkpoint to write (.safetensors)' },
    metrics: { type: 'string', value: 'FILE', help: 'metrics JSONL to write' },
    json: { type: 'boolean', help: 'print the run summary as JSON' },
  },
  async run(args, io) {
    const method: Method = methodFlag(args);
    if (stringFlag(args, 'objective') === undefined) throw new UsageError(`--objective is required (${OBJECTIVES.join(', ')})`);
    const objective = choiceFlag(args, 'objective', OBJECTIVES, 'sft');
    for (const flag of ['lambda', 'teacher', 'sdcc-gate']) {
      if (args.flags[flag] !== undefined && method !== 'sdcc') throw new UsageError(`--${flag} applies to --method sdcc only`);
    }
    const lambda = args.flags.lambda === undefined ? undefined : numberFlag(args, 'lambda', 0, 0);
    const teacher = args.flags.teacher === undefined ? undefined : choiceFlag(args, 'teacher', TEACHERS, 'logit-tree');
    const sdccGate = choiceFlag(args, 'sdcc-gate', SDCC_GATES, 'leaves');
    if (stringFlag(args, 'steps') === undefined) throw new UsageError('--steps N is required');
    const steps = integerFlag(args, 'steps', 0, 1);
    const checkpointEvery = integerFlag(args, 'checkpoint-every', DEFAULT_CHECKPOINT_EVERY, 1);
    const dataPath = stringFlag(args, 'data');
    const envName = stringFlag(args, 'env');
    if ((dataPath === undefined) === (envName === undefined)) {
      throw new UsageError(
        `${dataPath === undefined ? 'one' : 'only one'} of --data FILE and --env E is required (rollouts from a file, or played by the model)`,
      );
    }
    for (const flag of dataPath === undefined ? DATA_ONLY : ENV_ONLY) {
      if (args.flags[flag] !== undefined) throw new UsageError(`--${flag} applies to ${dataPath === undefined ? '--data' : '--env'} only`);
    }
    const out = requiredFlag(args, 'ckpt-out', 'CKPT');
    const metricsPath = requiredFlag(args, 'metrics', 'FILE.jsonl');
    if (args.positionals.length) throw new UsageError(`unexpected argument ${quote(args.positionals[0])} (the rollouts go in --data FILE)`);
    for (const [flag, path] of [
      ['ckpt-out', out],
      ['metrics', metricsPath],
    ] as const) {
      if (!existsSync(dirname(resolve(path)))) throw new UsageError(`--${flag} ${path}: no such directory`);
    }
    if (resolve(metricsPath) === resolve(out) || (dataPath !== undefined && resolve(metricsPath) === resolve(dataPath)))
      throw new UsageError('--metrics must be a file of its own');
    // Outputs replace only regular files that are no input under any name (--ckpt-in may be --ckpt-out: a resume in place).
    const ckptIn = stringFlag(args, 'ckpt-in');
    // Training stays GPT-2 (docs/model.md): a model folder of the Llama / Qwen family is refused in one line.
    if (ckptIn !== undefined) refuseFamilyModel(ckptIn, 'training supports GPT-2 checkpoints only');
    const data = dataPath === undefined ? [] : [dataPath];
    await checkOutputPath('ckpt-out', out, data);
    await checkOutputPath('ckpt-out', optimizerStatePath(out), data);
    await checkOutputPath('metrics', metricsPath, [
      ...data,
      out,
      optimizerStatePath(out),
      ...(ckptIn === undefined ? [] : [ckptIn, optimizerStatePath(ckptIn)]),
    ]);
    // One writer per checkpoint name: a second run on the same --ckpt-out refuses here, naming the first.
    const unlock = lockOutput(out, 'being written by another mw train');
    try {
      // The weights and the optimizer state beside them are read as one pair (src/run/files.ts).
      const choice = modelFromArgs(args, { ckptFlag: 'ckpt-in', init: 'gpt2', read: readLaneCheckpoint });
      const { weights } = choice;
      const optimizerState = choice.checkpoint?.optimizer ?? null;
      // Settings a resumed run takes from its checkpoint; a fresh run (even from a checkpoint's weights) does not.
      const saved = optimizerState ? choice.checkpoint!.metadata : {};
      const start = optimizerState?.step ?? 0;
      const seed = integerFlag(args, 'seed', savedNumber(saved, 'seed') ?? 0, 0, 2 ** 32 - 1);
      const settings = { config: weights.config, checkpoint: choice.checkpoint?.path ?? null, method, objective, seed };
      const {
        source,
        description,
        metadata: sourceMetadata,
      } = dataPath !== undefined ? await dataSource(args, io, dataPath, saved, settings) : envSource(args, saved, settings);
      const schedule = scheduleFrom(args, saved, start, steps);
      // The checkpoint's `__metadata__` beside the config (the trainer adds `step`).
      const metadata: Record<string, string> = {
        lr_peak: String(schedule.peak),
        lr_warmup: String(schedule.warmup),
        lr_total: String(schedule.total),
        lr_min: String(schedule.min),
        seed: String(seed),
        ...sourceMetadata,
        method,
        objective,
      };
      const spec: RunSpec = { methods: [method], objective, lambda, sdccTeacher: teacher, sdccGate, schedule, conditioningDrift: true, source };

      if (choice.checkpoint && !optimizerState) {
        io.err(`mw train: no optimizer state beside ${choice.checkpoint.path}: a fresh run from its weights (update 0)\n`);
      }
      if (choice.checkpoint?.recovered) {
        io.err(`mw train: ${choice.checkpoint.path}: completed a save that was cut short (its optimizer state was rolled forward)\n`);
      }
      io.err(
        `mw train: ${method} ${objective}${method === 'sdcc' ? ` λ ${lambda ?? 0.1}` : ''} on ${description}\n` +
          `mw train: model ${choice.description}; updates ${start + 1}..${start + steps}, ` +
          `lr ${schedule.peak} (warm-up ${schedule.warmup}, cosine to ${schedule.min} at update ${schedule.total})\n`,
      );

      return await withGpu(io, 'train', async ({ assertHealthy, gpu }) => {
        const { checkpointDue, createRunEngine, StepFailedError } = await import('../run/engine');
        const run = createRunEngine(gpu, spec, { weights, resume: optimizerState ? { [method]: { weights, optimizer: optimizerState } } : undefined });
        const [lane] = run.lanes;
        const save = async () => {
          // A validation error would have left wrong numbers: only a healthy state is written.
          await assertHealthy();
          await writeLaneCheckpoint(out, lane.trainer, metadata);
        };
        const metricsFd = openSync(metricsPath, 'w');
        const progress = trainProgress(io, steps, start, process.stderr.isTTY === true);
        let first: StepMetrics | undefined;
        let last: StepMetrics | undefined;
        const rewards: number[] = [];
        try {
          for (let done = 1; done <= steps; done++) {
            let step: LaneStep;
            try {
              [step] = await run.next();
            } catch (error) {
              if (!(error instanceof StepFailedError) || error.kind === 'failed') throw error;
              // The weights are those of the last good update: keep them, resumable.
              if (last) await save();
              const wrote = last ? ` Wrote the checkpoint of update ${lane.trainer.step} to ${out}.` : '';
              return () => {
                io.err(`mw train: stopped: ${error.reason}${wrote}\n`);
                return TRAIN_STOPPED_EXIT;
              };
            }
            const metrics = step.metrics!;
            try {
              writeSync(metricsFd, metricsLine(step));
            } catch (error) {
              throw asOutputError(metricsPath, error);
            }
            first ??= metrics;
            last = metrics;
            const reward = step.batch.played?.reward;
            if (reward !== undefined) rewards.push(reward);
            progress(done, metrics, reward);
            if (checkpointDue(run.step, checkpointEvery, done === steps)) await save();
          }
        } finally {
          closeSync(metricsFd);
          run.destroy();
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
    } finally {
      unlock();
    }
  },
};
