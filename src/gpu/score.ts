// Scoring on the GPU, with GPT-2 or a family model (a ScoringModel view of either, scoring-model.ts):
// the log-probability of every target of a plan (docs/methods.md), with the plan's
// sequences packed block-diagonally into as few forward passes as fit, one submit and one read each;
// evaluate(): every method's log-probability of every target of a batch of rollouts. A pass keeps two
// layers' activations and the logits of one block of targets at a time (GPT-2 124M on 1,024 tokens:
// about 120 MB beyond the weights).

import { logprobsOf, type Evaluation, type RolloutScores, type ScoredTarget } from '../metrics/drift-report';
import { buildPlan } from '../plan/build';
import { SEQUENCE_METHODS, type Method, type PlanSequence, type SequenceMethod, type SequencePlan } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { packBatch } from '../plan/batch';
import { reachPlan, type Reach } from '../plan/reach';
import { createOwner, readFloat32 } from './runtime/buffers';
import { createGatherRows } from './kernels/gather-rows/gather-rows';
import { encodeLaunches, releaseLaunches, type Launch } from './runtime/kernel';
import { createLogsoftmaxGather, createLogsoftmaxRows } from './kernels/logsoftmax/logsoftmax';
import { BLOCK_ROWS_ALIGN, bindingLimit, GpuLimitError, subBinding } from './runtime/limits';
import { familyScoring, type FamilyGpuModel } from './family-model';
import { mib, type BatchInput, type GpuModel } from './model';
import { gpt2Scoring, type ScoringModel } from './scoring-model';

/** A model scoring can run: GPT-2 or one of the model families (Llama, Qwen2, Qwen3). */
export type ScoredModel = GpuModel | FamilyGpuModel;

/** The scoring view of a model: its sizes and closures over it (cheap: nothing is allocated until a forward or head is made). */
export function scoringModel(model: ScoredModel): ScoringModel {
  return 'family' in model ? familyScoring(model) : gpt2Scoring(model);
}

export interface ScoreOptions {
  /** Most rows in one forward pass (sequences are never split); default scoringRows(model). */
  maxRows?: number;
  /**
   * Also each target's V log-probabilities (the log softmax of its predictor row, on the GPU): of
   * every target, or of those the predicate names (by physical id).
   */
  rows?: boolean | ((id: number) => boolean);
  /** Called after every forward pass (long runs report progress). */
  onProgress?: (progress: ScoreProgress) => void;
  /** Checked before every forward pass: an aborted signal rejects with its reason (a cancel button). */
  signal?: AbortSignal;
  /**
   * scoreRollouts: each plan within the model's positions, or on a window of them (src/plan/reach.ts); the
   * targets left out or windowed are told to `onReach`, per method and rollout, before any forward pass.
   */
  reach?: Reach;
  onReach?: (reached: { method: SequenceMethod; rollout: number; outOfReach: number[]; windowed: number[] }) => void;
}

/** Rows forwarded so far out of all the rows a scoring call forwards, and the method being scored. */
export interface ScoreProgress {
  tokens: number;
  total: number;
  method: SequenceMethod;
}

export const DEFAULT_MAX_ROWS = 4096;

/** What a scoring batch's activations may take (two layers' worth, forward only): 128 MiB (GPT-2 124M: 1,504 rows). */
export const SCORE_BATCH_BYTES = 128 * 2 ** 20;

/** What one block of targets' logits may take: 32 MiB (GPT-2: 128 targets at a time). */
export const HEAD_BLOCK_BYTES = 32 * 2 ** 20;

/** Rows per scoring batch: DEFAULT_MAX_ROWS, fewer when the batch's activations would exceed SCORE_BATCH_BYTES or one binding. */
export function scoringRows(model: ScoredModel): number {
  const s = scoringModel(model);
  const limit = bindingLimit(s.gpu.device);
  const byActivations = Math.floor(SCORE_BATCH_BYTES / s.rowBytes);
  const byBinding = Math.floor(limit / (s.widestRow * 4));
  return Math.max(1, Math.min(DEFAULT_MAX_ROWS, byActivations, byBinding));
}

/**
 * Targets whose logits are computed at once: a multiple of BLOCK_ROWS_ALIGN (aligned slices), within
 * HEAD_BLOCK_BYTES (or BLOCK_ROWS_ALIGN rows where a vocabulary makes those larger: Qwen's 151,936) and one binding.
 */
