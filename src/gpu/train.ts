// Training on the GPU: one step = plans of a batch of rollouts (docs/methods.md) → forward → objective
// (SFT / PPO-clipped RL, plus SDCC's leaf-gated KL, docs/objectives.md) → backward → AdamW, in one command
// encoder with one read back. Also evaluate(): every method's log-probability of every target.

import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import { buildPlan, sdccUnion, type SdccUnion } from '../plan/build';
import { packBatch, packSdccBatch, type PackedBatch, type SdccBatch } from '../plan/batch';
import type { Method, PlanSequence, SequenceMethod } from '../plan/types';
import { grpoAdvantages } from '../objectives/grpo';
import type { ObjectiveTarget, TokenObjective } from '../objectives/tokens';
import { DEFAULT_ADAMW, lrAt, type AdamwHyper, type LrSchedule } from '../objectives/adamw';
import type { SdccPair } from '../objectives/sdcc';
import { saveCheckpoint, saveOptimizerState, type OptimizerState } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import { signedDifferences, summarizeDrift } from '../metrics/drift';
import type { Gpu } from './device';
import { createStorage, stageReadback, uploadStorage } from './buffers';
import { encodeLaunches, releaseLaunches, type Launch } from './kernel';
import { createLogsoftmaxGather } from './logsoftmax';
import { createGpuModel, createForward, type ForwardPass, type GpuModel } from './model';
import { createLossGrad, lossGradOutputsFromBytes, TARGET_OUT_BYTES } from './loss_grad';
import { createKlSdcc, klSdccOutputs } from './kl_sdcc';
import { adamwStatusFromBytes, ADAMW_STATUS_BYTES, commitAdamwStep, createAdamw, encodeAdamwStep, readAdamwState, writeAdamwState, type Adamw } from './adamw';
import { createTargetScoring, scoreBatch, scoreRollouts, scoreSequences, type TargetScoring } from './score';
import { logprobsOf } from '../metrics/drift-report';

export type Objective = 'sft' | 'rl';

export interface StepOptions {
  method: Method;
  objective: Objective;
  /** SDCC's KL weight λ (docs/methods.md); λ = 0 is naive-compressed. */
  lambda?: number;
  /** SDCC's teacher layout. */
  sdccTeacher?: 'logit-tree' | 'packed-4d';
  /** PPO clip ε. */
  epsilon?: number;
  /**
   * RL only: weight of the KL to a frozen reference model (k3 estimator, docs/objectives.md), which scores the
   * same plan first (one extra forward and read back).
   */
  klCoef?: number;
  reference?: GpuModel;
  /**
   * Also score every target under its exact live prefix (a packed-4d forward, no backward) for the
   * conditioning drift; free for the exact methods, one extra forward for the others.
   */
  conditioningDrift?: boolean;
}

export interface StepMetrics {
  step: number;
  method: Method;
  objective: Objective;
  lr: number;
  /** Task loss + λ·KL (SDCC), as optimised. */
  loss: number;
  taskLoss: number;
  /** Mean forward KL at diverging leaves; 0 (and no teacher pass) when the batch has none. */
  klSdcc: number;
  klFired: boolean;
  divergingLeaves: number;
  /** Targets scored by the method (the loss's denominator). */
  targets: number;
  /** Rows the step ran through the model (student + teacher for SDCC). */
  tokens: number;
  nPacked: number;
  nFinal: number;
  /** Against the rollout's logprobs, over targets that have one. */
  logdiff: number | null;
  mu: number | null;
  /** Against the exact live-prefix score (when measured). */
  conditioningDrift: number | null;
  conditioningMu: number | null;
  gradNorm: number;
  stepMs: number;
  /** The method's log-probability of each scored target, by physical id, per rollout. */
  logprobs: Map<number, number>[];
}

/** A step's figures without the per-target log-probabilities (what records and logs keep). */
export type StepFigures = Omit<StepMetrics, 'logprobs'>;

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
  trainStep(rollouts: readonly Rollout[], options: StepOptions): Promise<StepMetrics>;
  evaluate(rollouts: readonly Rollout[], methods?: readonly SequenceMethod[]): Promise<Evaluation>;
  /** GPT-2 checkpoint bytes and the optimizer state file beside it. */
  checkpoint(metadata?: Record<string, string>): Promise<{ weights: Uint8Array; optimizer: Uint8Array }>;
  readWeights(): Promise<ModelWeights>;
  destroy(): void;
}

