// `mw generate`: rollouts of a policy in an environment under a memory editor, written as docs/rollout-format.md
// JSONL through the harness's dataset writer. The policy is the WGSL model (KV-cache decoding,
// prefix reuse after edits; a checkpoint, or a seeded random init of a preset; or a Llama / Qwen model
// folder with its own tokenizer and chat template framing the turns) or the scripted expert (warm-start data, no GPU). Every episode is verified (its tree re-derives the views it was
// decoded from) before the file appears; progress and the summary go to stderr.

import { writeOutputSync } from '../util/output-file';
import { ValidationError } from '../rollout/errors';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { ENV_IDS, createEnv } from '../harness/env';
import { EDITOR_KINDS } from '../harness/editors';
import { datasetToJsonl, generateDataset, type Dataset, type DatasetConfig } from '../harness/dataset';
import { verifyEpisode } from '../harness/verify';
import type { Policy } from '../harness/policy';
import { createExpertPolicy } from '../harness/policies/expert';
import { FULL_SAMPLING, createModelPolicy, type SamplingOptions } from '../harness/policies/model';
import { hfFraming, type Framing } from '../harness/framing';
import { isModelFolderPath, modelFolderDir } from '../model/family/folder-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isObject } from '../rollout/records';
import { UsageError, type CliIO, type Command, type ParsedArgs } from './command';
import {
  choiceFlag,
  createScoredModel,
  editorFlags,
  envFlag,
  integerFlag,
  modelFlags,
  modelFromArgs,
  numberFlag,
  requiredFlag,
  samplingFlags,
  samplingFromArgs,
  scoringModelArg,
  withGpu,
} from './model-args';
import { checkOutputPath } from './shared';
import { createProgress, everyTenth } from '../present/progress';

const POLICIES = ['model', 'expert'] as const;
/** Flags that only the model policy reads. */
const MODEL_ONLY = ['ckpt', 'config', 'init', 'temperature', 'top-k', 'top-p'] as const;

/** The data set config from the flags; editor and budget are checked here, before any GPU work. */
function datasetConfig(args: ParsedArgs): DatasetConfig {
  const env = envFlag(requiredFlag(args, 'env', `E (${ENV_IDS.join(', ')})`));
  const { editor, budget } = editorFlags(args, '');
  requiredFlag(args, 'n', 'N (number of prompts)');
  requiredFlag(args, 'seed', 'S');
  return {
    env,
    editor,
    budget,
    n: integerFlag(args, 'n', 1, 1),
    groupSize: integerFlag(args, 'group', 1, 1),
    seed: integerFlag(args, 'seed', 0, 0, 2 ** 32 - 1),
  };
}

/** Runs the episodes, verifying each, with a progress line on stderr. */
async function generate(io: CliIO, config: DatasetConfig, policy: Policy, nPositions: number): Promise<{ dataset: Dataset; longBranches: number }> {
  const total = config.n * (config.groupSize ?? 1);
  let done = 0;
  let generated = 0;
  // A branch holds what was appended after its last decode too (the observation the budget
  // trigger saw): it may outgrow the model although every decoded view fit.
  let longBranches = 0;
  const progress = createProgress((text) => io.err(text), { tty: !!process.stderr.isTTY, due: everyTenth });
  const dataset = await generateDataset(config, policy, {
    onRollout(result) {
      verifyEpisode(result);
      const tree = deriveTree(validateRollout(result.rollout, { file: result.rollout.id }));
      if (tree.branches.some((b) => b.length > nPositions)) longBranches++;
      done++;
      generated += result.decodes.reduce((s, d) => s + d.actTokens.length, 0);
      progress(
        done,
        total,
        ({ elapsed, eta }) =>
          `mw generate: ${done}/${total} rollouts, ${generated} tokens generated, ${(generated / Math.max(elapsed, 1e-9)).toFixed(1)} tokens/s, ETA ${eta}`,
      );
    },
  });
  return { dataset, longBranches };
}

