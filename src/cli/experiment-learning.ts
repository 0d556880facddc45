// `mw experiment learning`: learning curves from the weak start (issue 20). Every replay method,
// several seeds, an editor that deletes and one that summarises: SFT on the expert's demonstrations
// and on-policy RL, held-out greedy EM every few updates, SDCC's λ swept on the RL runs
// (src/experiments/learning-run.ts); writes results.json, table.md, reference.json (the app's
// dashed curves) and SVG curves (src/experiments/learning-report.ts) into --out DIR.

import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDITOR_KINDS, editorSpec, isEditorKind, type EditorKind } from '../harness/editors';
import { formatEnvSpec, type EnvSpec } from '../harness/env';
import { COLLECT_DEFAULTS } from '../harness/env/collect';
import { LOOKUP_DEFAULTS } from '../harness/env/lookup';
import { learningUnits, phaseRunConfig, referenceCurves, type LearningConfig, type LearningResults, type PhaseSizes } from '../experiments/learning';
import { METHODS, isMethod, type Method } from '../plan/types';
import { ValidationError, quote } from '../rollout/errors';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { configProblems, PAPER_CLAIM, WEAK_MODEL } from '../run/config';
import { UsageError, type CliIO, type FlagSpec, type ParsedArgs } from './command';
import { envFlag, integerFlag, listFlag, modelFromArgs, numberFlag, outFolder, stringFlag, withGpu, writeAtomically } from './model-args';
import { createProgress, duration } from '../present/progress';

/** The weak start (scripts/train-weak.sh): --ckpt's default. */
const WEAK_CHECKPOINT = fileURLToPath(new URL('../../public/models/weak.safetensors', import.meta.url));

/** The weak start's task (src/run/config.ts WEAK_MODEL): collect with one decoy page beside every page read, edited at a budget of 100 tokens. */
const WEAK_TASK = {
  env: { id: 'collect', pages: WEAK_MODEL.task.difficulty, decoys: WEAK_MODEL.task.distractors, filler: WEAK_MODEL.task.filler } satisfies EnvSpec,
  budget: WEAK_MODEL.task.budget,
} as const;

interface Sizes {
  editors: readonly EditorKind[];
  seeds: readonly number[];
  sft: PhaseSizes;
  rl: PhaseSizes;
  evalPrompts: number;
  sweep: readonly number[];
  gated: readonly number[];
}

/**
 * Sizes of a full run (about an hour on two quiet CPU cores with SwiftShader; generation dominates:
 * every held-out evaluation decodes `evalPrompts` episodes greedily, every RL update prompts × group
 * sampled ones) and of --quick (minutes: the machinery end to end, figures too small to mean much);
 * flags override each.
 */
const LEARNING_SIZES: { full: Sizes; quick: Sizes } = {
  full: {
    editors: ['window', 'compact'],
    seeds: [1, 2, 3],
    // The app's "The paper's claim" is this SFT phase under window at seed 1: one set of numbers.
    sft: { updates: PAPER_CLAIM.steps, prompts: PAPER_CLAIM.batch, group: 1, lr: PAPER_CLAIM.lr, evalEvery: PAPER_CLAIM.evalEvery },
    rl: { updates: 6, prompts: 2, group: 4, lr: 1e-3, evalEvery: 3 },
    evalPrompts: PAPER_CLAIM.evalPrompts,
    sweep: [0.01, 0.03, 0.1, 0.3],
    gated: [0.1],
  },
  quick: {
    editors: ['window', 'compact'],
    seeds: [1, 2, 3],
    sft: { updates: 2, prompts: 2, group: 1, lr: 1e-3, evalEvery: 2 },
    rl: { updates: 2, prompts: 1, group: 2, lr: 1e-3, evalEvery: 2 },
    evalPrompts: 2,
    sweep: [0.01, 0.03, 0.1, 0.3],
    gated: [0.1],
  },
};
const LEARNING_LAMBDA = PAPER_CLAIM.lambda;
const ACT_TOKENS = WEAK_MODEL.task.actTokens;