export function createTrainer(gpu: Gpu, weights: ModelWeights, options: TrainerOptions): Trainer {
  const model = createGpuModel(gpu, weights);
  const adamw = createAdamw(gpu.device, { layout: model.layout, weights: model.weights, grads: model.grads, hyper: options.hyper ?? DEFAULT_ADAMW });
  if (options.optimizerState) writeAdamwState(gpu.device, adamw, options.optimizerState);
  const trainer: Trainer = {
    gpu,
    model,
    adamw,
    schedule: options.schedule,
    get step() {
      return adamw.step;
    },
    trainStep: (rollouts, stepOptions) => trainStep(trainer, rollouts, stepOptions),
    evaluate: (rollouts, methods) => evaluate(model, rollouts, methods),
    async checkpoint(metadata = {}) {
      const w = await model.readWeights();
      const state = await readAdamwState(gpu.device, adamw);
      return { weights: saveCheckpoint(w, { ...metadata, step: String(state.step) }), optimizer: saveOptimizerState(model.config, state) };
    },
    readWeights: () => model.readWeights(),
    destroy() {
      adamw.destroy();
      model.destroy();
    },
  };
  return trainer;
}

/** What one step feeds the model: the trained batch, its targets and (SDCC) the teacher batch and pairs. */
export interface StepBatch {
  batch: PackedBatch;
  /** Rollout of each batch target. */
  targetRollout: number[];
  objectiveTargets: ObjectiveTarget[];
  /** SDCC with the branch-teachers layout: the teachers' own batch, forward only. */
  teacher: PackedBatch | null;
  /**
   * SDCC with the default (packed) teacher: the student batch followed by the teacher rows it does
   * not share, one grouped forward whose backward covers only the student's rows.
   */
  sdcc: SdccBatch | null;
  pairs: SdccPair[];
  nPacked: number;
  nFinal: number;
  divergingLeaves: number;
}

