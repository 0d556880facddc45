// `mw verify FILE [--json]`: the engine checked on a user's own rollouts. Theorem 1 (logit-tree and
// packed-4d give the same log-probabilities and SFT gradients) and the GPU against the float64 CPU
// reference, over every target and every parameter tensor. Exit 0 only within the tolerances. A model
// folder (Llama, Qwen2, Qwen3) is scored, not trained: its log-probabilities alone are checked.

import { writeOutputSync } from '../util/output-file';
import type { GpuModel } from '../gpu/model';
import type { ScoredModel } from '../gpu/score';
import { readFolderWeights } from '../model/family/folder';
import { isModelFolderPath } from '../model/family/folder-node';
import { familyReferenceLogprobs, type FamilyWeights } from '../model/family/reference';
import { saveCheckpoint } from '../model/checkpoint';
import { sftLossAndGrads } from '../model/reference/model';
import type { ModelWeights } from '../model/params';
import { planStep } from '../objectives/step';
import { buildPlan } from '../plan/build';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { UsageError, type CliIO, type Command, type ParsedArgs } from './command';
import { checkModelTakes, createScoredModel, modelFromArgs, modelFlags, scoringModelArg, stringFlag, withGpu, type Engine } from './model-args';
import { checkOutputPath, fileArgument, formatTable, loadRolloutFile, perFile, printJson } from './shared';

/** Exit status when a difference exceeds its tolerance. */
export const VERIFY_FAILED_EXIT = 3;

/**
 * Log-probabilities: largest absolute difference over targets. Gradients: per tensor, the largest
 * absolute difference over the largest magnitude of the reference tensor; the worst tensor counts.
 * Between the two exact methods only float reassociation differs, hence the tighter bounds.
 */
export const TOLERANCES = {
  logprob: { treeVsPacked: 1e-5, gpuVsCpu: 1e-4 },
  gradient: { treeVsPacked: 1e-4, gpuVsCpu: 1e-3 },
} as const;

const EXACT = ['logit-tree', 'packed-4d'] as const;
type ExactMethod = (typeof EXACT)[number];

export interface LogprobCheck {
  maxAbs: number;
  /** Physical id of the target where it is largest. */
  target: number;
  tolerance: number;
}

export interface GradientCheck {
  maxRel: number;
  /** The tensor where it is largest. */
  tensor: string;
  tolerance: number;
}

export interface VerifyReport {
  id: string;
  model: string;
  targets: number;
  packedLength: number;
  logprob: { treeVsPacked: LogprobCheck; gpuVsCpu: LogprobCheck & { method: ExactMethod } } | null;
  /** Null without targets, and for a model folder (scored, never trained here: no gradient to check). */
  gradient: { treeVsPacked: GradientCheck; gpuVsCpu: GradientCheck & { method: ExactMethod } } | null;
  ok: boolean;
}

/** What a family model's report says in place of the gradient rows. */
export const FAMILY_NO_GRADIENT = 'gradient: not checked (a model folder is scored, not trained: log-probabilities only)';

/** NaN compares as the worst possible difference. */
const worse = (d: number, than: number) => Number.isNaN(d) || d > than;

function logprobCheck(got: ReadonlyMap<number, number>, want: ReadonlyMap<number, number>, tolerance: number): LogprobCheck {
  let maxAbs = 0;
  let target = -1;
  for (const [id, w] of want) {
    const d = Math.abs((got.get(id) ?? NaN) - w);
    if (target < 0 || worse(d, maxAbs)) {
      maxAbs = Number.isNaN(d) ? Infinity : d;
      target = id;
    }
  }
  return { maxAbs, target, tolerance };
}

/** Per tensor max|got − want| / max|want| (0 when both are zero), the worst tensor. */
function gradientCheck(got: ReadonlyMap<string, ArrayLike<number>>, want: ReadonlyMap<string, ArrayLike<number>>, tolerance: number): GradientCheck {
  let maxRel = 0;
  let tensor = '';
  for (const [name, w] of want) {
    const g = got.get(name)!;
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < w.length; i++) {
      const d = Math.abs(g[i] - w[i]);
      if (worse(d, diff)) diff = Number.isNaN(d) ? Infinity : d;
      scale = Math.max(scale, Math.abs(w[i]));
    }
    const rel = diff === 0 ? 0 : scale === 0 ? Infinity : diff / scale;
    if (tensor === '' || rel > maxRel) {
      maxRel = rel;
      tensor = name;
    }
  }
  return { maxRel, tensor, tolerance };
}

