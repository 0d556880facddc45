// `mw experiment matrix`: the paper's grand result matrix on this workbench (issue 7). Per memory
// editor: the drift of every replay method on the checkpoint's own rollouts, then one on-policy RL
// run per method from that checkpoint and its held-out EM (src/experiments/run.ts); writes
// results.json, table.md and SVG plots (src/experiments/report.ts) into --out DIR.

import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDITOR_KINDS, editorSpec, isEditorKind } from '../harness/editors';
import { DEMO_TASK, ENV_IDS, formatEnvSpec } from '../harness/env';
import {
  episodeLimits,
  matrixResults,
  MATRIX_BINS,
  MATRIX_EDITORS,
  QUICK_EDITORS,
  type EditorResult,
  type MatrixConfig,
  type MatrixEvent,
} from '../experiments/matrix';
import { METHODS, isMethod, type Method } from '../plan/types';
import { ValidationError, quote } from '../rollout/errors';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { PRESETS } from '../run/config';
import { UsageError, type Command, type ParsedArgs } from './command';
import { FULL_SAMPLING } from '../harness/policies/model';
import { LEARNING_DETAILS, LEARNING_FLAGS, LEARNING_USAGE, runLearningCommand } from './experiment-learning';
import {
  asUsageError,
  envFlag,
  integerFlag,
  listFlag,
  modelFromArgs,
  numberFlag,
  outFolder,
  requiredFlag,
  samplingFlags,
  samplingFromArgs,
  stringFlag,
  withGpu,
  writeAtomically,
  type ModelChoice,
} from './model-args';
import { createProgress, duration } from '../present/progress';

/** The demo checkpoint (scripts/train-demo.sh): --ckpt's default when it exists. */
export const DEMO_CHECKPOINT = fileURLToPath(new URL('../../public/models/demo.safetensors', import.meta.url));

/**
 * Sizes of a full run and of --quick; flags override each. Generation dominates the cost: a run
 * decodes editors × (1 + methods × (steps − 1)) × n × group sampled episodes and editors × (1 +
 * methods) × eval-n greedy ones (on SwiftShader, about a second or two each for the small model).
 */
export const MATRIX_SIZES = {
  full: { editors: MATRIX_EDITORS, n: 8, group: 4, steps: 10, evalN: 16 },
  quick: { editors: QUICK_EDITORS, n: 4, group: 2, steps: 3, evalN: 4 },
} as const;
export const DEFAULT_RL_LR = 1e-4;
export const DEFAULT_LAMBDA = 0.1;

/** --ckpt, else --config (a random init), else the demo checkpoint when it exists. */
function chooseModel(args: ParsedArgs): ModelChoice {
  if (stringFlag(args, 'ckpt') === undefined && stringFlag(args, 'config') === undefined) {
    if (!existsSync(DEMO_CHECKPOINT)) {
      throw new UsageError(
        `no --ckpt, and the demo checkpoint ${relative(process.cwd(), DEMO_CHECKPOINT)} does not exist (scripts/train-demo.sh trains it); pass --ckpt FILE or --config P`,
      );
    }
    args = { ...args, flags: { ...args.flags, ckpt: relative(process.cwd(), DEMO_CHECKPOINT) || DEMO_CHECKPOINT } };
  }
  return modelFromArgs(args, { ckptFlag: 'ckpt', init: 'gpt2' });
}