export const LEARNING_FLAGS: Record<string, FlagSpec> = {
  seeds: { type: 'string', value: 'a,b', help: 'learning: the seeds, one run of each method per seed (default 1,2,3)' },
  'sft-updates': { type: 'string', value: 'N', help: 'learning: SFT updates per run' },
  'sft-prompts': { type: 'string', value: 'N', help: 'learning: expert demonstrations per SFT update' },
  'sft-lr': { type: 'string', value: 'LR', help: 'learning: peak learning rate of the SFT runs' },
  'rl-updates': { type: 'string', value: 'N', help: 'learning: RL updates per run' },
  'rl-prompts': { type: 'string', value: 'N', help: 'learning: prompts per RL update (one group each)' },
  'rl-lr': { type: 'string', value: 'LR', help: 'learning: peak learning rate of the RL runs' },
  'sft-eval-every': { type: 'string', value: 'N', help: 'learning: SFT updates between held-out evaluations' },
  'rl-eval-every': { type: 'string', value: 'N', help: 'learning: RL updates between held-out evaluations' },
  sweep: { type: 'string', value: 'a,b', help: "learning: SDCC's λ values on the RL runs (default 0.01,0.03,0.1,0.3)" },
  gated: { type: 'string', value: 'a,b', help: 'learning: λ values of the advantage-gated SDCC on the RL runs (default 0.1; "none" for none)' },
  resume: { type: 'boolean', help: 'learning: keep the runs of DIR/results.json (same config) and run the rest' },
};

/** Flags only `mw experiment matrix` reads. */
const MATRIX_ONLY = ['n', 'steps', 'lr', 'bins', 'temperature', 'top-k', 'top-p', 'config', 'seed'] as const;

/** `--NAME a,b` parsed entry by entry (seeds, λ values): the entries PARSE accepts, no entry twice. */
function listOf<T>(text: string | undefined, name: string, parse: (item: string) => T | undefined, fallback: readonly T[]): T[] {
  if (text === undefined) return [...fallback];
  const items = text.split(',').map((s) => s.trim());
  const out = items.map((item) => {
    const v = parse(item);
    if (v === undefined) throw new UsageError(`--${name}: ${quote(item)} is not valid`);
    return v;
  });
  if (new Set(items).size !== items.length) throw new UsageError(`--${name} lists an entry twice`);
  if (!out.length) throw new UsageError(`--${name} lists nothing`);
  return out;
}

/**
 * A partial `--env` (`collect:pages=2`) with its other knobs at the environment's defaults, as
 * `mw experiment matrix` builds it: the browser's run config that every run trains sets each one.
 */
function everyKnob(spec: EnvSpec): EnvSpec {
  // The app's run config has no pool (collect) or names (lookup): such a run would train on the default one.
  const unset = spec.id === 'collect' ? 'pool' : 'names';
  if (unset in spec)
    throw new UsageError(
      `--env: the learning runs train the app's run config, which sets no ${unset} (${spec.id}: ${spec.id === 'collect' ? 'pages, decoys' : 'hops, distractors'}, filler)`,
    );
  if (spec.id === 'collect')
    return {
      ...spec,
      pages: spec.pages ?? COLLECT_DEFAULTS.pages,
      decoys: spec.decoys ?? COLLECT_DEFAULTS.decoys,
      filler: spec.filler ?? COLLECT_DEFAULTS.filler,
    };
  return {
    ...spec,
    hops: spec.hops ?? LOOKUP_DEFAULTS.hops,
    distractors: spec.distractors ?? LOOKUP_DEFAULTS.distractors,
    filler: spec.filler ?? LOOKUP_DEFAULTS.filler,
  };
}

function loadLine(): string {
  const [one, five, fifteen] = loadavg();
  return `load average ${one.toFixed(1)} / ${five.toFixed(1)} / ${fifteen.toFixed(1)} (1, 5, 15 min) at the end`;
}

/** The command line a result set records: the flags as given. */
function commandLine(): string {
  return ['mw', ...process.argv.slice(2)].join(' ');
}

