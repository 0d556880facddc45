// The experiment matrix (issue 7): for each memory editor, the drift of every replay method on the
// checkpoint's own rollouts, then one short on-policy RL run per training method from that same
// checkpoint, and each run's final EM on a held-out batch. This file: its settings and results as
// plain data; src/experiments/run.ts runs it on the run engine (loaded only when a matrix runs).

import type { StepFigures } from '../gpu/train';
import type { DatasetSummary } from '../harness/dataset';
import type { EditorKind, EditorSpec } from '../harness/editors';
import type { EnvId, EnvSpec } from '../harness/env';
import type { Policy } from '../harness/policy';
import { FULL_SAMPLING, type ModelPolicyOptions, type SamplingOptions } from '../harness/policies/model';
import type { DriftReport } from '../metrics/drift-report';
import type { ExpectedDriftReport } from '../metrics/expected-drift';
import type { ModelConfig } from '../model/config';
import type { Method } from '../plan/types';
import type { Gpu } from '../gpu/runtime/device';
import type { GpuModel } from '../gpu/model';

/** What the matrix is run on: the device, and how a model plays (src/gpu/generate.ts's createGpuModelPolicy). */
export interface MatrixEngine {
  gpu: Gpu;
  createPolicy(model: GpuModel, options: ModelPolicyOptions): Policy;
}

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
 * Seeds (src/run/seeds.ts, as every run): update u draws its prompts from stepSeed(seed, u − 1), so
 * the drift batch, which is also update 1's, uses `seed` itself (`mw generate --seed S --n N --group G`
 * reproduces it) and every method's update u the same prompts; the held-out batch heldOutSeed(seed).
 */

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

export interface RunRecord {
  method: Method;
  steps: StepRecord[];
  final: EvalRecord;
  summary: ReturnType<typeof summarizeRun>;
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

export const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The finite numbers of XS (a skipped or diverged update records null or a non-finite value). */
export const finite = (xs: readonly (number | null | undefined)[]) => xs.filter((x): x is number => x !== null && x !== undefined && Number.isFinite(x));

function median(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A run's means over the updates that ran. */
export function summarizeRun(steps: readonly StepRecord[]) {
  const ran = steps.filter((s) => s.metrics !== null).map((s) => s.metrics!);
  const times = ran.map((m) => m.stepMs);
  return {
    logdiff: mean(finite(ran.map((m) => m.logdiff))),
    mu: mean(finite(ran.map((m) => m.mu))),
    klSdcc: mean(ran.map((m) => m.klSdcc)),
    klFiredSteps: ran.filter((m) => m.klFired).length,
    updates: ran.length,
    skipped: steps.length - ran.length,
    meanReward: mean(steps.map((s) => s.batch.meanReward)),
    // The median: the first update left out when there are three or more (it compiles pipelines).
    stepMs: median(times.length >= 3 ? times.slice(1) : times),
    tokensPerStep: mean(ran.map((m) => m.tokens)),
  };
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