function progressLine(event: MatrixEvent, formatDrift: (v: number | null) => string): string {
  switch (event.kind) {
    case 'rollouts': {
      const b = event.batch;
      const nc = event.drift.methods['naive-compressed'];
      return `${event.editor}: checkpoint rollouts ${b.usable}/${b.rollouts} used, K ${b.K.toFixed(2)}, D ${b.divergingLeaves}, reward ${b.meanReward.toFixed(3)}; naive-compressed logdiff ${formatDrift(nc.logdiff)}`;
    }
    case 'baseline':
      return `${event.editor}: checkpoint held-out EM ${event.eval.em.toFixed(3)}`;
    case 'step': {
      const r = event.record;
      const m = r.metrics;
      const tail = m ? `loss ${m.loss.toFixed(4)}, logdiff ${formatDrift(m.logdiff)}, ${Math.round(m.stepMs)} ms` : `skipped: ${r.skipped}`;
      return `${event.editor} ${event.method} update ${r.update}: reward ${r.batch.meanReward.toFixed(3)}, ${tail}`;
    }
    case 'run':
      return `${event.editor} ${event.method}: held-out EM ${event.run.final.em.toFixed(3)}, mean logdiff ${formatDrift(event.run.summary.logdiff)}${event.run.stopped ? ` (stopped: ${event.run.stopped})` : ''}`;
  }
}

const SUBCOMMANDS = ['matrix', 'learning'] as const;