export function headBlockRows(model: ScoredModel): number {
  const { V, gpu } = scoringModel(model);
  const bytes = Math.min(Math.max(HEAD_BLOCK_BYTES, BLOCK_ROWS_ALIGN * V * 4), bindingLimit(gpu.device));
  const rows = Math.floor(bytes / (V * 4) / BLOCK_ROWS_ALIGN) * BLOCK_ROWS_ALIGN;
  if (rows === 0) {
    throw new GpuLimitError(
      `model does not fit the adapter: the logits of ${BLOCK_ROWS_ALIGN} targets need a ${mib(BLOCK_ROWS_ALIGN * V * 4)} binding, the adapter binds at most ${mib(bindingLimit(gpu.device))} (maxStorageBufferBindingSize)`,
    );
  }
  return rows;
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

export type ScoredBatchInput = Omit<BatchInput, 'group'> & { targets: readonly { predictor: number; token: number }[] };

/**
 * A recorded forward over a batch plus the gather of its targets' log-probabilities into
 * `logprobs` (R floats, in `targets` order) and, when asked, full log-probability rows into
 * `logprobRows` (one row of V per target of `rowTargets`, indices into `targets`, in that order):
 * encode it into any pass (a training step encodes it beside its own work), read the buffers after
 * the submit, then destroy().
 *
 * The forward runs through the last block only (GPT-2: two layers' activations, createHiddenForward;
 * a family model: one set, createFamilyForward); the final norm and the head then run over the
 * targets' predictor rows alone, a block of
 * headBlockRows at a time (gathered, normalized, projected, log-softmaxed): the batch's (N, V) logits
 * never exist. Every row's values are the full forward's, bit for bit: each kernel computes a row on
 * its own. Targets with rows (a subset) get a second pass over their own blocks, so `logprobs` keeps
 * the targets' order.
 */
export function createTargetScoring(model: ScoredModel, batch: ScoredBatchInput, label = 'Score', options: { rows?: boolean | ArrayLike<boolean> } = {}) {
  const scoring = scoringModel(model);
  const { device } = scoring.gpu;
  const { C, V } = scoring;
  const R = batch.targets.length;
  const allRows = options.rows === true;
  const rowTargets = allRows
    ? Int32Array.from(batch.targets, (_, j) => j)
    : options.rows
      ? Int32Array.from(Array.from(batch.targets.keys()).filter((j) => (options.rows as ArrayLike<boolean>)[j]))
      : new Int32Array(0);
  const owner = createOwner(device, label);
  const forward = owner.own(scoring.hiddenForward(batch));
  const B = Math.min(headBlockRows(model), Math.max(BLOCK_ROWS_ALIGN, Math.ceil(R / BLOCK_ROWS_ALIGN) * BLOCK_ROWS_ALIGN));
  const { buf: storage, upload } = owner;
  const predictors = upload(
    'predictors',
    Uint32Array.from(batch.targets, (t) => t.predictor),
  );
  const tokens = upload(
    'tokens',
    Uint32Array.from(batch.targets, (t) => t.token),
  );
  const lse = storage('lse', R);
  const logprobs = storage('logprobs', R);
  // One block's working set, reused block after block (dispatches in a pass run in order).
  const local = upload(
    'blockRows',
    Uint32Array.from({ length: B }, (_, i) => i),
  );
  const x = storage('x', B * C); // (B, C): the block's predictor rows of the last block's output
  const head = owner.own(scoring.head(B)); // the final norm's scratch
  const logits = storage('logits', B * V); // (B, V)
  const slice = (buffer: GPUBuffer, first: number, count: number, width = 1) => subBinding(buffer, first * width * 4, count * width * 4);
  /** Gather, the final norm and the head over requests [r0, r0 + n) of `rows` (predictor rows): the block's logits. */
  const headLaunches = (rows: GPUBufferBinding, n: number): Launch[] => [
    createGatherRows(device, { R: n, C, N: forward.N }, { x: forward.hidden, rows, out: x }),
    ...head.launches(n, { x, logits }),
  ];
  const launches: Launch[] = [];
  owner.own({ destroy: () => releaseLaunches(launches) });
  const logprobRows = rowTargets.length ? storage('logprobRows', rowTargets.length * V) : null;
  const rowLse = rowTargets.length ? storage('rowLse', rowTargets.length) : null;
  /** Blocks of `count` requests of `rows` (predictor rows): their logits, then what `after` makes of them. */
  const overBlocks = (rows: GPUBuffer, count: number, after: (r0: number, n: number) => Launch[]) => {
    for (let r0 = 0; r0 < count; r0 += B) {
      const n = Math.min(B, count - r0);
      launches.push(...headLaunches(slice(rows, r0, n), n), ...after(r0, n));
    }
  };
  const rowsOf = (r0: number, n: number) =>
    createLogsoftmaxRows(device, { R: n, V, M: n }, { logits, rows: local, lse: slice(rowLse!, r0, n), out: slice(logprobRows!, r0, n, V) });
  overBlocks(predictors, R, (r0, n) => [
    ...createLogsoftmaxGather(
      device,
      { R: n, V, M: n },
      { logits, rows: local, tokens: slice(tokens, r0, n), lse: slice(lse, r0, n), logprobs: slice(logprobs, r0, n) },
    ),
    ...(allRows ? rowsOf(r0, n) : []),
  ]);
  if (rowTargets.length && !allRows)
    overBlocks(
      upload(
        'rowPredictors',
        Uint32Array.from(rowTargets, (j) => batch.targets[j].predictor),
      ),
      rowTargets.length,
      rowsOf,
    );
  return {
    R,
    logprobs,
    logprobRows,
    rowTargets,
    encode(pass: GPUComputePassEncoder) {
      forward.encode(pass);
      encodeLaunches(pass, launches);
    },
    destroy: owner.destroy,
  };
}

/** What scoring one packed batch read back: the targets' log-probabilities, and the (rowTargets, V) rows asked for. */
async function runScoring(model: ScoredModel, batch: ScoredBatchInput, rows: boolean | ArrayLike<boolean>) {
  const { device } = scoringModel(model).gpu;
  if (batch.targets.length === 0) return { logprobs: new Float32Array(0), rows: null, rowTargets: new Int32Array(0) };
  const scoring = createTargetScoring(model, batch, 'Score', { rows });
  const encoder = device.createCommandEncoder({ label: 'Score.encoder' });
  const pass = encoder.beginComputePass({ label: 'Score.pass' });
  scoring.encode(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  try {
    const [logprobs, rowValues] = await Promise.all([
      readFloat32(device, scoring.logprobs, scoring.R),
      scoring.logprobRows ? readFloat32(device, scoring.logprobRows, scoring.rowTargets.length * scoringModel(model).V) : null,
    ]);
    return { logprobs, rows: rowValues, rowTargets: scoring.rowTargets };
  } finally {
    scoring.destroy();
  }
}

/** Log-probabilities of the targets of one packed batch, in `batch.targets` order. */
export async function scoreBatch(model: ScoredModel, batch: ScoredBatchInput): Promise<Float32Array> {
  return (await runScoring(model, batch, false)).logprobs;
}

/** Every target a sequence plan scores, in plan order (sequence by sequence). `forwarded` hears the rows of each pass. */
export async function scoreSequences(
  model: ScoredModel,
  sequences: readonly PlanSequence[],
  options: ScoreOptions = {},
  forwarded?: (rows: number) => void,
): Promise<ScoredTarget[]> {
  const out: ScoredTarget[] = [];
  const { V } = scoringModel(model);
  for (const group of groupSequences(sequences, options.maxRows ?? scoringRows(model))) {
    options.signal?.throwIfAborted();
    const batch = packBatch(group);
    const wanted = options.rows;
    const { logprobs, rows, rowTargets } = await runScoring(
      model,
      batch,
      typeof wanted === 'function' ? batch.targets.map((t) => wanted(t.id)) : (wanted ?? false),
    );
    const first = out.length;
    batch.targets.forEach((t, i) => out.push({ id: t.id, logprob: logprobs[i] }));
    if (rows) rowTargets.forEach((j, k) => (out[first + j].row = rows.subarray(k * V, (k + 1) * V)));
    forwarded?.(batch.tokens.length);
  }
  return out;
}

export async function scorePlan(model: ScoredModel, plan: SequencePlan, options: ScoreOptions = {}): Promise<{ method: Method; targets: ScoredTarget[] }> {
  return { method: plan.method, targets: await scoreSequences(model, plan.sequences, options) };
}

/** Scores every target of the rollouts under each method: one plan per rollout, packed into as few forwards as fit. */
export async function scoreRollouts(
  model: ScoredModel,
  rollouts: readonly Rollout[],
  methods: readonly SequenceMethod[],
  options: ScoreOptions = {},
): Promise<RolloutScores> {
  const trees = rollouts.map(deriveTree);
  const out = {} as RolloutScores;
  const plans = methods.map((method) => {
    const perTree = trees.map((tree, rollout) => {
      const plan = buildPlan(tree, method);
      if (!options.reach) return plan.sequences;
      const reached = reachPlan(plan, options.reach);
      options.onReach?.({ method, rollout, outOfReach: reached.outOfReach, windowed: reached.windowed });
      return reached.plan.sequences;
    });
    // owner[i]: the rollout of sequences[i].
    return { method, sequences: perTree.flat(), owner: perTree.flatMap((sequences, r) => sequences.map(() => r)) };
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
export async function evaluate(model: ScoredModel, rollouts: readonly Rollout[], methods: readonly SequenceMethod[] = SEQUENCE_METHODS): Promise<Evaluation> {
  return logprobsOf(await scoreRollouts(model, rollouts, methods));
}