function worstOf<T extends { method: ExactMethod }>(checks: T[], value: (c: T) => number): T {
  return checks.reduce((a, b) => (value(b) > value(a) ? b : a));
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** 1e-5, not 0.00001. */
const tolerance = (t: number) => t.toExponential();

/** Both logprob checks: the two exact methods against each other, and each against the float64 reference (the worse one reported). */
function logprobChecks(lp: Record<ExactMethod, ReadonlyMap<number, number>>, cpu: ReadonlyMap<number, number>): NonNullable<VerifyReport['logprob']> {
  return {
    treeVsPacked: logprobCheck(lp['packed-4d'], lp['logit-tree'], TOLERANCES.logprob.treeVsPacked),
    gpuVsCpu: worstOf(
      EXACT.map((method) => ({ method, ...logprobCheck(lp[method], cpu, TOLERANCES.logprob.gpuVsCpu) })),
      (c) => c.maxAbs,
    ),
  };
}

const logprobsOk = (l: NonNullable<VerifyReport['logprob']>) => l.treeVsPacked.maxAbs <= l.treeVsPacked.tolerance && l.gpuVsCpu.maxAbs <= l.gpuVsCpu.tolerance;

/**
 * A family model's report: logit-tree and packed-4d on the GPU against each other and against the
 * family's float64 reference (src/model/family/reference.ts) on the packed-4d plan; no gradients.
 */
async function verifyFamilyRollout(
  engine: Engine,
  model: ScoredModel,
  weights: FamilyWeights,
  rollout: Rollout,
  modelName: string,
  progress: (text: string) => void,
): Promise<VerifyReport> {
  const tree = deriveTree(rollout);
  const base = { id: rollout.id, model: modelName, targets: tree.figures.targets, packedLength: tree.figures.packedLength };
  if (tree.figures.targets === 0) return { ...base, logprob: null, gradient: null, ok: true };
  const started = performance.now();
  const scores = await engine.evaluate(model, [rollout], EXACT);
  progress(`GPU ${seconds(performance.now() - started)}, float64 CPU reference over ${tree.figures.packedLength} packed tokens...`);
  const cpuStarted = performance.now();
  const packed = buildPlan(tree, 'packed-4d').sequences[0];
  const values = familyReferenceLogprobs(weights, packed, packed.targets);
  const cpu = new Map(packed.targets.map((t, j) => [t.id, values[j]]));
  progress(` ${seconds(performance.now() - cpuStarted)}\n`);
  const logprob = logprobChecks({ 'logit-tree': scores['logit-tree'][0], 'packed-4d': scores['packed-4d'][0] }, cpu);
  return { ...base, logprob, gradient: null, ok: logprobsOk(logprob) };
}

/** The report, and the GPU's packed-4d SFT gradient per tensor (null without targets). */
async function verifyRollout(
  engine: Engine,
  model: GpuModel,
  weights: ModelWeights,
  rollout: Rollout,
  modelName: string,
  progress: (text: string) => void,
): Promise<{ report: VerifyReport; packedGrads: Map<string, Float32Array> | null }> {
  const tree = deriveTree(rollout);
  const base = { id: rollout.id, model: modelName, targets: tree.figures.targets, packedLength: tree.figures.packedLength };
  if (tree.figures.targets === 0) return { report: { ...base, logprob: null, gradient: null, ok: true }, packedGrads: null };

  const started = performance.now();
  const scores = await engine.evaluate(model, [rollout], EXACT);
  const lp = { 'logit-tree': scores['logit-tree'][0], 'packed-4d': scores['packed-4d'][0] };
  const grads = {} as Record<ExactMethod, Map<string, Float32Array>>;
  for (const method of EXACT) {
    await engine.computeGradients(model, planStep([rollout], { method, objective: 'sft', conditioningDrift: false }, [tree]));
    grads[method] = await model.readGrads();
  }
  progress(`GPU ${seconds(performance.now() - started)}, float64 CPU reference over ${tree.figures.packedLength} packed tokens...`);

  const cpuStarted = performance.now();
  const packed = buildPlan(tree, 'packed-4d').sequences[0];
  const cpu = sftLossAndGrads(weights, packed, packed.targets);
  const cpuLogprobs = new Map(packed.targets.map((t, j) => [t.id, cpu.logprobs[j]]));
  progress(` ${seconds(performance.now() - cpuStarted)}\n`);

  const logprob = logprobChecks(lp, cpuLogprobs);
  const gradient = {
    treeVsPacked: gradientCheck(grads['packed-4d'], grads['logit-tree'], TOLERANCES.gradient.treeVsPacked),
    gpuVsCpu: worstOf(
      EXACT.map((method) => ({ method, ...gradientCheck(grads[method], cpu.grads, TOLERANCES.gradient.gpuVsCpu) })),
      (c) => c.maxRel,
    ),
  };
  const ok = logprobsOk(logprob) && gradient.treeVsPacked.maxRel <= gradient.treeVsPacked.tolerance && gradient.gpuVsCpu.maxRel <= gradient.gpuVsCpu.tolerance;
  return { report: { ...base, logprob, gradient, ok }, packedGrads: grads['packed-4d'] };
}

function reportTable(r: VerifyReport): string {
  const head = `${r.id}: ${r.targets} targets, ${r.packedLength} packed tokens; ${r.model}`;
  if (!r.logprob) return `${head}\nno targets: nothing to verify\n`;
  const verdict = (value: number, tolerance: number) => (value <= tolerance ? 'ok' : 'FAILED');
  const logprobRows = [
    [
      'logprob',
      'logit-tree vs packed-4d',
      r.logprob.treeVsPacked.maxAbs.toExponential(2),
      `≤ ${tolerance(r.logprob.treeVsPacked.tolerance)}`,
      `target ${r.logprob.treeVsPacked.target}`,
      verdict(r.logprob.treeVsPacked.maxAbs, r.logprob.treeVsPacked.tolerance),
    ],
    [
      'logprob',
      `GPU (${r.logprob.gpuVsCpu.method}) vs CPU`,
      r.logprob.gpuVsCpu.maxAbs.toExponential(2),
      `≤ ${tolerance(r.logprob.gpuVsCpu.tolerance)}`,
      `target ${r.logprob.gpuVsCpu.target}`,
      verdict(r.logprob.gpuVsCpu.maxAbs, r.logprob.gpuVsCpu.tolerance),
    ],
  ];
  const columns = ['', 'compared', 'max diff', 'tolerance', 'worst at', ''];
  if (!r.gradient) return `${head}\n${formatTable(columns, logprobRows)}${FAMILY_NO_GRADIENT}\n`;
  const rows = [
    ...logprobRows,
    [
      'gradient',
      'logit-tree vs packed-4d',
      r.gradient.treeVsPacked.maxRel.toExponential(2),
      `≤ ${tolerance(r.gradient.treeVsPacked.tolerance)}`,
      r.gradient.treeVsPacked.tensor,
      verdict(r.gradient.treeVsPacked.maxRel, r.gradient.treeVsPacked.tolerance),
    ],
    [
      'gradient',
      `GPU (${r.gradient.gpuVsCpu.method}) vs CPU`,
      r.gradient.gpuVsCpu.maxRel.toExponential(2),
      `≤ ${tolerance(r.gradient.gpuVsCpu.tolerance)}`,
      r.gradient.gpuVsCpu.tensor,
      verdict(r.gradient.gpuVsCpu.maxRel, r.gradient.gpuVsCpu.tolerance),
    ],
  ];
  return `${head}\n${formatTable(columns, rows)}`;
}

/** `mw verify FILE --ckpt MODEL-FOLDER`: log-probabilities only (the folder streamed to the GPU, decoded once more for the reference). */
async function verifyFolder(args: ParsedArgs, io: CliIO, path: string): Promise<number> {
  const fixed = ['config', 'init', 'seed'].find((flag) => args.flags[flag] !== undefined);
  if (fixed) throw new UsageError(`--${fixed} does not go with --ckpt: the checkpoint fixes the model`);
  if (args.flags['grad-out'] !== undefined)
    throw new UsageError('--grad-out needs a GPT-2 checkpoint: a model folder is scored, not trained (no gradient is computed)');
  const file = await loadRolloutFile(fileArgument(args));
  const arg = await scoringModelArg(path, io, 'verify');
  if (arg.kind !== 'family') throw new Error('verifyFolder: not a model folder');
  arg.takes(file.rollouts, EXACT);
  const weights: FamilyWeights = { config: arg.config, tensors: await readFolderWeights(arg.model.source) };
  return withGpu(io, 'verify', async (session) => {
    const model = await createScoredModel(session, arg, io, 'verify');
    const reports: VerifyReport[] = [];
    try {
      for (const [i, rollout] of file.rollouts.entries()) {
        let first = true;
        const progress = (text: string) => {
          io.err(first ? `mw verify: [${i + 1}/${file.rollouts.length}] ${rollout.id}: ${text}` : text);
          first = false;
        };
        reports.push(await verifyFamilyRollout(session.engine, model, weights, rollout, arg.model.description, progress));
      }
    } finally {
      model.destroy();
    }
    return () => {
      if (args.flags.json) printJson(io, perFile(file, reports));
      else io.out(reports.map(reportTable).join('\n'));
      return reports.every((r) => r.ok) ? 0 : VERIFY_FAILED_EXIT;
    };
  });
}

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'check Theorem 1 and the GPU against the float64 CPU reference on FILE (logprobs and gradients)',
  usage: ['mw verify FILE [--json] [--ckpt CKPT | --config tiny|small|default --init gpt2|wide --seed S]', 'mw verify FILE --ckpt MODEL-FOLDER [--json]'],
  details: [
    "For every rollout: the largest difference of the targets' log-probabilities between logit-tree and",
    'packed-4d, and between the GPU and the float64 CPU reference; and the same for the gradients of the',
    'SFT loss (mean NLL of every target), per tensor max|a - b| / max|b|, the worst tensor named.',
    `Tolerances: logprob ${tolerance(TOLERANCES.logprob.treeVsPacked)} between methods, ${tolerance(TOLERANCES.logprob.gpuVsCpu)} GPU vs CPU; gradient (relative)`,
    `${tolerance(TOLERANCES.gradient.treeVsPacked)} between methods, ${tolerance(TOLERANCES.gradient.gpuVsCpu)} GPU vs CPU. Exit 0 when all hold, ${VERIFY_FAILED_EXIT} when one does not.`,
    'Without --ckpt the weights are a seeded random init (default: --config default --init wide --seed 0;',
    'wide weights make attention patterns, and so masking mistakes, show).',
    'Cost: the CPU reference, one float64 forward and backward over the packed tree on one core, is the',
    'slow part: on the default config about 3 s for 400 packed tokens and 5-10 s for 800; linear in',
    'N_packed up to ~2000, then its attention grows with N_packed² (minutes at 5000). Progress goes to',
    'stderr, one line per rollout. --config tiny checks in a fraction of that.',
    "--grad-out writes the GPU's packed-4d SFT gradient of a one-rollout FILE as a GPT-2-named safetensors",
    "file (the checkpoint's tensor names and shapes): what python/ checks its torch gradient against.",
    'MODEL-FOLDER (a Llama / Qwen2 / Qwen3 folder, docs/model.md) is scored, not trained: its report has the two',
    'log-probability rows against the family\'s float64 reference and no gradient ("gradient": null); rollouts of',
    'its own tokenizer only, as for mw score.',
    '--json prints one report per rollout (an array for JSONL).',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint or model folder (Llama, Qwen2, Qwen3) to verify with instead of random weights' },
    ...modelFlags('wide'),
    json: { type: 'boolean', help: 'print JSON' },
    'grad-out': { type: 'string', value: 'FILE', help: "write the GPU's packed-4d SFT gradient (one-rollout FILE only)" },
  },
  async run(args, io) {
    const folder = stringFlag(args, 'ckpt');
    if (folder !== undefined && isModelFolderPath(folder)) return verifyFolder(args, io, folder);
    const choice = modelFromArgs(args, { ckptFlag: 'ckpt', init: 'wide' });
    const gradOut = stringFlag(args, 'grad-out');
    const ckpt = stringFlag(args, 'ckpt');
    if (gradOut !== undefined) await checkOutputPath('grad-out', gradOut, [fileArgument(args), ...(ckpt === undefined ? [] : [ckpt])]);
    const file = await loadRolloutFile(fileArgument(args));
    if (gradOut !== undefined && file.rollouts.length !== 1)
      throw new UsageError(`--grad-out needs a file of one rollout, this one has ${file.rollouts.length}`);
    checkModelTakes(choice.weights.config, file.rollouts, EXACT);
    return withGpu(io, 'verify', async ({ gpu, engine }) => {
      const model = engine.createGpuModel(gpu, choice.weights);
      const reports: VerifyReport[] = [];
      let packedGrads: Map<string, Float32Array> | null = null;
      try {
        for (const [i, rollout] of file.rollouts.entries()) {
          const prefix = `mw verify: [${i + 1}/${file.rollouts.length}] ${rollout.id}: `;
          let first = true;
          const progress = (text: string) => {
            io.err(first ? prefix + text : text);
            first = false;
          };
          const result = await verifyRollout(engine, model, choice.weights, rollout, choice.description, progress);
          reports.push(result.report);
          packedGrads = result.packedGrads;
        }
      } finally {
        model.destroy();
      }
      return () => {
        if (gradOut !== undefined) {
          if (!packedGrads) throw new UsageError('--grad-out: the rollout has no targets, so no gradient');
          const { id } = file.rollouts[0];
          writeOutputSync(
            gradOut,
            saveCheckpoint({ config: choice.weights.config, tensors: packedGrads }, { kind: 'gradient', method: 'packed-4d', objective: 'sft', rollout: id }),
          );
        }
        if (args.flags.json) printJson(io, perFile(file, reports));
        else io.out(reports.map(reportTable).join('\n'));
        return reports.every((r) => r.ok) ? 0 : VERIFY_FAILED_EXIT;
      };
    });
  },
};