/** Plans of every rollout under `method`, packed; targets weighted 1/T, advantages group-relative for RL. */
export function assembleStep(trees: readonly ConditioningTree[], rollouts: readonly Rollout[], options: StepOptions): StepBatch {
  const sequences: PlanSequence[] = [];
  const sequenceRollout: number[] = [];
  const teachers: PlanSequence[] = [];
  const unions: (SdccUnion | null)[] = [];
  const packedTeacher = options.sdccTeacher !== 'logit-tree';
  const pairsById: { rollout: number; id: number; teacher: number }[] = [];
  let nPacked = 0;
  let nFinal = 0;
  let divergingLeaves = 0;
  trees.forEach((tree, r) => {
    nPacked += tree.figures.packedLength;
    nFinal += tree.figures.finalWalkLength;
    divergingLeaves += tree.figures.divergingLeaves;
    if (options.method === 'sdcc') {
      const plan = buildPlan(tree, 'sdcc', { sdccTeacher: options.sdccTeacher });
      sequences.push(plan.student);
      sequenceRollout.push(r);
      if (packedTeacher) {
        unions.push(sdccUnion(tree));
        for (const p of plan.pairs) pairsById.push({ rollout: r, id: p.id, teacher: sequences.length - 1 });
      } else {
        const base = teachers.length;
        teachers.push(...plan.teachers);
        for (const p of plan.pairs) pairsById.push({ rollout: r, id: p.id, teacher: base + p.teacher });
      }
    } else {
      for (const s of buildPlan(tree, options.method).sequences) {
        sequences.push(s);
        sequenceRollout.push(r);
      }
    }
  });
  const batch = packBatch(sequences);
  const targetRollout = batch.targets.map((t) => sequenceRollout[t.sequence]);
  const T = batch.targets.length;
  const advantages =
    options.objective === 'rl'
      ? grpoAdvantages(rollouts.map((r) => r.reward ?? 0), rollouts.map((r) => r.group ?? null))
      : null;
  const objectiveTargets: ObjectiveTarget[] = batch.targets.map((t, j) => {
    const target: ObjectiveTarget = { row: t.predictor, token: t.token, weight: 1 / T };
    if (advantages) {
      const r = targetRollout[j];
      if (t.rolloutLogprob === undefined || !Number.isFinite(t.rolloutLogprob)) {
        throw new Error(`RL needs rollout logprobs: rollout ${rollouts[r].id}, target ${t.id} has none`);
      }
      target.rolloutLogprob = t.rolloutLogprob;
      target.advantage = advantages[r];
    }
    return target;
  });
  let teacher: PackedBatch | null = null;
  let sdcc: SdccBatch | null = null;
  const pairs: SdccPair[] = [];
  if (options.method === 'sdcc' && pairsById.length > 0) {
    // Rows that predict each diverging leaf: in the student batch and in its teacher sequence.
    const studentRow = new Map<string, number>();
    batch.targets.forEach((t) => studentRow.set(`${sequenceRollout[t.sequence]}:${t.id}`, t.predictor));
    const teacherRow = new Map<string, number>();
    if (packedTeacher) {
      sdcc = packSdccBatch(batch, unions);
      sdcc.teacherTargets.forEach((t) => teacherRow.set(`${t.sequence}:${t.id}`, t.predictor));
    } else {
      teacher = packBatch(teachers);
      teacher.targets.forEach((t) => teacherRow.set(`${t.sequence}:${t.id}`, t.predictor));
    }
    for (const p of pairsById) {
      const s = studentRow.get(`${p.rollout}:${p.id}`);
      const q = teacherRow.get(`${p.teacher}:${p.id}`);
      if (s === undefined || q === undefined) throw new Error(`sdcc: diverging leaf ${p.id} of rollout ${rollouts[p.rollout].id} has no student or teacher row`);
      pairs.push({ studentRow: s, teacherRow: q });
    }
  }
  return { batch, targetRollout, objectiveTargets, teacher, sdcc, pairs, nPacked, nFinal, divergingLeaves };
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

async function trainStep(trainer: Trainer, rollouts: readonly Rollout[], options: StepOptions): Promise<StepMetrics> {
  const lr = lrAt(trainer.adamw.step, trainer.schedule);
  return runStep(trainer.model, rollouts, options, { adamw: trainer.adamw, lr });
}

/**
 * The loss and the parameter gradients (left in model.grads) of one batch, without an update:
 * what `mw verify` and the gradient tests compare against the CPU reference.
 */
export async function computeGradients(model: GpuModel, rollouts: readonly Rollout[], options: StepOptions): Promise<StepMetrics> {
  return runStep(model, rollouts, options, null);
}

async function runStep(model: GpuModel, rollouts: readonly Rollout[], options: StepOptions, update: { adamw: Adamw; lr: number } | null): Promise<StepMetrics> {
  const started = now();
  const { gpu } = model;
  const { device } = gpu;
  const V = model.config.vocabSize;
  if (rollouts.length === 0) throw new Error('trainStep: an empty batch');
  const trees = rollouts.map(deriveTree);
  const step = assembleStep(trees, rollouts, options);
  const T = step.objectiveTargets.length;
  if (T === 0) throw new Error(`trainStep: ${options.method} scores no target in this batch (every target dropped?)`);
  const lambda = options.method === 'sdcc' ? (options.lambda ?? 0.1) : 0;
  const klCoef = options.klCoef ?? 0;
  if (klCoef !== 0 && (options.objective !== 'rl' || !options.reference)) {
    throw new Error('trainStep: a KL to a reference (klCoef) needs objective rl and a reference model');
  }
  const objective: TokenObjective = options.objective === 'rl' ? { kind: 'ppo', epsilon: options.epsilon, klCoef } : { kind: 'sft' };
  if (klCoef !== 0) {
    const refLogprobs = await scoreBatch(options.reference!, step.batch);
    step.objectiveTargets.forEach((t, j) => (t.refLogprob = Math.min(0, refLogprobs[j])));
  }
  const exact = options.method === 'logit-tree' || options.method === 'packed-4d';
  const measureLive = (options.conditioningDrift ?? true) && !exact;

  const disposables: { destroy(): void }[] = [];
  // SDCC's packed teacher rides in the student's forward (rows after the student's, no backward).
  const forward = step.sdcc
    ? createForward(model, step.sdcc, { backward: { rows: step.sdcc.studentRows, end: step.batch.end } })
    : createForward(model, step.batch);
  disposables.push(forward);
  const N = forward.backwardRows;
  const dLogits = createStorage(device, 'Train.dLogits', N * V * 4);
  const outputs = createStorage(device, 'Train.outputs', T * TARGET_OUT_BYTES);
  disposables.push(dLogits, outputs);
  const lossGrad = createLossGrad(device, { N, V }, objective, step.objectiveTargets, { logits: forward.logits, dLogits, outputs });
  disposables.push(lossGrad);

  let teacherForward: ForwardPass | null = null;
  let kl: ReturnType<typeof createKlSdcc> | null = null;
  let klBuffer: GPUBuffer | null = null;
  if (step.teacher || step.sdcc) {
    // The teacher runs the same weights with no backward (stop-gradient): its own forward, or rows
    // of the student's.
    if (step.teacher) {
      teacherForward = createForward(model, step.teacher);
      disposables.push(teacherForward);
    }
    const teacherLogits = teacherForward ?? forward;
    klBuffer = createStorage(device, 'Train.kl', step.pairs.length * 4);
    kl = createKlSdcc(device, { Ns: N, Nt: teacherLogits.N, V }, step.pairs, lambda, {
      student: forward.logits,
      teacher: teacherLogits.logits,
      kl: klBuffer,
      dStudent: dLogits,
    });
    disposables.push(klBuffer, kl);
  }

  // Exact live-prefix scores for the conditioning drift. SDCC's student is the final walk, whose
  // targets see their live prefix except at the diverging leaves, where the teacher rows already hold
  // it: a gather of the leaves' tokens from the teacher's logits, no forward. Otherwise the packed
  // tree of every rollout, forward only.
  let live: { scoring: TargetScoring; ids: { rollout: number; id: number }[] } | null = null;
  let leafLive: { launches: Launch[]; logprobs: GPUBuffer; targets: number[] } | null = null;
  if (measureLive && options.method === 'sdcc') {
    if (step.pairs.length) {
      const targetOfRow = new Map(step.batch.targets.map((t, j) => [t.predictor, j]));
      const targets = step.pairs.map((p) => targetOfRow.get(p.studentRow)!);
      const P = targets.length;
      const rows = uploadStorage(device, 'Train.leafRows', Uint32Array.from(step.pairs, (p) => p.teacherRow));
      const tokens = uploadStorage(device, 'Train.leafTokens', Uint32Array.from(targets, (j) => step.batch.targets[j].token));
      const lse = createStorage(device, 'Train.leafLse', P * 4);
      const logprobs = createStorage(device, 'Train.leafLogprobs', P * 4);
      const teacherLogits = teacherForward ?? forward;
      const launches = createLogsoftmaxGather(device, { R: P, V, M: teacherLogits.N }, { logits: teacherLogits.logits, rows, tokens, lse, logprobs });
      leafLive = { launches, logprobs, targets };
      disposables.push(rows, tokens, lse, logprobs, { destroy: () => releaseLaunches(launches) });
    }
  } else if (measureLive) {
    const batch = packBatch(trees.map((tree) => buildPlan(tree, 'packed-4d').sequences[0]));
    if (batch.targets.length) {
      const scoring = createTargetScoring(model, batch, 'Train.live');
      live = { scoring, ids: batch.targets.map((t) => ({ rollout: t.sequence, id: t.id })) };
      disposables.push(scoring);
    }
  }

  const encoder = device.createCommandEncoder({ label: 'Train.encoder' });
  const pass = encoder.beginComputePass({ label: 'Train.pass' });
  if (live) {
    // Before the update: the live scores belong to the weights the step's own scores come from.
    live.scoring.encode(pass);
  }
  forward.encode(pass);
  encodeLaunches(pass, [lossGrad.launch]);
  if (kl?.launch) {
    teacherForward?.encode(pass);
    encodeLaunches(pass, [kl.launch]);
  }
  if (leafLive) {
    // The teacher's logits hold the leaves' live prefixes whether or not the KL fires (λ = 0).
    if (!kl?.launch) teacherForward?.encode(pass);
    encodeLaunches(pass, leafLive.launches);
  }
  forward.encodeBackward(pass, dLogits);
  if (update) encodeAdamwStep(device, pass, update.adamw, update.lr);
  pass.end();
  const readback = stageReadback(device, encoder, [
    { buffer: outputs, bytes: T * TARGET_OUT_BYTES },
    ...(update ? [{ buffer: update.adamw.status, bytes: ADAMW_STATUS_BYTES }] : []),
    ...(klBuffer ? [{ buffer: klBuffer, bytes: step.pairs.length * 4 }] : []),
    ...(live ? [{ buffer: live.scoring.logprobs, bytes: live.ids.length * 4 }] : []),
    ...(leafLive ? [{ buffer: leafLive.logprobs, bytes: leafLive.targets.length * 4 }] : []),
  ]);
  device.queue.submit([encoder.finish()]);
  let parts: ArrayBuffer[];
  try {
    parts = await readback.read();
  } finally {
    disposables.forEach((d) => d.destroy());
  }
  const outBytes = parts.shift()!;
  // Throws NonFiniteGradientError when the update was not applied (weights as before the step).
  const status = update ? commitAdamwStep(update.adamw, adamwStatusFromBytes(parts.shift()!)) : null;
  const rest = parts;
  const lossOut = lossGradOutputsFromBytes(outBytes, T);
  const klOut = klBuffer ? klSdccOutputs(new Float32Array(rest.shift()!)) : klSdccOutputs(new Float32Array(0));
  const taskLoss = lossOut.loss;
  const loss = taskLoss + lambda * klOut.meanKl;
  if (!Number.isFinite(loss)) throw new Error(`trainStep: the loss is ${loss}`);

  const logprobs = rollouts.map(() => new Map<number, number>());
  step.batch.targets.forEach((t, j) => logprobs[step.targetRollout[j]].set(t.id, lossOut.logprobs[j]));
  const rolloutRef = rollouts.map((r) => {
    const m = new Map<number, number>();
    for (const id of r.targets) if (Number.isFinite(r.logprobs[id])) m.set(id, r.logprobs[id]);
    return m;
  });
  const diffAll = (ref: Map<number, number>[]) => Float64Array.from(logprobs.flatMap((m, r) => Array.from(signedDifferences(m, ref[r]))));
  const rolloutDrift = summarizeDrift(diffAll(rolloutRef));
  let liveDrift: ReturnType<typeof summarizeDrift> | null = null;
  if (exact) liveDrift = summarizeDrift([]);
  if (live) {
    const lp = new Float32Array(rest.shift()!);
    const liveRef = rollouts.map(() => new Map<number, number>());
    live.ids.forEach((t, j) => liveRef[t.rollout].set(t.id, lp[j]));
    liveDrift = summarizeDrift(diffAll(liveRef));
  } else if (measureLive && options.method === 'sdcc') {
    // The student's own scores, the diverging leaves' from the teacher rows.
    const liveRef = logprobs.map((m) => new Map(m));
    if (leafLive) {
      const lp = new Float32Array(rest.shift()!);
      leafLive.targets.forEach((j, k) => liveRef[step.targetRollout[j]].set(step.batch.targets[j].id, lp[k]));
    }
    liveDrift = summarizeDrift(diffAll(liveRef));
  }
  return {
    step: update ? update.adamw.step : 0,
    method: options.method,
    objective: options.objective,
    lr: update?.lr ?? 0,
    loss,
    taskLoss,
    klSdcc: klOut.meanKl,
    klFired: step.pairs.length > 0 && lambda > 0,
    divergingLeaves: step.divergingLeaves,
    targets: T,
    tokens: forward.N + (teacherForward?.N ?? 0),
    nPacked: step.nPacked,
    nFinal: step.nFinal,
    logdiff: rolloutDrift.n ? rolloutDrift.logdiff : null,
    mu: rolloutDrift.n ? rolloutDrift.mu : null,
    conditioningDrift: liveDrift ? liveDrift.logdiff : null,
    conditioningMu: liveDrift ? liveDrift.mu : null,
    gradNorm: status?.norm ?? NaN,
    stepMs: now() - started,
    logprobs,
  };
}

/** Per method, every scored target's log-probability (by rollout, by physical id). */
export type Evaluation = Record<SequenceMethod, Map<number, number>[]>;

export async function evaluate(
  model: GpuModel,
  rollouts: readonly Rollout[],
  methods: readonly SequenceMethod[] = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'],
): Promise<Evaluation> {
  return logprobsOf(await scoreRollouts(model, rollouts, methods));
}

