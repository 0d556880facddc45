// Scoring on the GPU: the log-probability of every target of a plan (docs/methods.md), with the plan's
// sequences packed block-diagonally into as few forward passes as fit, one submit and one read each;
// evaluate(): every method's log-probability of every target of a batch of rollouts.

import { logprobsOf, type Evaluation, type RolloutScores, type ScoredTarget } from '../metrics/drift-report';
import { buildPlan } from '../plan/build';
import { SEQUENCE_METHODS, type Method, type PlanSequence, type SequenceMethod, type SequencePlan } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { packBatch } from '../plan/batch';
import { createStorage, readFloat32, uploadStorage } from './buffers';
import { encodeLaunches, releaseLaunches } from './kernel';
import { createLogsoftmaxGather, createLogsoftmaxRows } from './logsoftmax';
import { bindingLimit } from './limits';
import { createForward, type GpuModel } from './model';

export interface ScoreOptions {
  /** Most rows in one forward pass (sequences are never split); default scoringRows(model). */
  maxRows?: number;
  /** Also each target's V log-probabilities (the log softmax of its predictor row, on the GPU). */
  rows?: boolean;
  /** Called after every forward pass (long runs report progress). */
  onProgress?: (progress: ScoreProgress) => void;
  /** Checked before every forward pass: an aborted signal rejects with its reason (a cancel button). */
  signal?: AbortSignal;
}

/** Rows forwarded so far out of all the rows a scoring call forwards, and the method being scored. */
export interface ScoreProgress {
  tokens: number;
  total: number;
  method: SequenceMethod;
}

export const DEFAULT_MAX_ROWS = 4096;

/** What a batch's logits, and its log-probability rows, may take: 256 MiB each (GPT-2: 1335 rows). */
export const SCORE_LOGITS_BYTES = 256 * 2 ** 20;

/** Rows per scoring batch: DEFAULT_MAX_ROWS, fewer when a batch's (rows, V) logits would exceed SCORE_LOGITS_BYTES or one binding. */
export function scoringRows(model: GpuModel): number {
  const bytes = Math.min(SCORE_LOGITS_BYTES, bindingLimit(model.gpu.device));
  return Math.max(1, Math.min(DEFAULT_MAX_ROWS, Math.floor(bytes / (model.config.vocabSize * 4))));
}

/** Groups sequences, in order, into batches of at most maxRows rows (a longer sequence stands alone). */
export function groupSequences(sequences: readonly PlanSequence[], maxRows = DEFAULT_MAX_ROWS): PlanSequence[][] {
  const groups: PlanSequence[][] = [];
  let current: PlanSequence[] = [];
  let rows = 0;
  for (const s of sequences) {
    if (current.length && rows + s.ids.length > maxRows) {
      groups.push(current);
      current = [];
      rows = 0;
    }
    current.push(s);
    rows += s.ids.length;
  }
  if (current.length) groups.push(current);
  return groups;
}

export interface ScoredBatchInput {
  tokens: ArrayLike<number>;
  positions: ArrayLike<number>;
  end: ArrayLike<number>;
  targets: readonly { predictor: number; token: number }[];
}

/**
 * A recorded forward over a batch plus the gather of its targets' log-probabilities into
 * `logprobs` (R floats, in `targets` order) and, with `rows`, their full log-probability rows into
 * `logprobRows` (R × V): encode it into any pass (a training step encodes it beside its own work),
 * read the buffers after the submit, then destroy().
 */
export interface TargetScoring {
  R: number;
  logprobs: GPUBuffer;
  logprobRows: GPUBuffer | null;
  encode(pass: GPUComputePassEncoder): void;
  destroy(): void;
}

export function createTargetScoring(model: GpuModel, batch: ScoredBatchInput, label = 'Score', options: { rows?: boolean } = {}): TargetScoring {
  const { device } = model.gpu;
  const R = batch.targets.length;
  const forward = createForward(model, batch);
  const shape = { R, V: model.config.vocabSize, M: forward.N };
  const rows = uploadStorage(device, `${label}.rows`, Uint32Array.from(batch.targets, (t) => t.predictor));
  const tokens = uploadStorage(device, `${label}.tokens`, Uint32Array.from(batch.targets, (t) => t.token));
  const lse = createStorage(device, `${label}.lse`, R * 4);
  const logprobs = createStorage(device, `${label}.logprobs`, R * 4);
  const launches = createLogsoftmaxGather(device, shape, { logits: forward.logits, rows, tokens, lse, logprobs });
  const buffers = [rows, tokens, lse, logprobs];
  let logprobRows: GPUBuffer | null = null;
  if (options.rows) {
    logprobRows = createStorage(device, `${label}.logprobRows`, R * shape.V * 4);
    const rowLse = createStorage(device, `${label}.rowLse`, R * 4);
    launches.push(...createLogsoftmaxRows(device, shape, { logits: forward.logits, rows, lse: rowLse, out: logprobRows }));
    buffers.push(logprobRows, rowLse);
  }
  return {
    R,
    logprobs,
    logprobRows,
    encode(pass) {
      forward.encode(pass);
      encodeLaunches(pass, launches);
    },
    destroy() {
      releaseLaunches(launches);
      buffers.forEach((b) => b.destroy());
      forward.destroy();
    },
  };
}