export const experimentCommand: Command = {
  name: 'experiment',
  summary: 'experiment matrix (drift, RL runs and held-out EM of every method under every editor) and learning (curves from the weak start) (GPU)',
  usage: [
    'mw experiment matrix --out DIR [--quick] [--ckpt FILE | --config tiny|small|default] [--seed S]',
    '                     [--editors a,b] [--methods a,b] [--steps N] [--n N] [--group G] [--eval-n N]',
    '                     [--lr LR] [--lambda X] [--budget N] [--env E] [--bins N] [--json]',
    '                     [--temperature T] [--top-k K] [--top-p P]   (how the drift batch is sampled)',
    ...LEARNING_USAGE,
  ],
  details: [
    'For each editor (default: none, window, compact, stack, fold; --quick: none, window, compact):',
    " 1. the checkpoint generates N prompts × G rollouts (seed S): the drift batch, with the model's own logprobs at",
    '    temperature 1, sampled at temperature 1 or, with --temperature/--top-k/--top-p, the way a serving engine samples;',
    ' 2. drift of every scoring method on them (docs/metrics.md: n, logdiff, μ, sign split, histograms);',
    ' 3. per method an RL run from the same checkpoint: each update generates a fresh batch with the current policy at',
    '    temperature 1 (update 1 reuses the drift batch when it was sampled so; update u draws prompts from a seed derived from (S, u), the same for every',
    "    method), records its reward and EM, and trains one PPO-clipped GRPO step at a constant lr; then the run's EM",
    "    on a held-out batch (--eval-n prompts, fixed seed, greedy decoding). The checkpoint's own held-out EM is the baseline.",
    "Only rollouts every method can replay within the model's positions are scored and trained on (results.json counts the rest).",
    `Sizes: full n ${MATRIX_SIZES.full.n}, group ${MATRIX_SIZES.full.group}, steps ${MATRIX_SIZES.full.steps}, eval-n ${MATRIX_SIZES.full.evalN}; ` +
      `--quick n ${MATRIX_SIZES.quick.n}, group ${MATRIX_SIZES.quick.group}, steps ${MATRIX_SIZES.quick.steps}, eval-n ${MATRIX_SIZES.quick.evalN}.`,
    'Writes DIR/results.json (everything, per-update curves included; rewritten after each editor), DIR/table.md',
    "(Table 1: editor × method logdiff, μ, EM, relative step time; the checkpoint's drift; rollout structure),",
    'DIR/drift-<editor>.svg (signed drift histograms per method) and DIR/curves-<editor>.svg (reward, logdiff, EM).',
    `--ckpt defaults to ${relative(process.cwd(), DEMO_CHECKPOINT) || DEMO_CHECKPOINT} when it exists; --config runs a random init instead.`,
    '',
    LEARNING_DETAILS,
  ].join('\n'),
  flags: {
    out: { type: 'string', value: 'DIR', help: 'directory for results.json, table.md and the SVGs (created)' },
    quick: { type: 'boolean', help: 'three editors and smaller batches and runs' },
    ckpt: { type: 'string', value: 'FILE', help: 'GPT-2 checkpoint to start from (default: the demo checkpoint)' },
    config: { type: 'string', value: PRESETS.join('|'), help: 'a random init of this preset instead of a checkpoint' },
    seed: { type: 'string', value: 'S', help: 'seed of the batches (and of a random init) (default 0)' },
    env: {
      type: 'string',
      value: 'E',
      help: `environment with optional difficulty knobs, e.g. lookup:hops=3 (${ENV_IDS.join(', ')}; default the demo task ${formatEnvSpec(DEMO_TASK.env)})`,
    },
    editors: { type: 'string', value: 'a,b', help: `memory editors (${EDITOR_KINDS.join(', ')})` },
    methods: { type: 'string', value: 'a,b', help: `RL methods (default all: ${METHODS.join(', ')})` },
    steps: { type: 'string', value: 'N', help: 'RL updates per run' },
    n: { type: 'string', value: 'N', help: 'prompts per batch' },
    group: { type: 'string', value: 'G', help: 'rollouts per prompt (one GRPO group)' },
    'eval-n': { type: 'string', value: 'N', help: 'prompts of the held-out evaluation batch' },
    lr: { type: 'string', value: 'LR', help: `constant learning rate of the RL runs (default ${DEFAULT_RL_LR})` },
    lambda: { type: 'string', value: 'X', help: `SDCC's KL weight (default ${DEFAULT_LAMBDA})` },
    budget: {
      type: 'string',
      value: 'N',
      help: `every budget-driven editor's token budget (default ${DEMO_TASK.budget} for the demo task, else each editor's)`,
    },
    bins: { type: 'string', value: 'N', help: `drift histogram bins (default ${MATRIX_BINS})` },
    json: { type: 'boolean', help: 'print the results JSON on stdout instead of the list of files' },
    ...samplingFlags('drift batch: ', FULL_SAMPLING),
    ...LEARNING_FLAGS,
  },
  async run(args, io) {
    const [sub, ...rest] = args.positionals;
    if (sub === undefined) throw new UsageError(`missing subcommand (${SUBCOMMANDS.join(', ')})`);
    if (!(SUBCOMMANDS as readonly string[]).includes(sub)) throw new UsageError(`unknown subcommand ${quote(sub)} (${SUBCOMMANDS.join(', ')})`);
    if (rest.length) throw new UsageError(`unexpected argument ${quote(rest[0])}`);
    const out = requiredFlag(args, 'out', 'DIR');
    if (sub === 'learning') return runLearningCommand(args, io, out);
    for (const flag of Object.keys(LEARNING_FLAGS))
      if (args.flags[flag] !== undefined) throw new UsageError(`--${flag} applies to mw experiment learning only`);
    const sizes = args.flags.quick ? MATRIX_SIZES.quick : MATRIX_SIZES.full;
    const editorKinds = listFlag(args, 'editors', isEditorKind, EDITOR_KINDS, sizes.editors);
    const methods = listFlag<Method>(args, 'methods', isMethod, METHODS, METHODS);
    // Without --env: the demo checkpoint's task, edited at its budget.
    const envText = stringFlag(args, 'env');
    const env = envText === undefined ? DEMO_TASK.env : envFlag(envText);
    const budget = stringFlag(args, 'budget') === undefined ? (envText === undefined ? DEMO_TASK.budget : undefined) : integerFlag(args, 'budget', 0, 1);
    const lambda = numberFlag(args, 'lambda', DEFAULT_LAMBDA, 0);
    if (args.flags.lambda !== undefined && !methods.includes('sdcc')) throw new UsageError('--lambda applies to the sdcc run, which --methods leaves out');
    const editors = editorKinds.map((kind) => asUsageError(() => editorSpec(kind, kind === 'none' ? {} : { budget })));

    const choice = chooseModel(args);
    const { weights } = choice;
    if (weights.config.vocabSize !== BYTE_VOCAB) {
      throw new ValidationError(
        { file: choice.checkpoint?.path ?? '--config' },
        `vocabulary ${weights.config.vocabSize}: the harness speaks the byte tokenizer (${BYTE_VOCAB} tokens)`,
      );
    }
    const episode = asUsageError(() => episodeLimits(weights.config), `${choice.description}: `);
    const config: MatrixConfig = {
      env,
      editors,
      methods,
      n: integerFlag(args, 'n', sizes.n, 1),
      group: integerFlag(args, 'group', sizes.group, 1),
      seed: integerFlag(args, 'seed', 0, 0, 2 ** 32 - 1),
      steps: integerFlag(args, 'steps', sizes.steps, 1),
      evalN: integerFlag(args, 'eval-n', sizes.evalN, 1),
      lr: numberFlag(args, 'lr', DEFAULT_RL_LR, 0),
      driftSampling: samplingFromArgs(args, FULL_SAMPLING),
      lambda,
      bins: integerFlag(args, 'bins', MATRIX_BINS, 1),
      episode,
    };
    for (const e of editors) {
      if (e.kind !== 'none' && e.budget >= episode.maxContext) {
        io.err(
          `mw experiment: warning: editor ${e.kind}'s budget ${e.budget} is not below the episodes' ${episode.maxContext} positions: it never fires (pass --budget)\n`,
        );
      }
    }
    if (config.group === 1) io.err('mw experiment: warning: --group 1: every GRPO advantage is 0, the RL updates change nothing\n');
    outFolder(out);

    const checkpoint = choice.checkpoint?.path ?? null;
    io.err(
      `mw experiment: model ${choice.description}; ${editors.length} editors × ${methods.length} methods, ` +
        `${config.steps} updates of ${config.n}×${config.group} rollouts each, held-out ${config.evalN}\n`,
    );
    // d3 (the report's scales) loads only when a report is written, not at every `mw` start.
    const { curvesSvg, driftSvg, formatDrift, matrixTable } = await import('../experiments/report');
    const started = performance.now();
    const writeReport = (editorResults: readonly EditorResult[], seconds: number, partial: boolean) => {
      const results = matrixResults(config, weights.config, editorResults, seconds);
      const document = { ...results, checkpoint, modelDescription: choice.description, partial };
      const files: [string, string][] = [
        ['results.json', `${JSON.stringify(document, null, 1)}\n`],
        ['table.md', matrixTable(results, { checkpoint })],
        ...editorResults.flatMap((r): [string, string][] => [
          [`drift-${r.editor}.svg`, driftSvg(r)],
          [`curves-${r.editor}.svg`, curvesSvg(r, methods)],
        ]),
      ];
      for (const [name, text] of files) writeAtomically(join(out, name), text);
      return { document, paths: files.map(([name]) => join(out, name)) };
    };

    return withGpu(io, 'experiment', async ({ gpu, assertHealthy }) => {
      const [{ createGpuModelPolicy }, { runMatrix }] = await Promise.all([import('../gpu/generate'), import('../experiments/run')]);
      const done: EditorResult[] = [];
      const progress = createProgress((text) => io.err(text), { tty: !!process.stderr.isTTY, due: () => true });
      const results = await runMatrix(
        config,
        weights,
        { gpu, createPolicy: createGpuModelPolicy },
        {
          onEvent(event, { done: units, total }) {
            progress(
              units,
              total,
              ({ elapsed, eta }) => `mw experiment: [${units}/${total}] ${progressLine(event, formatDrift)} (${duration(elapsed)} elapsed, ETA ${eta})`,
            );
          },
          async onEditor(result) {
            // A validation error would have left wrong numbers: only healthy results are written.
            await assertHealthy();
            done.push(result);
            writeReport(done, (performance.now() - started) / 1000, true);
          },
        },
      );
      const { document, paths } = writeReport(results.editors, results.seconds, false);
      return () => {
        if (args.flags.json) io.out(`${JSON.stringify(document)}\n`);
        else io.out(`wrote ${paths.join(', ')} (${duration(results.seconds)})\n`);
        return 0;
      };
    });
  },
};