export function learningConfigFromArgs(args: ParsedArgs, checkpoint: string): LearningConfig {
  for (const flag of MATRIX_ONLY) if (args.flags[flag] !== undefined) throw new UsageError(`--${flag} applies to mw experiment matrix only`);
  const sizes = args.flags.quick ? LEARNING_SIZES.quick : LEARNING_SIZES.full;
  const editors = listFlag(args, 'editors', isEditorKind, EDITOR_KINDS, sizes.editors);
  const methods = listFlag<Method>(args, 'methods', isMethod, METHODS, METHODS);
  const seeds = listOf(stringFlag(args, 'seeds'), 'seeds', (s) => (/^\d+$/.test(s) && Number(s) < 2 ** 32 ? Number(s) : undefined), sizes.seeds);
  const positive = (s: string) => (Number.isFinite(Number(s)) && Number(s) > 0 ? Number(s) : undefined);
  const sweep = listOf(stringFlag(args, 'sweep'), 'sweep', positive, sizes.sweep);
  const gated = stringFlag(args, 'gated') === 'none' ? [] : listOf(stringFlag(args, 'gated'), 'gated', positive, sizes.gated);
  const envText = stringFlag(args, 'env');
  const env = envText === undefined ? WEAK_TASK.env : everyKnob(envFlag(envText));
  const budget = integerFlag(args, 'budget', WEAK_TASK.budget, 8);
  const lambda = numberFlag(args, 'lambda', LEARNING_LAMBDA, 0, 100);
  const config: LearningConfig = {
    checkpoint,
    env,
    editors: editors.map((kind) => (kind === 'none' ? editorSpec('none') : editorSpec(kind, { budget }))),
    methods,
    seeds,
    lambda,
    sweep,
    gated,
    maxActTokens: ACT_TOKENS,
    sft: {
      updates: integerFlag(args, 'sft-updates', sizes.sft.updates, 1),
      prompts: integerFlag(args, 'sft-prompts', sizes.sft.prompts, 1),
      group: 1,
      lr: numberFlag(args, 'sft-lr', sizes.sft.lr, 1e-7, 1),
      evalEvery: integerFlag(args, 'sft-eval-every', sizes.sft.evalEvery, 1),
    },
    rl: {
      updates: integerFlag(args, 'rl-updates', sizes.rl.updates, 1),
      prompts: integerFlag(args, 'rl-prompts', sizes.rl.prompts, 1),
      group: integerFlag(args, 'group', sizes.rl.group, 2),
      lr: numberFlag(args, 'rl-lr', sizes.rl.lr, 1e-7, 1),
      evalEvery: integerFlag(args, 'rl-eval-every', sizes.rl.evalEvery, 1),
    },
    eval: { prompts: integerFlag(args, 'eval-n', sizes.evalPrompts, 1) },
  };
  // Every run trains the browser's run config of its phase and editor: one the app would refuse stops here, before any work.
  for (const objective of ['sft', 'rl'] as const) {
    for (const editor of config.editors) {
      const problems = configProblems(phaseRunConfig(config, objective, editor, seeds[0], methods, lambda));
      if (problems.length) throw new UsageError(`the ${objective} runs' config under ${editor.kind}: ${problems.join('; ')}`);
    }
  }
  return config;
}

export const LEARNING_USAGE = [
  'mw experiment learning --out DIR [--quick] [--ckpt FILE] [--env E] [--budget N] [--editors a,b] [--methods a,b] [--seeds a,b]',
  '                       [--sft-updates N] [--sft-prompts N] [--sft-lr LR] [--rl-updates N] [--rl-prompts N] [--group G] [--rl-lr LR]',
  '                       [--sft-eval-every N] [--rl-eval-every N] [--eval-n N] [--lambda X] [--sweep a,b] [--gated a,b|none] [--resume] [--json]',
];

export const LEARNING_DETAILS = [
  `learning: from the weak start (default ${relative(process.cwd(), WEAK_CHECKPOINT) || WEAK_CHECKPOINT}, scripts/train-weak.sh) on its task`,
  `(${formatEnvSpec(WEAK_TASK.env)}, budget ${WEAK_TASK.budget}), per seed and editor (default window, which deletes, and compact, which summarises):`,
  " the start's held-out EM, then per method (1) an SFT run on the scripted expert's demonstrations and (2) an on-policy",
  ' RL run (PPO-clipped, GRPO advantages, the model sampling at temperature 1; the runs share their first batch), each the',
  " browser's run of the same config (warm-up, cosine to a tenth of the lr), with held-out greedy EM under the editor every",
  " --sft-eval-every / --rl-eval-every updates; then SDCC's RL run at every --sweep λ, and the advantage-gated SDCC (its KL only at",
  ' the diverging leaves of rollouts with a non-zero advantage) at every --gated λ. Seed S draws the batches and the held-out prompts (the same',
  ` for every method). Sizes: full ${describeSizes(LEARNING_SIZES.full)}; --quick ${describeSizes(LEARNING_SIZES.quick)}.`,
  'Writes DIR/results.json (every update and evaluation; rewritten after each run, so --resume continues an interrupted',
  "experiment), DIR/table.md (EM per method with the seed range, training figures with verl's rollout_corr, the λ sweep),",
  'DIR/reference.json (the curves the app draws dashed under a matching live run) and DIR/learning-<sft|rl>-<editor>.svg,',
  'DIR/sweep-<editor>.svg (EM vs update, a band over seeds).',
].join('\n');

function describeSizes(s: Sizes): string {
  return (
    `${s.seeds.length} seeds; SFT ${s.sft.updates} × ${s.sft.prompts} at lr ${s.sft.lr}, EM every ${s.sft.evalEvery}; ` +
    `RL ${s.rl.updates} × ${s.rl.prompts}×${s.rl.group} at lr ${s.rl.lr}, EM every ${s.rl.evalEvery}; EM on ${s.evalPrompts} prompts; gated λ ${s.gated.join(', ')}`
  );
}