/** What scoring one packed batch read back: the targets' log-probabilities, and their (R, V) rows when asked for. */
interface BatchScores {
  logprobs: Float32Array;
  rows: Float32Array | null;
}

async function runScoring(model: GpuModel, batch: ScoredBatchInput, withRows: boolean): Promise<BatchScores> {
  const { device } = model.gpu;
  if (batch.targets.length === 0) return { logprobs: new Float32Array(0), rows: withRows ? new Float32Array(0) : null };
  const scoring = createTargetScoring(model, batch, 'Score', { rows: withRows });
  const encoder = device.createCommandEncoder({ label: 'Score.encoder' });
  const pass = encoder.beginComputePass({ label: 'Score.pass' });
  scoring.encode(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  try {
    const [logprobs, rows] = await Promise.all([
      readFloat32(device, scoring.logprobs, scoring.R),
      scoring.logprobRows ? readFloat32(device, scoring.logprobRows, scoring.R * model.config.vocabSize) : null,
    ]);
    return { logprobs, rows };
  } finally {
    scoring.destroy();
  }
}

/** Log-probabilities of the targets of one packed batch, in `batch.targets` order. */
export async function scoreBatch(model: GpuModel, batch: ScoredBatchInput): Promise<Float32Array> {
  return (await runScoring(model, batch, false)).logprobs;
}

/** Every target a sequence plan scores, in plan order (sequence by sequence). `forwarded` hears the rows of each pass. */
export async function scoreSequences(
  model: GpuModel,
  sequences: readonly PlanSequence[],
  options: ScoreOptions = {},
  forwarded?: (rows: number) => void,
): Promise<ScoredTarget[]> {
  const out: ScoredTarget[] = [];
  const V = model.config.vocabSize;
  for (const group of groupSequences(sequences, options.maxRows ?? scoringRows(model))) {
    options.signal?.throwIfAborted();
    const batch = packBatch(group);
    const { logprobs, rows } = await runScoring(model, batch, options.rows ?? false);
    batch.targets.forEach((t, i) => {
      const target: ScoredTarget = { id: t.id, logprob: logprobs[i] };
      if (rows) target.row = rows.subarray(i * V, (i + 1) * V);
      out.push(target);
    });
    forwarded?.(batch.tokens.length);
  }
  return out;
}

export async function scorePlan(model: GpuModel, plan: SequencePlan, options: ScoreOptions = {}): Promise<{ method: Method; targets: ScoredTarget[] }> {
  return { method: plan.method, targets: await scoreSequences(model, plan.sequences, options) };
}

/** Scores every target of the rollouts under each method: one plan per rollout, packed into as few forwards as fit. */
export async function scoreRollouts(
  model: GpuModel,
  rollouts: readonly Rollout[],
  methods: readonly SequenceMethod[],
  options: ScoreOptions = {},
): Promise<RolloutScores> {
  const trees = rollouts.map(deriveTree);
  const out = {} as RolloutScores;
  const plans = methods.map((method) => {
    const sequences: PlanSequence[] = [];
    const owner: number[] = [];
    trees.forEach((tree, r) => {
      for (const s of buildPlan(tree, method).sequences) {
        sequences.push(s);
        owner.push(r);
      }
    });
    return { method, sequences, owner };
  });
  const total = plans.reduce((n, p) => n + p.sequences.reduce((m, s) => m + s.ids.length, 0), 0);
  let tokens = 0;
  for (const { method, sequences, owner } of plans) {
    const perRollout = rollouts.map(() => new Map<number, ScoredTarget>());
    const scored = await scoreSequences(model, sequences, options, (rows) => {
      tokens += rows;
      options.onProgress?.({ tokens, total, method });
    });
    let k = 0;
    sequences.forEach((s, i) => {
      for (let j = 0; j < s.targets.length; j++, k++) perRollout[owner[i]].set(scored[k].id, scored[k]);
    });
    out[method] = perRollout;
  }
  return out;
}

/** Every target's log-probability under each of `methods` (by rollout, by physical id). */
export async function evaluate(model: GpuModel, rollouts: readonly Rollout[], methods: readonly SequenceMethod[] = SEQUENCE_METHODS): Promise<Evaluation> {
  return logprobsOf(await scoreRollouts(model, rollouts, methods));
}
