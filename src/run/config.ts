// The browser's training run as plain data: what model it starts from, where its rollouts come from
// (an environment, a memory editor, the expert or the model itself), which methods train side by
// side, and the optimiser's knobs. Pure: the page, the worker, Node benchmarks and tests share it;
// runSpecOf turns it into the run engine's RunSpec (engine.ts), as `mw train` turns its flags.

import { DEMO_TASK, EDITOR_DEFAULTS, EDITOR_KINDS, editorSpec, ENV_IDS, type EditorKind, type EnvId, type EnvSpec } from '../harness';
import { MODEL_PRESETS, type ModelConfig, type ModelPreset } from '../model/config';
import type { LrSchedule } from '../objectives/adamw';
import type { Objective } from '../objectives/tokens';
import { METHODS, type Method } from '../plan/types';
import type { RunSpec } from './engine';
import type { PlaySpec } from './play';

export const PRESETS = Object.keys(MODEL_PRESETS) as ModelPreset[];
export const OBJECTIVES: readonly Objective[] = ['sft', 'rl'];
/** Comparison mode: one run per method, at most one of each. */
export const MAX_METHODS = METHODS.length;

export interface RunConfig {
  /** Model shape when the run starts from fresh weights. */
  preset: ModelPreset;
  /** A loaded GPT-2 checkpoint to start from (its name; the bytes are kept in IndexedDB), or null. */
  checkpoint: string | null;
  env: EnvId;
  /** Hops (lookup) or pages to read (collect): how many tool calls an episode needs. */
  difficulty: number;
  /** Distractor facts (lookup) or decoy pages (collect) per observation. */
  distractors: number;
  /** Filler characters per observation (the observation-length knob). */
  filler: number;
  editor: EditorKind;
  /** The editor's token budget (ignored by `none`). */
  budget: number;
  /** Most tokens in one action. */
  actTokens: number;
  /** The methods trained side by side, each its own copy of the starting weights. */
  methods: Method[];
  /** SDCC's KL weight. */
  lambda: number;
  objective: Objective;
  /** Peak learning rate (warm-up, then a cosine down to a tenth of it). */
  lr: number;
  /** Prompts per step. */
  batch: number;
  /** Rollouts per prompt (RL: the group of the group-relative advantage; SFT demonstrations use one). */
  group: number;
  seed: number;
  /** Steps of a fixed-length run; 0 runs until paused. */
  steps: number;
  /** Steps between checkpoints kept in IndexedDB. */
  checkpointEvery: number;
  /**
   * Steps between evaluations: each lane's model plays `batch` held-out prompts greedily and its
   * reward and exact match are recorded (0: never). What tells an SFT warm start that it works.
   */
  evalEvery: number;
  /** Held-out prompts each evaluation plays (one greedy episode each; the same prompts every time). */
  evalPrompts: number;
}

/**
 * The preset's sizes for the fields that depend on the model (used when the preset changes): task
 * and harness sizes that fit a model's context, so a 128-position model gets short episodes.
 */
export function presetSizes(preset: ModelPreset): Pick<RunConfig, 'difficulty' | 'distractors' | 'filler' | 'budget' | 'actTokens'> {
  return MODEL_PRESETS[preset].nPositions <= 128
    ? { difficulty: 2, distractors: 0, filler: 0, budget: 50, actTokens: 24 }
    : { difficulty: 3, distractors: 2, filler: 40, budget: EDITOR_DEFAULTS.compact.budget, actTokens: 48 };
}

export function defaultRunConfig(preset: ModelPreset = 'tiny'): RunConfig {
  return {
    preset,
    checkpoint: null,
    env: 'lookup',
    ...presetSizes(preset),
    editor: 'compact',
    methods: ['naive-compressed', 'packed-4d'],
    lambda: 0.5,
    objective: 'sft',
    lr: 3e-3,
    batch: 2,
    group: 2,
    seed: 1,
    steps: 200,
    checkpointEvery: 10,
    evalEvery: 20,
    evalPrompts: 4,
  };
}

/**
 * Every setting a starting point (Demo model, Paper claim) applies: the defaults of a new run, over
 * them the point's own task and harness. A starting point sets all of them, so what another one changed
 * before (its methods, steps, batch, editor) does not stay behind. The model shape (`preset`, one of
 * PRESETS) and the checkpoint are not among them: the checkpoint it loads sets them.
 */
export function startingPointSettings(task: Omit<Partial<RunConfig>, 'methods'> & { methods?: readonly Method[] }): Omit<RunConfig, 'preset' | 'checkpoint'> {
  const { preset: _, checkpoint: __, ...defaults } = defaultRunConfig();
  return { ...defaults, ...task, methods: [...(task.methods ?? defaults.methods)] };
}

/**
 * The pretrained demo checkpoint (public/models, trained by scripts/train-demo.sh) and the task it
 * was trained on: `collect` with three pages, no decoys and 20 filler characters, edited at a budget
 * of 100 tokens. Starting from it sets that task, and a learning rate that fine-tunes a trained model
 * without undoing it (the default 3e-3, with AdamW's first sign-like steps, halves its EM in a few
 * SFT steps even under the packed 4D mask).
 */
export const DEMO_MODEL = {
  file: 'models/demo.safetensors',
  name: 'demo.safetensors',
  task: {
    env: DEMO_TASK.env.id,
    difficulty: DEMO_TASK.env.pages,
    distractors: DEMO_TASK.env.decoys,
    filler: DEMO_TASK.env.filler,
    budget: DEMO_TASK.budget,
    actTokens: 24,
    lr: 3e-4,
  } satisfies Partial<RunConfig>,
} as const;

