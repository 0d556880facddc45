// Training on the GPU: one step runs a planned step (src/objectives/step.ts: the layout, targets and
// KL pairs, built on the CPU once) → forward → objective (SFT / PPO-clipped RL, plus SDCC's
// leaf-gated KL, docs/objectives.md) → backward → AdamW, in one command encoder with one read back.
// In four parts: allocate the step's buffers and launches, encode them into one pass, read the
// outputs back, and name the figures (src/metrics/step.ts). Nothing here plans.

import type { Rollout } from '../rollout/rollout';
import type { StepLayout } from '../plan/step';
import type { SequenceMethod } from '../plan/types';
import type { ObjectiveTarget, TokenObjective } from '../objectives/tokens';
import type { PlannedStep } from '../objectives/step';
import { DEFAULT_ADAMW, lrAt, type AdamwHyper, type LrSchedule } from '../objectives/adamw';
import { saveCheckpointPair, type Digest, type OptimizerState } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import type { Evaluation } from '../metrics/drift-report';
import { stepFigures, type StepMetrics } from '../metrics/step';
import type { Gpu } from './runtime/device';
import { createOwner, createStorage, stageReadback } from './runtime/buffers';
import { encodeLaunches, releaseLaunches, type Launch } from './runtime/kernel';
import { createLogsoftmaxGather } from './kernels/logsoftmax/logsoftmax';
import { createGpuModel, createForward, type GpuModel } from './model';
import { createLossGrad, lossGradOutputsFromBytes, TARGET_OUT_BYTES } from './kernels/loss-grad/loss-grad';
import { createKlSdcc, klSdccOutputs } from './kernels/kl-sdcc/kl-sdcc';
import {
  adamwStatusFromBytes,
  ADAMW_STATUS_BYTES,
  commitAdamwStep,
  createAdamw,
  encodeAdamwStep,
  readAdamwState,
  writeAdamwState,
  type Adamw,
} from './kernels/adamw/adamw';
import { createTargetScoring, evaluate, scoreBatch } from './score';

export type { Objective } from '../objectives/tokens';
export type { StepFigures, StepMetrics } from '../metrics/step';

/** What the GPU adds to a planned step: the frozen reference model a KL (klCoef ≠ 0) scores the step's targets with first. */
export interface GpuStepOptions {
  reference?: GpuModel;
}

export interface TrainerOptions {
  schedule: LrSchedule;
  hyper?: AdamwHyper;
  optimizerState?: OptimizerState;
}

export interface Trainer {
  gpu: Gpu;
  model: GpuModel;
  adamw: Adamw;
  schedule: LrSchedule;
  /** Updates applied. */
  readonly step: number;
  /** One update on a planned step (planStep, src/objectives/step.ts). */
  trainStep(step: PlannedStep, options?: GpuStepOptions): Promise<StepMetrics>;
  evaluate(rollouts: readonly Rollout[], methods?: readonly SequenceMethod[]): Promise<Evaluation>;
  /**
   * GPT-2 checkpoint bytes and the optimizer state file beside it, bound to them (saveCheckpointPair:
   * the optimizer file records the weights file's SHA-256, computed by `digest`).
   */
  checkpoint(metadata?: Record<string, string>, digest?: Digest): Promise<{ weights: Uint8Array; optimizer: Uint8Array }>;
  /** The weights and the AdamW state as data (what a checkpoint file holds). */
  readState(): Promise<{ weights: ModelWeights; optimizer: OptimizerState }>;
  readWeights(): Promise<ModelWeights>;
  destroy(): void;
}

export function createTrainer(gpu: Gpu, weights: ModelWeights, options: TrainerOptions): Trainer {
  const model = createGpuModel(gpu, weights);
  const adamw = createAdamw(gpu.device, { layout: model.layout, weights: model.weights, grads: model.grads, hyper: options.hyper ?? DEFAULT_ADAMW });
  if (options.optimizerState) writeAdamwState(gpu.device, adamw, options.optimizerState);
  const readState = async () => ({ weights: await model.readWeights(), optimizer: await readAdamwState(gpu.device, adamw) });
  return {
    gpu,
    model,
    adamw,
    schedule: options.schedule,
    get step() {
      return adamw.step;
    },
    trainStep: (step, stepOptions) => runStep(model, step, stepOptions, { adamw, lr: lrAt(adamw.step, options.schedule) }),
    evaluate: (rollouts, methods) => evaluate(model, rollouts, methods),
    async checkpoint(metadata = {}, digest) {
      const state = await readState();
      return saveCheckpointPair(state.weights, state.optimizer, metadata, digest);
    },
    readState,
    readWeights: () => model.readWeights(),
    destroy() {
      adamw.destroy();
      model.destroy();
    },
  };
}

/**
 * The loss and the parameter gradients (left in model.grads) of one batch, without an update:
 * what `mw verify` and the gradient tests compare against the CPU reference.
 */