/** Writes the JSONL beside `out` first and renames it: a failed run leaves no file. */
function writeDataset(io: CliIO, out: string, { dataset, longBranches }: { dataset: Dataset; longBranches: number }, nPositions: number): number {
  writeOutputSync(out, datasetToJsonl(dataset.rollouts));
  const s = dataset.summary;
  const stops = Object.entries(s.stops)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  io.err(
    `mw generate: wrote ${s.rollouts} rollouts (${s.groups} groups) to ${out}: mean reward ${s.meanReward.toFixed(3)}, EM ${s.em.toFixed(3)}, ` +
      `K mean ${s.K.mean.toFixed(2)} (max ${s.K.max}), tape mean ${s.tokens.mean.toFixed(0)} tokens, longest view ${s.maxView}; stops: ${stops}\n`,
  );
  if (longBranches) {
    io.err(
      `mw generate: warning: ${longBranches} rollouts have a branch longer than the model's ${nPositions} positions ` +
        '(an observation appended after their last decode); replaying whole branches (logit-tree, packed-4d) needs a model with more positions\n',
    );
  }
  return 0;
}

/** A JSON file's value, or null when it does not read (the folder reader has named a broken config.json already). */
function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** A model's end-of-turn ids: generation_config.json's `eos_token_id` (a number or a list), else config.json's. */
function eosIds(...sources: unknown[]): number[] {
  for (const source of sources) {
    const eos = isObject(source) ? source.eos_token_id : undefined;
    const ids = (Array.isArray(eos) ? eos : [eos]).filter((id): id is number => Number.isInteger(id));
    if (ids.length) return ids;
  }
  return [];
}

/**
 * `mw generate --ckpt MODEL-FOLDER`: the family decoder (KV cache, attention-decode-gqa) as the policy,
 * the harness's pieces framed by the folder's chat template in its tokenizer's ids (harness/framing.ts);
 * rollouts record "tokenizer": "hf:<name>". The live view is bounded by the decoder's capacity.
 */
async function generateWithFolder(args: ParsedArgs, io: CliIO, config: DatasetConfig, out: string, path: string, sampling: SamplingOptions): Promise<number> {
  const fixed = ['config', 'init'].find((flag) => args.flags[flag] !== undefined);
  if (fixed) throw new UsageError(`--${fixed} does not go with --ckpt: the checkpoint fixes the model`);
  const arg = await scoringModelArg(path, io, 'generate');
  if (arg.kind !== 'family') throw new Error('generateWithFolder: not a model folder');
  const { model: family } = arg;
  if (!family.tokenizer) throw new ValidationError({ file: path }, "no tokenizer.json: the harness writes its turns in the model's own tokenizer");
  let framing: Framing;
  try {
    framing = hfFraming(family.tokenizer, eosIds(family.folder.generationConfig, readJson(join(modelFolderDir(path), 'config.json'))));
  } catch (error) {
    throw new ValidationError({ file: path }, (error as Error).message);
  }
  io.err(`mw generate: model folder ${family.description}, ${framing.tokenizer}\n`);
  return withGpu(io, 'generate', async (session) => {
    const { familyLanguageModel } = await import('../gpu/family-generate');
    const model = await createScoredModel(session, arg, io, 'generate');
    if (!('family' in model)) throw new Error('generateWithFolder: not a family model');
    try {
      const lm = familyLanguageModel(model);
      const policy = createModelPolicy(lm, { ...sampling, framing });
      // The live view plus an action must fit the decoder's positions.
      const result = await generate(io, { ...config, framing, episode: { maxContext: lm.nPositions } }, policy, lm.nPositions);
      return () => writeDataset(io, out, result, lm.nPositions);
    } finally {
      model.destroy();
    }
  });
}