/**
 * The weak start (public/models, trained by scripts/train-weak.sh): the demo checkpoint fine-tuned
 * briefly on `collect` with one decoy page beside every page read. It keeps the action format but
 * has only begun to tell a page from its decoy, so its held-out EM is low: something to learn.
 */
export const WEAK_MODEL = {
  file: 'models/weak.safetensors',
  name: 'weak.safetensors',
  task: { env: 'collect', difficulty: 3, distractors: 1, filler: 20, budget: 100, actTokens: 24 } satisfies Partial<RunConfig>,
} as const;

/**
 * "The paper's claim": Naive-Compressed, Naive-Full, the packed 4D mask and SDCC side by side from
 * the weak start, SFT on the expert's demonstrations under `window` (which deletes what the notes
 * must carry), held-out EM every few steps. It is the SFT phase of `mw experiment learning` under
 * window at seed 1, step for step, so the experiment's shipped curves are where it is heading.
 */
export const PAPER_CLAIM = {
  ...WEAK_MODEL.task,
  editor: 'window',
  methods: ['naive-compressed', 'naive-full', 'packed-4d', 'sdcc'],
  lambda: 0.1,
  objective: 'sft',
  lr: 1e-3,
  batch: 4,
  group: 1,
  seed: 1,
  steps: 20,
  checkpointEvery: 10,
  evalEvery: 5,
  evalPrompts: 8,
} as const satisfies Partial<RunConfig>;

export function envSpecOf(config: RunConfig): EnvSpec {
  return config.env === 'lookup'
    ? { id: 'lookup', hops: config.difficulty, distractors: config.distractors, filler: config.filler }
    : { id: 'collect', pages: config.difficulty, decoys: config.distractors, filler: config.filler };
}

/** Every problem with a config, in words a person can act on; empty when it can start. */
export function configProblems(config: RunConfig): string[] {
  const problems: string[] = [];
  const int = (name: keyof RunConfig, min: number, max: number) => {
    const v = config[name] as number;
    if (!Number.isInteger(v) || v < min || v > max) problems.push(`${name} must be an integer in [${min}, ${max}] (got ${v})`);
  };
  if (!PRESETS.includes(config.preset)) problems.push(`unknown model preset ${config.preset}`);
  if (!ENV_IDS.includes(config.env)) problems.push(`unknown environment ${config.env}`);
  if (!EDITOR_KINDS.includes(config.editor)) problems.push(`unknown editor ${config.editor}`);
  if (!OBJECTIVES.includes(config.objective)) problems.push(`unknown objective ${config.objective}`);
  int('difficulty', 1, 8);
  int('distractors', 0, 8);
  int('filler', 0, 400);
  int('budget', 8, 4096);
  int('actTokens', 4, 256);
  int('batch', 1, 4096);
  int('group', 1, 64);
  int('seed', 0, 2 ** 32 - 1);
  int('steps', 0, 1_000_000);
  int('checkpointEvery', 1, 100_000);
  int('evalEvery', 0, 100_000);
  int('evalPrompts', 1, 4096);
  if (config.methods.length === 0) problems.push('pick at least one method');
  if (new Set(config.methods).size !== config.methods.length) problems.push('each method may run once');
  for (const m of config.methods) if (!(METHODS as readonly string[]).includes(m)) problems.push(`unknown method ${m}`);
  if (!(config.lr > 0 && config.lr <= 1)) problems.push(`learning rate must be in (0, 1] (got ${config.lr})`);
  if (!(config.lambda >= 0 && config.lambda <= 100)) problems.push(`λ must be in [0, 100] (got ${config.lambda})`);
  if (config.objective === 'rl' && config.group < 2) problems.push('RL needs a group of at least 2 rollouts per prompt (group-relative advantages)');
  return problems;
}

/** Model sizes of a run that starts from a preset (a checkpoint brings its own). */
export function presetModel(config: RunConfig): ModelConfig {
  return { ...MODEL_PRESETS[config.preset] };
}

/** Methods in the palette's order, so charts and legends list them alike. */
export function orderedMethods(methods: readonly Method[]): Method[] {
  return METHODS.filter((m) => methods.includes(m));
}

export function runSchedule(config: RunConfig): LrSchedule {
  const total = config.steps > 0 ? config.steps : 1_000_000;
  return { peak: config.lr, warmup: Math.min(10, total), total, min: config.lr / 10 };
}

/**
 * The run engine's spec of a browser run: its lanes in the palette's order, the expert's
 * demonstrations for SFT (one per prompt), each lane's own episodes for RL.
 */
export function runSpecOf(config: RunConfig): RunSpec {
  const play: PlaySpec = {
    env: envSpecOf(config),
    editor: config.editor === 'none' ? editorSpec('none') : editorSpec(config.editor, { budget: config.budget }),
    prompts: config.batch,
    group: config.objective === 'rl' ? config.group : 1,
    seed: config.seed,
    maxActTokens: config.actTokens,
  };
  return {
    methods: orderedMethods(config.methods),
    objective: config.objective,
    lambda: config.lambda,
    schedule: runSchedule(config),
    source: { kind: 'played', play, player: config.objective === 'rl' ? 'model' : 'expert', sampling: { temperature: 1 } },
    evaluation: config.evalEvery > 0 ? { every: config.evalEvery, prompts: config.evalPrompts } : undefined,
  };
}