export async function computeGradients(model: GpuModel, step: PlannedStep, options?: GpuStepOptions): Promise<StepMetrics> {
  return runStep(model, step, options, null);
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

type Update = { adamw: Adamw; lr: number } | null;

async function runStep(model: GpuModel, step: PlannedStep, options: GpuStepOptions = {}, update: Update): Promise<StepMetrics> {
  const started = now();
  const { layout, rollouts, lambda, klPairs } = step;
  let targets = step.targets;
  if (step.klCoef !== 0) {
    if (!options.reference) throw new Error('trainStep: a KL to a reference (klCoef) needs objective rl and a reference model');
    const refLogprobs = await scoreBatch(options.reference, layout.batch);
    targets = targets.map((t, j) => ({ ...t, refLogprob: Math.min(0, refLogprobs[j]) }));
  }
  const work = allocateStep(model, layout, targets, step.tokenObjective, lambda, klPairs);
  let parts: ArrayBuffer[];
  try {
    parts = await encodeStep(work, update).read();
  } finally {
    work.destroy();
  }
  const out = readStep(work, parts, update);
  // Logprobs of every trained target and of the live prefixes, by rollout and physical id.
  const byRollout = () => rollouts.map(() => new Map<number, number>());
  const logprobs = byRollout();
  layout.batch.targets.forEach((t, j) => logprobs[layout.targetRollout[j]].set(t.id, out.logprobs[j]));
  let live: Map<number, number>[] | 'exact' | null = null;
  if (layout.exact) live = 'exact';
  else if (work.live && out.live) {
    live = byRollout();
    for (const [j, t] of layout.live!.targets.entries()) live[t.sequence].set(t.id, out.live[j]);
  } else if (step.method === 'sdcc' && layout.measuresLive) {
    // The student's own scores, the diverging leaves' from the teacher rows.
    const leaves = logprobs.map((m) => new Map(m));
    work.leafLive?.targets.forEach((j, k) => leaves[layout.targetRollout[j]].set(layout.batch.targets[j].id, out.leaves![k]));
    live = leaves;
  }
  return stepFigures({
    step: update ? update.adamw.step : 0,
    method: step.method,
    objective: step.objective,
    lr: update?.lr ?? 0,
    lambda,
    taskLoss: out.taskLoss,
    meanKl: out.meanKl,
    pairs: klPairs.length,
    divergingLeaves: layout.divergingLeaves,
    targets: targets.length,
    tokens: work.forward.N + (work.teacherForward?.N ?? 0),
    nPacked: layout.nPacked,
    nFinal: layout.nFinal,
    gradNorm: out.gradNorm,
    stepMs: step.planMs + now() - started,
    rollouts,
    logprobs,
    live,
  });
}

/** A step layout's buffers and recorded launches, on the GPU until destroy(). */
function allocateStep(
  model: GpuModel,
  layout: StepLayout,
  targets: readonly ObjectiveTarget[],
  objective: TokenObjective,
  lambda: number,
  klPairs: StepLayout['pairs'],
) {
  const { device } = model.gpu;
  const V = model.config.vocabSize;
  const T = targets.length;
  const owner = createOwner(device, 'Train');
  const { own } = owner;
  // SDCC's packed teacher rides in the student's forward (rows after the student's, no backward).
  const forward = own(
    layout.sdcc
      ? createForward(model, layout.sdcc, { backward: { rows: layout.sdcc.studentRows, end: layout.batch.end } })
      : createForward(model, layout.batch),
  );
  const N = forward.backwardRows;
  const dLogits = owner.buf('dLogits', N * V);
  const outputs = own(createStorage(device, 'Train.outputs', T * TARGET_OUT_BYTES));
  const lossGrad = own(createLossGrad(device, { N, V }, objective, targets, { logits: forward.logits, dLogits, outputs }));

  // The teacher runs the same weights with no backward (stop-gradient): its own forward, or rows of
  // the student's. Its own forward only when its logits are read: by the KL, or for the leaves' live
  // scores (a gated step with no pair and no drift measured runs, and counts, no teacher).
  const measuresLeaves = layout.measuresLive && layout.pairs.length > 0;
  const teacherForward = layout.teacher && (klPairs.length > 0 || measuresLeaves) ? own(createForward(model, layout.teacher, { forwardOnly: true })) : null;
  const teacherLogits = teacherForward ?? forward;
  let kl: { launch: Launch; buffer: GPUBuffer; pairs: number } | null = null;
  // Gated to no pair, the KL is exactly 0 and nothing runs for it (the teacher rows still hold the leaves' live scores).
  if ((layout.teacher || layout.sdcc) && klPairs.length > 0) {
    const buffer = owner.buf('kl', klPairs.length);
    const k = own(
      createKlSdcc(device, { Ns: N, Nt: teacherLogits.N, V }, klPairs, lambda, {
        student: forward.logits,
        teacher: teacherLogits.logits,
        kl: buffer,
        dStudent: dLogits,
      }),
    );
    kl = { launch: k.launch!, buffer, pairs: klPairs.length }; // klPairs is not empty: createKlSdcc made a launch
  }

  // Exact live-prefix scores for the conditioning drift. SDCC's student is the final walk, whose
  // targets see their live prefix except at the diverging leaves, where the teacher rows already hold
  // it: a gather of the leaves' tokens from the teacher's logits, no forward. Otherwise the packed
  // tree of every rollout, forward only.
  let leafLive: { launches: Launch[]; logprobs: GPUBuffer; targets: number[] } | null = null;
  if (measuresLeaves && (layout.teacher || layout.sdcc)) {
    const targetOfRow = new Map(layout.batch.targets.map((t, j) => [t.predictor, j]));
    const leaves = layout.pairs.map((p) => targetOfRow.get(p.studentRow)!);
    const P = leaves.length;
    const rows = owner.upload(
      'leafRows',
      Uint32Array.from(layout.pairs, (p) => p.teacherRow),
    );
    const tokens = owner.upload(
      'leafTokens',
      Uint32Array.from(leaves, (j) => layout.batch.targets[j].token),
    );
    const lse = owner.buf('leafLse', P);
    const logprobs = owner.buf('leafLogprobs', P);
    const launches = createLogsoftmaxGather(device, { R: P, V, M: teacherLogits.N }, { logits: teacherLogits.logits, rows, tokens, lse, logprobs });
    own({ destroy: () => releaseLaunches(launches) });
    leafLive = { launches, logprobs, targets: leaves };
  }
  const live = layout.live ? own(createTargetScoring(model, layout.live, 'Train.live')) : null;
  return { model, T, forward, teacherForward, dLogits, outputs, lossGrad, kl, live, leafLive, destroy: owner.destroy };
}

type StepWork = ReturnType<typeof allocateStep>;

/**
 * Encodes the whole step into one pass of one encoder, stages its outputs and submits: no await
 * between the launches (an awaited submit costs ~0.9 ms in Chromium). Returns the read back.
 */
function encodeStep(work: StepWork, update: Update): { read(): Promise<ArrayBuffer[]> } {
  const { device } = work.model.gpu;
  const encoder = device.createCommandEncoder({ label: 'Train.encoder' });
  const pass = encoder.beginComputePass({ label: 'Train.pass' });
  // Before the update: the live scores belong to the weights the step's own scores come from.
  work.live?.encode(pass);
  work.forward.encode(pass);
  encodeLaunches(pass, [work.lossGrad.launch]);
  // The teacher's logits feed the KL, and hold the leaves' live prefixes whether or not the KL fires
  // (λ = 0); allocateStep made its own forward only when one of them reads it.
  work.teacherForward?.encode(pass);
  if (work.kl) encodeLaunches(pass, [work.kl.launch]);
  if (work.leafLive) encodeLaunches(pass, work.leafLive.launches);
  work.forward.encodeBackward(pass, work.dLogits);
  if (update) encodeAdamwStep(device, pass, update.adamw, update.lr);
  pass.end();
  const readback = stageReadback(device, encoder, [
    { buffer: work.outputs, bytes: work.T * TARGET_OUT_BYTES },
    ...(update ? [{ buffer: update.adamw.status, bytes: ADAMW_STATUS_BYTES }] : []),
    ...(work.kl ? [{ buffer: work.kl.buffer, bytes: work.kl.pairs * 4 }] : []),
    ...(work.live ? [{ buffer: work.live.logprobs, bytes: work.live.R * 4 }] : []),
    ...(work.leafLive ? [{ buffer: work.leafLive.logprobs, bytes: work.leafLive.targets.length * 4 }] : []),
  ]);
  device.queue.submit([encoder.finish()]);
  return readback;
}

/**
 * The read-back parts in encodeStep's order; commits the AdamW step (throws NonFiniteGradientError
 * when it was not applied: the weights are as before the step).
 */
function readStep(work: StepWork, parts: ArrayBuffer[], update: Update) {
  const loss = lossGradOutputsFromBytes(parts.shift()!, work.T);
  const status = update ? commitAdamwStep(update.adamw, adamwStatusFromBytes(parts.shift()!)) : null;
  const kl = klSdccOutputs(work.kl ? new Float32Array(parts.shift()!) : new Float32Array(0));
  return {
    taskLoss: loss.loss,
    /** The method's log-probability of each batch target, in batch order. */
    logprobs: loss.logprobs,
    meanKl: kl.meanKl,
    gradNorm: status?.norm ?? NaN,
    live: work.live ? new Float32Array(parts.shift()!) : null,
    leaves: work.leafLive ? new Float32Array(parts.shift()!) : null,
  };
}
