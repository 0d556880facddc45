// Scoring on the GPU: the log-probability of every target of a plan (SPEC §4), with the plan's
// sequences packed block-diagonally into as few forward passes as fit, one submit and one read each.

import type { Method, PlanSequence, SequencePlan } from '../plan/types';
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

/** Log-probabilities of the targets of one packed batch, in `batch.targets` order. */
export async function scoreBatch(model: GpuModel, batch: ScoredBatchInput): Promise<Float32Array> {
  const { device } = model.gpu;
  if (batch.targets.length === 0) return new Float32Array(0);
  const scoring = createTargetScoring(model, batch);
  const encoder = device.createCommandEncoder({ label: 'Score.encoder' });
  const pass = encoder.beginComputePass({ label: 'Score.pass' });
  scoring.encode(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  try {
    return await readFloat32(device, scoring.logprobs, scoring.R);
  } finally {
    scoring.destroy();
  }
}

export interface ScoredTarget {
  id: number;
  logprob: number;
}

/** Every target a sequence plan scores, in plan order (sequence by sequence). */
export async function scoreSequences(model: GpuModel, sequences: readonly PlanSequence[], options: ScoreOptions = {}): Promise<ScoredTarget[]> {
  const out: ScoredTarget[] = [];
  for (const group of groupSequences(sequences, options.maxRows)) {
    const batch = packBatch(group);
    const logprobs = await scoreBatch(model, batch);
    batch.targets.forEach((t, i) => out.push({ id: t.id, logprob: logprobs[i] }));
  }
  return out;
}

export async function scorePlan(model: GpuModel, plan: SequencePlan, options: ScoreOptions = {}): Promise<{ method: Method; targets: ScoredTarget[] }> {
  return { method: plan.method, targets: await scoreSequences(model, plan.sequences, options) };
}