export const generateCommand: Command = {
  name: 'generate',
  summary: 'generate rollouts (the model with a KV cache, or the scripted expert) in an environment under a memory editor, as JSONL',
  usage: [
    'mw generate --env E --editor H [--budget N] --n N [--group G] --seed S [--ckpt FILE | --config P [--init I]] [--temperature T] [--top-k K] [--top-p P] --out FILE.jsonl',
    'mw generate --ckpt MODEL-FOLDER --env E --editor H [--budget N] --n N [--group G] --seed S [--temperature T] [--top-k K] [--top-p P] --out FILE.jsonl',
    'mw generate --policy expert [--noise P] --env E --editor H [--budget N] --n N [--group G] --seed S --out FILE.jsonl',
  ],
  details: [
    `E is one of ${ENV_IDS.join(', ')}; H one of ${EDITOR_KINDS.join(', ')}.`,
    "The model policy records the model's log π(token | live view) at temperature 1 as each token's",
    'logprob, whatever --temperature, --top-k and --top-p the sampler used (as serving engines report',
    'raw logprobs). Decoded views never exceed the',
    "model's positions. Without --ckpt the weights are a random init (actions are noise).",
    'A MODEL-FOLDER (docs/model.md) generates with its own tokenizer: the prompt a user turn of its chat template,',
    "observations tool results, summaries user turns, each followed by the template's assistant header; an action",
    "ends with the '\\n' token (a tool call) or an end-of-turn token (generation_config.json eos_token_id: the answer).",
    'Its decoder holds 2,048 positions (fewer when max_position_embeddings is smaller); rollouts record "tokenizer": "hf:<name>".',
  ].join('\n'),
  flags: {
    env: { type: 'string', value: 'E', help: 'environment' },
    editor: { type: 'string', value: 'H', help: 'memory editor' },
    budget: { type: 'string', value: 'N', help: "the editor's token budget (default: the editor's)" },
    n: { type: 'string', value: 'N', help: 'number of prompts' },
    group: { type: 'string', value: 'G', help: 'rollouts per prompt, one group each (default 1)' },
    policy: { type: 'string', value: 'P', help: `${POLICIES.join(' or ')} (default model)` },
    ckpt: { type: 'string', value: 'FILE', help: 'GPT-2 safetensors checkpoint, or a Llama / Qwen2 / Qwen3 model folder (default: a random init)' },
    ...modelFlags('gpt2'),
    seed: { type: 'string', value: 'S', help: 'data set seed: prompts, sampling, and the random init' },
    ...samplingFlags('', FULL_SAMPLING),
    noise: { type: 'string', value: 'P', help: 'expert only: probability of a random well-formed action (default 0)' },
    out: { type: 'string', value: 'FILE', help: 'output JSONL file' },
  },
  async run(args, io) {
    if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`);
    const config = datasetConfig(args);
    const out = requiredFlag(args, 'out', 'FILE.jsonl');
    await checkOutputPath('out', out, typeof args.flags.ckpt === 'string' ? [args.flags.ckpt] : []);
    const policyKind = choiceFlag(args, 'policy', POLICIES, 'model');

    if (policyKind === 'expert') {
      for (const flag of MODEL_ONLY) if (args.flags[flag] !== undefined) throw new UsageError(`--${flag} applies to the model policy, not --policy expert`);
      const noise = numberFlag(args, 'noise', 0, 0, 1);
      const result = await generate(io, config, createExpertPolicy(createEnv(config.env), { noise }), Infinity);
      return writeDataset(io, out, result, Infinity);
    }

    if (args.flags.noise !== undefined) throw new UsageError('--noise applies to --policy expert');
    const sampling = samplingFromArgs(args, FULL_SAMPLING);
    const ckpt = args.flags.ckpt;
    if (typeof ckpt === 'string' && isModelFolderPath(ckpt)) return generateWithFolder(args, io, config, out, ckpt, sampling);
    const choice = modelFromArgs(args, { ckptFlag: 'ckpt', init: 'gpt2' });
    const { weights } = choice;
    if (weights.config.vocabSize !== BYTE_VOCAB) {
      throw new ValidationError(
        { file: choice.checkpoint?.path ?? '--config' },
        `vocabulary ${weights.config.vocabSize}: the harness speaks the byte tokenizer (${BYTE_VOCAB} tokens)`,
      );
    }
    io.err(choice.checkpoint ? `mw generate: checkpoint ${choice.description}\n` : `mw generate: no --ckpt: ${choice.description}; actions are noise\n`);
    const nPositions = weights.config.nPositions;
    return withGpu(io, 'generate', async ({ gpu, engine }) => {
      const { createGpuModelPolicy } = await import('../gpu/generate');
      const model = engine.createGpuModel(gpu, weights);
      try {
        // The live view plus an action must fit the model's positions.
        const result = await generate(io, { ...config, episode: { maxContext: nPositions } }, createGpuModelPolicy(model, sampling), nPositions);
        return () => writeDataset(io, out, result, nPositions);
      } finally {
        model.destroy();
      }
    });
  },
};
