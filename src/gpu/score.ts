// Scoring on the GPU: the log-probability of every target of a plan (SPEC §4), with the plan's
// sequences packed block-diagonally into as few forward passes as fit, one submit and one read each.

import { buildPlan } from '../plan/build';
import type { Method, PlanSequence, SequenceMethod, SequencePlan } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { packBatch } from '../plan/batch';
import { createStorage, readFloat32, uploadStorage } from './buffers';
import { encodeLaunches, releaseLaunches } from './kernel';
import { createLogsoftmaxGather } from './logsoftmax';
import { createForward, type GpuModel } from './model';

export interface ScoreOptions {
  /** Most rows in one forward pass (sequences are never split). */
  maxRows?: number;
}

export const DEFAULT_MAX_ROWS = 4096;

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
 * `logprobs` (R floats, in `targets` order): encode it into any pass (a training step encodes it
 * beside its own work), read `logprobs` after the submit, then destroy().
 */
export interface TargetScoring {
  R: number;
  logprobs: GPUBuffer;
  /** The forward's (N, V) logits (row i predicts the token after packed row i). */
  logits: GPUBuffer;
  N: number;
  encode(pass: GPUComputePassEncoder): void;
  destroy(): void;
}

export function createTargetScoring(model: GpuModel, batch: ScoredBatchInput, label = 'Score'): TargetScoring {
  const { device } = model.gpu;
  const R = batch.targets.length;
  const forward = createForward(model, batch);
  const rows = uploadStorage(device, `${label}.rows`, Uint32Array.from(batch.targets, (t) => t.predictor));
  const tokens = uploadStorage(device, `${label}.tokens`, Uint32Array.from(batch.targets, (t) => t.token));
  const lse = createStorage(device, `${label}.lse`, R * 4);
  const logprobs = createStorage(device, `${label}.logprobs`, R * 4);
  const gather = createLogsoftmaxGather(device, { R, V: model.config.vocabSize, M: forward.N }, { logits: forward.logits, rows, tokens, lse, logprobs });
  return {
    R,
    logprobs,
    logits: forward.logits,
    N: forward.N,
    encode(pass) {
      forward.encode(pass);
      encodeLaunches(pass, gather);
    },
    destroy() {
      releaseLaunches(gather);
      [rows, tokens, lse, logprobs].forEach((b) => b.destroy());
      forward.destroy();
    },
  };
}

/** What scoring one packed batch read back: the targets' log-probabilities, and the (N, V) logits when asked for. */
interface BatchScores {
  logprobs: Float32Array;
  logits: Float32Array | null;
}

async function runScoring(model: GpuModel, batch: ScoredBatchInput, withLogits: boolean): Promise<BatchScores> {
  const { device } = model.gpu;
  if (batch.targets.length === 0) return { logprobs: new Float32Array(0), logits: withLogits ? new Float32Array(0) : null };
  const scoring = createTargetScoring(model, batch);
  const encoder = device.createCommandEncoder({ label: 'Score.encoder' });
  const pass = encoder.beginComputePass({ label: 'Score.pass' });
  scoring.encode(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  try {
    const [logprobs, logits] = await Promise.all([
      readFloat32(device, scoring.logprobs, scoring.R),
      withLogits ? readFloat32(device, scoring.logits, scoring.N * model.config.vocabSize) : null,
    ]);
    return { logprobs, logits };
  } finally {
    scoring.destroy();
  }
}

/** Log-probabilities of the targets of one packed batch, in `batch.targets` order. */
export async function scoreBatch(model: GpuModel, batch: ScoredBatchInput): Promise<Float32Array> {
  return (await runScoring(model, batch, false)).logprobs;
}

export interface ScoredTarget {
  id: number;
  logprob: number;
  /** With `logits: true`: the V logits the target was scored from (its predictor row). */
  logits?: Float32Array;
}

/** Every target a sequence plan scores, in plan order (sequence by sequence). */
export async function scoreSequences(model: GpuModel, sequences: readonly PlanSequence[], options: ScoreOptions & { logits?: boolean } = {}): Promise<ScoredTarget[]> {
  const out: ScoredTarget[] = [];
  const V = model.config.vocabSize;
  for (const group of groupSequences(sequences, options.maxRows)) {
    const batch = packBatch(group);
    const { logprobs, logits } = await runScoring(model, batch, options.logits ?? false);
    batch.targets.forEach((t, i) => {
      const target: ScoredTarget = { id: t.id, logprob: logprobs[i] };
      if (logits) target.logits = logits.slice(t.predictor * V, (t.predictor + 1) * V);
      out.push(target);
    });
  }
  return out;
}

export async function scorePlan(model: GpuModel, plan: SequencePlan, options: ScoreOptions & { logits?: boolean } = {}): Promise<{ method: Method; targets: ScoredTarget[] }> {
  return { method: plan.method, targets: await scoreSequences(model, plan.sequences, options) };
}

/** Per method, every scored target (by rollout, by physical id). */
export type RolloutScores = Record<SequenceMethod, Map<number, ScoredTarget>[]>;

/** Scores every target of the rollouts under each method: one plan per rollout, packed into as few forwards as fit. */
export async function scoreRollouts(
  model: GpuModel,
  rollouts: readonly Rollout[],
  methods: readonly SequenceMethod[],
  options: ScoreOptions & { logits?: boolean } = {},
): Promise<RolloutScores> {
  const trees = rollouts.map(deriveTree);
  const out = {} as RolloutScores;
  for (const method of methods) {
    const perRollout = rollouts.map(() => new Map<number, ScoredTarget>());
    const sequences: PlanSequence[] = [];
    const owner: number[] = [];
    trees.forEach((tree, r) => {
      for (const s of buildPlan(tree, method).sequences) {
        sequences.push(s);
        owner.push(r);
      }
    });
    const scored = await scoreSequences(model, sequences, options);
    let k = 0;
    sequences.forEach((s, i) => {
      for (let j = 0; j < s.targets.length; j++, k++) perRollout[owner[i]].set(scored[k].id, scored[k]);
    });
    out[method] = perRollout;
  }
  return out;
}
