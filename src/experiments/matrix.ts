// The experiment matrix (issue 7): for each memory editor, the drift of every replay method on the
// checkpoint's own rollouts, then one short on-policy RL run per training method from that same
// checkpoint, and each run's final EM on a held-out batch. Pure orchestration: the GPU engine comes
// in as a MatrixEngine (the CLI loads it lazily, the tests import it); results are plain data.

import type { Gpu } from '../gpu/device';
import type { GpuModel } from '../gpu/model';
import type { StepFigures, Trainer, TrainerOptions } from '../gpu/train';
import { generateDataset, type DatasetSummary } from '../harness/dataset';
import type { EditorKind, EditorSpec } from '../harness/editors';
import type { EnvId, EnvSpec } from '../harness/env';
import { FULL_SAMPLING, isFullSampling, type ModelPolicyOptions, type SamplingOptions } from '../harness/policies/model';
import type { Policy } from '../harness/policy';
import type { RolloutScores, ScoreOptions } from '../gpu/score';
import { driftReport, logprobsOf, type DriftReport } from '../metrics/drift-report';
import { expectedDrift, type ExpectedDriftReport } from '../metrics/expected-drift';
import type { ModelConfig } from '../model/config';
import type { ModelWeights } from '../model/params';
import { buildPlan } from '../plan/build';
import { METHODS, type Method, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';

/** What the matrix needs of the GPU layer (src/gpu/*), passed in so this file loads no kernels. */
export interface MatrixEngine {
  gpu: Gpu;
  createGpuModel(gpu: Gpu, weights: ModelWeights): GpuModel;
  createTrainer(gpu: Gpu, weights: ModelWeights, options: TrainerOptions): Trainer;
  /** src/gpu/score.ts's scoreRollouts: every target's log-probability, and its log-probability row when asked. */
  scoreRollouts(model: GpuModel, rollouts: readonly Rollout[], methods: readonly SequenceMethod[], options?: ScoreOptions): Promise<RolloutScores>;
  /** The model policy on a GPU model (src/gpu/generate.ts's createGpuModelPolicy). */
  createPolicy(model: GpuModel, options: ModelPolicyOptions): Policy;
}

/** The methods that score targets (drift is measured for these); sdcc is an objective. */
export const SCORING_METHODS: readonly SequenceMethod[] = METHODS.filter((m): m is SequenceMethod => m !== 'sdcc');
export const MATRIX_EDITORS: readonly EditorKind[] = ['none', 'window', 'compact', 'stack', 'fold'];
export const QUICK_EDITORS: readonly EditorKind[] = ['none', 'window', 'compact'];

/**
 * Sampling. Training batches are drawn at temperature 1 over the full vocabulary: the recorded
 * logprobs are then the sampling distribution's, as the PPO ratio assumes. The drift batch is drawn
 * with `driftSampling` (default the same), or the way a serving engine samples (temperature below 1,
 * top-k, top-p) while still recording temperature-1 logprobs, as engines report raw logprobs. The
 * held-out evaluation decodes greedily (temperature 0): one deterministic answer per prompt, so EM
 * differences between runs are the weights', not the sampler's.
 *
 * Why the drift batch's sampler matters for the sign of μ: when a token is drawn from the very
 * distribution its logprob records, p = π(· | live view), a replay context with distribution q
 * has E[log q(t) − log p(t)] = −KL(p ‖ q) ≤ 0. So at temperature 1 every replay method's signed
 * drift is negative in expectation, naive-full's included, however much its extra context helps;
 * a positive mean needs a sampler sharper than p (most tokens then are p's likely ones, which a
 * more informed context tends to make likelier still).
 */
/** Drift histogram bins: odd, so one bin is centred on 0 and the exact methods' round-off lands in it alone. */
export const MATRIX_BINS = 21;
export const EVAL_TEMPERATURE = 0;

export interface MatrixConfig {
  env: EnvSpec | EnvId;
  editors: readonly EditorSpec[];
  /** RL runs, one per method (any of METHODS; sdcc with `lambda`). */
  methods: readonly Method[];
  /** Prompts per batch. */
  n: number;
  /** Rollouts per prompt (a GRPO group). */
  group: number;
  seed: number;
  /** RL updates per run. */
  steps: number;
  /** Prompts of the held-out evaluation batch (one greedy rollout each). */
  evalN: number;
  /** How the drift batch is sampled (the RL batches always use FULL_SAMPLING). */
  driftSampling: Required<SamplingOptions>;
  /** Constant learning rate of the RL runs. */
  lr: number;
  /** SDCC's KL weight. */
  lambda: number;
  bins: number;
  /** Decoding limits of every episode; maxContext must leave room below the model's positions (see episodeLimits). */
  episode: { maxContext: number; maxActTokens?: number };
}

/**
 * Tokens kept free above `maxContext`: a branch also holds what the harness appended after its
 * last decode (the observation that pushed the view over an editor's budget; a lookup observation
 * is under 100 tokens), and logit-tree and packed-4d replay whole branches within the positions.
 */
export const OBSERVATION_RESERVE = 100;

export function episodeLimits(config: ModelConfig): { maxContext: number } {
  const maxContext = config.nPositions - OBSERVATION_RESERVE;
  if (maxContext < 64) throw new Error(`the model's ${config.nPositions} positions leave no room for episodes (need > ${OBSERVATION_RESERVE + 64})`);
  return { maxContext };
}

/**
 * Seeds: the drift batch, which is also update 1's batch, uses `seed` itself (so `mw generate --seed
 * S --n N --group G` reproduces it); update u > 1 draws its prompts from a seed derived from (seed, u),
 * the same for every method; the held-out batch from one derived seed no update uses.
 */
export function batchSeed(seed: number, update: number): number {
  return update <= 1 ? seed >>> 0 : (seed ^ Math.imul(update, 0x9e3779b1) ^ 0x5bd1e995) >>> 0;
}

export function evalSeed(seed: number): number {
  return (seed ^ 0x7f4a7c15 ^ Math.imul(seed + 1, 0x85ebca6b)) >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Results.

/** What a batch of rollouts looked like. */
export interface BatchFigures {
  rollouts: number;
  /** Rollouts every method can replay within the model's positions (the ones scored and trained on). */
  usable: number;
  meanReward: number;
  em: number;
  /** Over usable rollouts. */
  K: number;
  divergingLeaves: number;
  targets: number;
  droppedTargets: number;
  /** Σ N_packed / Σ final-walk length. */
  packedRatio: number | null;
  stops: Record<string, number>;
}

export interface StepRecord {
  /** 1-based update. */
  update: number;
  seed: number;
  batch: BatchFigures;
  /** Time spent generating this update's batch (0 for update 1 when it reuses the drift batch). */
  generateMs: number;
  /** Null when the update was skipped (see `skipped`). */
  metrics: StepFigures | null;
  skipped: string | null;
}

export interface EvalRecord {
  seed: number;
  rollouts: number;
  em: number;
  meanReward: number;
  temperature: number;
}

export interface RunSummary {
  /** Means over the updates that ran. */
  logdiff: number | null;
  mu: number | null;
  klSdcc: number | null;
  klFiredSteps: number;
  updates: number;
  skipped: number;
  meanReward: number | null;
  /** Median step time (the first update left out when there are three or more: it compiles pipelines). */
  stepMs: number | null;
  tokensPerStep: number | null;
}

export interface RunRecord {
  method: Method;
  steps: StepRecord[];
  final: EvalRecord;
  summary: RunSummary;
  /** Why the run stopped early (a non-finite gradient), or null. */
  stopped: string | null;
}

export interface EditorResult {
  editor: EditorKind;
  spec: EditorSpec;
  /** The checkpoint's own rollouts (the drift batch; also update 1's batch when drawn with FULL_SAMPLING). */
  rollouts: { seed: number; batch: BatchFigures; summary: DatasetSummary; skipped: { id: string; reason: string }[]; generateMs: number };
  drift: DriftReport;
  /** The signed drift the drift batch's sampler should expect per method, exact (src/metrics/expected-drift.ts). */
  expected: ExpectedDriftReport;
  /** The checkpoint's EM on the held-out batch, before any update. */
  baseline: EvalRecord;
  runs: Partial<Record<Method, RunRecord>>;
}

export interface MatrixResults {
  format: 'memorywalker.experiment-matrix/v1';
  model: ModelConfig;
  config: MatrixConfig & { trainTemperature: number; evalTemperature: number; objective: 'rl' };
  editors: EditorResult[];
  seconds: number;
}

export type MatrixEvent =
  | { kind: 'rollouts'; editor: EditorKind; batch: BatchFigures; drift: DriftReport }
  | { kind: 'baseline'; editor: EditorKind; eval: EvalRecord }
  | { kind: 'step'; editor: EditorKind; method: Method; record: StepRecord }
  | { kind: 'run'; editor: EditorKind; method: Method; run: RunRecord };

export interface MatrixHooks {
  /** After each unit of work; `done` and `total` count units (batches generated and updates). */
  onEvent?(event: MatrixEvent, progress: { done: number; total: number }): void;
  /** After each editor's row of the matrix is complete (a long run can save what it has). */
  onEditor?(result: EditorResult): void | Promise<void>;
}

// ---------------------------------------------------------------------------------------------

/** The first method whose plan needs more positions than the model has, or null when all fit. */
function overflowingMethod(tree: ConditioningTree, nPositions: number): { method: Method; positions: number } | null {
  for (const method of METHODS) {
    const plan = buildPlan(tree, method);
    const sequences = plan.method === 'sdcc' ? [plan.student, ...plan.teachers] : plan.sequences;
    let positions = 0;
    for (const s of sequences) for (const p of s.positions) positions = Math.max(positions, p + 1);
    if (positions > nPositions) return { method, positions };
  }
  return null;
}

interface Batch {
  rollouts: Rollout[];
  usable: Rollout[];
  skipped: { id: string; reason: string }[];
  figures: BatchFigures;
  summary: DatasetSummary;
  generateMs: number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

function median(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Generates a batch with `policy` and keeps the rollouts every method can replay in the model's positions. */
async function generateBatch(config: MatrixConfig, editor: EditorSpec, policy: Policy, seed: number, n: number, group: number, nPositions: number): Promise<Batch> {
  const started = performance.now();
  const dataset = await generateDataset({ env: config.env, editor, n, groupSize: group, seed, episode: config.episode }, policy);
  const generateMs = performance.now() - started;
  const rollouts = dataset.rollouts.map((json) => validateRollout(json, { file: json.id }));
  const usable: Rollout[] = [];
  const trees: ConditioningTree[] = [];
  const skipped: { id: string; reason: string }[] = [];
  for (const rollout of rollouts) {
    const tree = deriveTree(rollout);
    const over = overflowingMethod(tree, nPositions);
    if (over) skipped.push({ id: rollout.id, reason: `${over.method} needs ${over.positions} positions, the model has ${nPositions}` });
    else {
      usable.push(rollout);
      trees.push(tree);
    }
  }
  const sum = (f: (t: ConditioningTree) => number) => trees.reduce((s, t) => s + f(t), 0);
  const finalWalk = sum((t) => t.figures.finalWalkLength);
  const figures: BatchFigures = {
    rollouts: rollouts.length,
    usable: usable.length,
    meanReward: dataset.summary.meanReward,
    em: dataset.summary.em,
    K: trees.length ? sum((t) => t.figures.K) / trees.length : 0,
    divergingLeaves: sum((t) => t.figures.divergingLeaves),
    targets: sum((t) => t.figures.targets),
    droppedTargets: sum((t) => t.figures.droppedTargets),
    packedRatio: finalWalk ? sum((t) => t.figures.packedLength) / finalWalk : null,
    stops: dataset.summary.stops,
  };
  return { rollouts, usable, skipped, figures, summary: dataset.summary, generateMs };
}

async function heldOut(config: MatrixConfig, editor: EditorSpec, engine: MatrixEngine, model: GpuModel): Promise<EvalRecord> {
  const seed = evalSeed(config.seed);
  const policy = engine.createPolicy(model, { temperature: EVAL_TEMPERATURE });
  const { summary } = await generateDataset({ env: config.env, editor, n: config.evalN, groupSize: 1, seed, episode: config.episode }, policy);
  return { seed, rollouts: summary.rollouts, em: summary.em, meanReward: summary.meanReward, temperature: EVAL_TEMPERATURE };
}

/** Does `method` score any target of these rollouts? (trainStep refuses a batch where it scores none.) */
function scoresAny(rollouts: readonly Rollout[], method: Method): boolean {
  return rollouts.some((r) => {
    const plan = buildPlan(deriveTree(r), method);
    return plan.method === 'sdcc' ? plan.student.targets.length > 0 : plan.sequences.some((s) => s.targets.length > 0);
  });
}

function summarizeRun(steps: readonly StepRecord[]): RunSummary {
  const ran = steps.filter((s) => s.metrics !== null).map((s) => s.metrics!);
  const defined = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null && Number.isFinite(x));
  const times = ran.map((m) => m.stepMs);
  return {
    logdiff: mean(defined(ran.map((m) => m.logdiff))),
    mu: mean(defined(ran.map((m) => m.mu))),
    klSdcc: ran.length ? mean(ran.map((m) => m.klSdcc)) : null,
    klFiredSteps: ran.filter((m) => m.klFired).length,
    updates: ran.length,
    skipped: steps.length - ran.length,
    meanReward: mean(steps.map((s) => s.batch.meanReward)),
    stepMs: median(times.length >= 3 ? times.slice(1) : times),
    tokensPerStep: mean(ran.map((m) => m.tokens)),
  };
}

/**
 * Runs the matrix: per editor, the checkpoint's rollouts and their drift, the checkpoint's held-out
 * EM, and per method an RL run of `steps` on-policy updates from `weights`, then its held-out EM.
 */
export async function runMatrix(config: MatrixConfig, weights: ModelWeights, engine: MatrixEngine, hooks: MatrixHooks = {}): Promise<MatrixResults> {
  const started = performance.now();
  const { gpu } = engine;
  const P = weights.config.nPositions;
  for (const [name, v] of [['n', config.n], ['group', config.group], ['steps', config.steps], ['evalN', config.evalN]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`runMatrix: ${name} must be an integer >= 1, got ${v}`);
  }
  if (config.episode.maxContext > P) throw new Error(`runMatrix: maxContext ${config.episode.maxContext} exceeds the model's ${P} positions`);
  const schedule = { peak: config.lr, warmup: 0, total: config.steps, min: config.lr };
  // Units of work, for progress: per editor the drift batch and the baseline, per run each update's batch and the final evaluation.
  const total = config.editors.length * (2 + config.methods.length * (config.steps + 1));
  let done = 0;
  const emit = (event: MatrixEvent) => hooks.onEvent?.(event, { done: ++done, total });

  const base = engine.createGpuModel(gpu, weights);
  const editors: EditorResult[] = [];
  try {
    for (const editor of config.editors) {
      const first = await generateBatch(config, editor, engine.createPolicy(base, config.driftSampling), batchSeed(config.seed, 1), config.n, config.group, P);
      const scores = await engine.scoreRollouts(base, first.usable, SCORING_METHODS, { rows: true });
      const drift = driftReport(first.usable, logprobsOf(scores), config.bins);
      const expected = expectedDrift(scores, config.driftSampling);
      emit({ kind: 'rollouts', editor: editor.kind, batch: first.figures, drift });
      const baseline = await heldOut(config, editor, engine, base);
      emit({ kind: 'baseline', editor: editor.kind, eval: baseline });

      // Update 1 of every run draws from the checkpoint itself: the drift batch when it was sampled
      // like a training batch, else one training batch drawn once for all runs.
      let firstTrain: Batch | null = isFullSampling(config.driftSampling) ? first : null;
      const runs: Partial<Record<Method, RunRecord>> = {};
      for (const method of config.methods) {
        const trainer = engine.createTrainer(gpu, weights, { schedule });
        try {
          const steps: StepRecord[] = [];
          let stopped: string | null = null;
          for (let update = 1; update <= config.steps && stopped === null; update++) {
            // Update 1 draws what every run's update 1 draws: the checkpoint's weights, the same seed.
            const reused = update === 1 && firstTrain !== null;
            const batch = reused
              ? firstTrain!
              : await generateBatch(config, editor, engine.createPolicy(trainer.model, FULL_SAMPLING), batchSeed(config.seed, update), config.n, config.group, P);
            if (update === 1) firstTrain = batch;
            const record: StepRecord = {
              update,
              seed: batchSeed(config.seed, update),
              batch: batch.figures,
              generateMs: reused ? 0 : batch.generateMs,
              metrics: null,
              skipped: null,
            };
            if (batch.usable.length === 0) record.skipped = 'no rollout of the batch fits the model';
            else if (!scoresAny(batch.usable, method)) record.skipped = `${method} scores no target of the batch`;
            else {
              try {
                const { logprobs: _perTarget, ...metrics } = await trainer.trainStep(batch.usable, {
                  method,
                  objective: 'rl',
                  lambda: method === 'sdcc' ? config.lambda : undefined,
                  // On-policy, the rollout logprobs are the current weights' live-prefix scores, so
                  // logdiff already is the conditioning drift; measuring it again would add a forward
                  // to the non-exact methods' step time only.
                  conditioningDrift: false,
                });
                record.metrics = metrics;
              } catch (error) {
                // The update was not applied; the weights stay those of the last good update.
                if (!(error instanceof Error && error.name === 'NonFiniteGradientError')) throw error;
                record.skipped = error.message;
                stopped = `update ${update}: ${error.message}`;
              }
            }
            steps.push(record);
            emit({ kind: 'step', editor: editor.kind, method, record });
          }
          const final = await heldOut(config, editor, engine, trainer.model);
          const run: RunRecord = { method, steps, final, summary: summarizeRun(steps), stopped };
          runs[method] = run;
          // A run stopped early never reaches the units of its missing updates.
          done += config.steps - steps.length;
          emit({ kind: 'run', editor: editor.kind, method, run });
        } finally {
          trainer.destroy();
        }
      }
      const result: EditorResult = {
        editor: editor.kind,
        spec: editor,
        rollouts: { seed: batchSeed(config.seed, 1), batch: first.figures, summary: first.summary, skipped: first.skipped, generateMs: first.generateMs },
        drift,
        expected,
        baseline,
        runs,
      };
      editors.push(result);
      await hooks.onEditor?.(result);
    }
  } finally {
    base.destroy();
  }
  return matrixResults(config, weights.config, editors, (performance.now() - started) / 1000);
}

/** The results document of the editors done so far. */
export function matrixResults(config: MatrixConfig, model: ModelConfig, editors: readonly EditorResult[], seconds: number): MatrixResults {
  return {
    format: 'memorywalker.experiment-matrix/v1',
    model: { ...model },
    config: { ...config, trainTemperature: FULL_SAMPLING.temperature, evalTemperature: EVAL_TEMPERATURE, objective: 'rl' },
    editors: [...editors],
    seconds,
  };
}