export async function runLearningCommand(args: ParsedArgs, io: CliIO, out: string): Promise<number> {
  const ckpt = stringFlag(args, 'ckpt');
  if (ckpt === undefined && !existsSync(WEAK_CHECKPOINT)) {
    throw new UsageError(`no --ckpt, and the weak start ${relative(process.cwd(), WEAK_CHECKPOINT)} does not exist (scripts/train-weak.sh trains it)`);
  }
  const path = ckpt ?? (relative(process.cwd(), WEAK_CHECKPOINT) || WEAK_CHECKPOINT);
  const config = learningConfigFromArgs(args, basename(path));
  outFolder(out);
  const choice = modelFromArgs({ ...args, flags: { ...args.flags, ckpt: path } }, { ckptFlag: 'ckpt', init: 'gpt2' });
  const { weights } = choice;
  if (weights.config.vocabSize !== BYTE_VOCAB)
    throw new ValidationError({ file: path }, `vocabulary ${weights.config.vocabSize}: the harness speaks the byte tokenizer (${BYTE_VOCAB} tokens)`);
  const command = commandLine();
  let resume: LearningResults | undefined;
  const resultsPath = join(out, 'results.json');
  if (args.flags.resume && existsSync(resultsPath)) {
    const earlier = JSON.parse(readFileSync(resultsPath, 'utf8')) as LearningResults;
    if (JSON.stringify(earlier.config) !== JSON.stringify(config)) throw new UsageError(`--resume: ${resultsPath} was written with another config`);
    resume = earlier;
  }
  const { runLearning } = await import('../experiments/learning-run');
  io.err(
    `mw experiment learning: ${choice.description}; ${config.editors.length} editors × ${config.seeds.length} seeds × ${config.methods.length} methods, ` +
      `SFT and RL, λ sweep ${config.sweep.join(', ')}: ${learningUnits(config)} updates and evaluations${resume ? ` (${resume.runs.length} runs kept)` : ''}\n`,
  );
  // d3 (the report's scales) loads only when a report is written, not at every `mw` start.
  const { learningFigures, learningTable } = await import('../experiments/learning-report');
  const write = (results: LearningResults, partial: boolean) => {
    writeAtomically(resultsPath, `${JSON.stringify({ ...results, command, partial }, null, 1)}\n`);
    writeAtomically(join(out, 'table.md'), learningTable(results, { command, load: partial ? undefined : loadLine() }));
    writeAtomically(join(out, 'reference.json'), `${JSON.stringify(referenceCurves(results, command), null, 1)}\n`);
    const figures = learningFigures(results);
    for (const [name, svg] of figures) writeAtomically(join(out, name), svg);
    return ['results.json', 'table.md', 'reference.json', ...figures.keys()];
  };
  // Off a terminal, a line per run, evaluation and baseline (not per update).
  let lineDue = false;
  const progress = createProgress((text) => io.err(text), { tty: process.stderr.isTTY === true, due: () => lineDue });
  return withGpu(io, 'experiment', async ({ gpu, assertHealthy }) => {
    const results = await runLearning(config, weights, gpu, {
      resume,
      onEvent(event, { done, total }) {
        const what =
          event.kind === 'baseline'
            ? `${event.editor} seed ${event.seed}: the start's held-out EM ${event.em.toFixed(3)}`
            : event.kind === 'run'
              ? `${event.run.phase} ${event.run.editor} seed ${event.run.seed} ${event.run.method}${event.run.lambda !== null ? ` λ ${event.run.lambda}${event.run.gate === 'advantage' ? ' gated' : ''}` : ''}: EM ${event.run.evals.map((e) => e.em.toFixed(2)).join(' → ')}${event.run.stopped ? ` (stopped: ${event.run.stopped})` : ''}`
              : event.kind === 'eval'
                ? `${event.run.phase} ${event.run.editor} seed ${event.run.seed} ${event.run.method} update ${event.update}: held-out EM ${event.em.toFixed(3)}`
                : `${event.run.phase} ${event.run.editor} seed ${event.run.seed} ${event.run.method} update ${event.update}: loss ${event.run.updates.at(-1)!.loss.toFixed(4)}`;
        lineDue = event.kind !== 'update';
        progress(done, total, ({ elapsed, eta }) => `mw experiment: [${done}/${total}] ${what} (${duration(elapsed)} elapsed, ETA ${eta})`);
      },
      async onRun(partial) {
        // A validation error would have left wrong numbers: only healthy results are written.
        await assertHealthy();
        write(partial, true);
      },
    });
    const files = write(results, false);
    return () => {
      if (args.flags.json) io.out(`${JSON.stringify({ ...results, command })}\n`);
      else io.out(`wrote ${files.map((f) => join(out, f)).join(', ')} (${duration(results.seconds)})\n`);
      return 0;
    };
  });
}
