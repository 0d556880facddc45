// The training run, one engine for `mw train`, `mw experiment` and the browser: one lane per method,
// each its own trainer (weights and AdamW state) started from the same weights and fed the same
// prompts. A step advances every lane that is at the run's step: its batch from the run's source,
// each rollout's tree derived once, the rollouts its method cannot train on left out and counted,
// then one update. A lane whose update failed (a non-finite gradient) retries alone. No DOM, no
// files: callers add persistence (src/run/files.ts for the CLI, IndexedDB in the browser).
// Its parts: lanes.ts (a trainer per method), source.ts (the batches), record.ts (a step's record),
// preflight.ts (the first batch against the model), and the planned step (src/objectives/step.ts).

import { CancelledError } from '../harness/dataset';
import { createEnv } from '../harness/env';
import { createExpertPolicy } from '../harness/policies/expert';
import type { SamplingOptions } from '../harness/policies/model';
import type { Gpu } from '../gpu/runtime/device';
import { NonFiniteGradientError } from '../gpu/kernels/adamw/adamw';
import { createGpuModelPolicy } from '../gpu/generate';
import type { GpuModel } from '../gpu/model';
import type { StepMetrics } from '../gpu/train';
import type { Evaluation } from '../metrics/drift-report';
import type { LrSchedule } from '../objectives/adamw';
import { planStep, type StepOptions } from '../objectives/step';
import type { CheckpointPairBytes } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import { fitRollouts } from '../plan/needs';
import { SEQUENCE_METHODS, type Method } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import { createLanes, laneOf, runStepOf, type Lane, type LaneState } from './lanes';
import { playBatch, type EpisodeWatch, type Player, type TokenRelay } from './play';
import { checkFirstBatch } from './preflight';
import { metricRecord, summarizeReasons } from './record';
import { createBatchSource, drawBatch, playedBatch, type RolloutSource } from './source';
import { heldOutSeed } from './seeds';

export type { Lane, LaneState } from './lanes';
export { RunRefusedError } from './preflight';
export type { MetricRecord } from './record';
export type { RolloutSource } from './source';

/** The step options (src/objectives/step.ts) every lane's update takes, and where the run's rollouts come from. */
export interface RunSpec extends Pick<StepOptions, 'objective' | 'lambda' | 'sdccTeacher' | 'sdccGate' | 'conditioningDrift'> {
  /** The lanes, in this order: one trainer per method. */
  methods: readonly Method[];
  schedule: LrSchedule;
  source: RolloutSource;
  /** Every `every` steps each lane's model plays `prompts` held-out prompts greedily (played sources only). */
  evaluation?: { every: number; prompts: number };
  /** A step with nothing to train on fails the lane (default), or is skipped: counted, no update. */
  nothingToTrain?: 'fail' | 'skip';
}

/**
 * A lane's step failed: `non-finite`, the update was refused (weights, moments and step unchanged);
 * `untrainable`, no rollout of the batch can be trained on; `failed`, anything else.
 */
export class StepFailedError extends Error {
  override readonly name = 'StepFailedError';
  constructor(
    readonly method: Method,
    readonly kind: 'non-finite' | 'untrainable' | 'failed',
    /** The reason without the method. */
    readonly reason: string,
  ) {
    super(`${method}: ${reason}`);
  }
  get nonFinite(): boolean {
    return this.kind === 'non-finite';
  }
}

/** One lane's step (the engine's stepLane). */
export type LaneStep = Awaited<ReturnType<RunEngine['next']>>[number];

export type LaneCheckpoint = { method: Method; step: number } & CheckpointPairBytes;

export interface RunOptions {
  /** Starting weights of every lane (fresh or a loaded checkpoint). */
  weights: ModelWeights;
  /** Lanes resumed from a checkpoint: their weights and AdamW state. */
  resume?: Partial<Record<Method, LaneState>>;
  /** How a lane's model plays (default modelPlayer: its GPU decoder, streaming its tokens). */
  player?: typeof modelPlayer;
}

export interface StepHooks {
  /** Per lane, before it plays or trains, and before it is evaluated. */
  lane?(method: Method, phase?: 'train' | 'eval'): void;
  watch?: EpisodeWatch;
}

export type RunEngine = ReturnType<typeof createRunEngine>;

export const GREEDY: SamplingOptions = { temperature: 0 };

/**
 * The on-policy player: a lane's own model decoding with its KV cache (src/gpu/generate.ts), as it
 * is at that step (the decoder reads the trainer's weight buffer, which AdamW updates in place),
 * sampling as `sampling` says (RL: temperature 1 over the full vocabulary, so the recorded logprobs
 * are the sampling distribution's, as the PPO ratio needs; evaluations greedily). Each token fed back
 * goes to the relay with the logprob the policy records for it, so a page can watch an action being
 * written; without a sink the numbers are those of the plain model policy.
 */
export function modelPlayer(model: GpuModel, sampling: SamplingOptions): Player {
  const relay: TokenRelay = { sink: null };
  const policy = createGpuModelPolicy(model, { ...sampling, reuse: 'prefix', onToken: (token, logprob) => relay.sink?.(token, logprob) });
  return { policy, relay };
}

export function createRunEngine(gpu: Gpu, spec: RunSpec, options: RunOptions) {
  const model = options.weights.config;
  const P = model.nPositions;
  const { source } = spec;
  const player = options.player ?? modelPlayer;
  const lanes = createLanes(gpu, spec.methods, options.weights, spec.schedule, options.resume);
  const batches = createBatchSource(source, P);
  const sampling = source.kind === 'played' ? (source.sampling ?? {}) : {};

  /**
   * One lane's step: its batch, the rollouts the update trained on and those left out (with why),
   * the trainer's figures and the record of them (null when the step was skipped), and the time
   * spent playing its batch (0 when it reused a batch played already).
   */
  const stepLane = async (l: Lane, step: number, hooks: StepHooks) => {
    const { batch, genMs } = await drawBatch(batches, step, () => player(l.trainer.model, sampling), hooks.watch);
    l.last = batch;
    // The model's own episodes can outgrow its positions (a view over the context limit before an
    // edit shortens it), and a method may score nothing of a rollout: such rollouts are left out.
    // Each rollout's plan is built once: for this check, and reused by the step's layout.
    const fitted = fitRollouts(batch, source.kind === 'played' && source.fit ? source.fit : [l.method], P, { sdccTeacher: spec.sdccTeacher });
    const { trained, leftOut } = fitted;
    const base = { method: l.method, batch, trained, leftOut, genMs };
    if (trained.length === 0) {
      const why = `none of the ${batch.rollouts.length} rollouts of step ${step + 1} can be trained on (${summarizeReasons(leftOut)})`;
      if (spec.nothingToTrain !== 'skip') throw new StepFailedError(l.method, 'untrainable', why);
      l.step++;
      return { ...base, metrics: null, record: null, skipped: why };
    }
    let metrics: StepMetrics;
    try {
      metrics = await l.trainer.trainStep(planStep(fitted, { ...spec, method: l.method }));
    } catch (error) {
      throw new StepFailedError(l.method, error instanceof NonFiniteGradientError ? 'non-finite' : 'failed', (error as Error).message);
    }
    l.step++;
    return { ...base, metrics, record: metricRecord(metrics, batch, genMs, leftOut.length, batches.expert !== null), skipped: null };
  };

  /** `method`'s model playing `prompts` held-out prompts greedily (the run's played source). */
  const evaluate = async (method: Method, prompts: number, hooks: StepHooks = {}) => {
    if (source.kind !== 'played') throw new Error('evaluate: a run from a file has no environment to play');
    const l = laneOf(lanes, method);
    hooks.lane?.(method, 'eval');
    const seed = heldOutSeed(source.play.seed);
    // Not cancelled: an evaluation belongs to the step whose record it completes.
    const watch = { ...hooks.watch, cancelled: undefined };
    const batch = await playBatch(source.play, l.step, player(l.trainer.model, GREEDY), { nPositions: P, watch, seed, prompts, group: 1 });
    return { seed, rollouts: batch.rollouts.length, reward: batch.reward, em: batch.em };
  };

  return {
    spec,
    model,
    lanes,
    /** Completed steps: the smallest over the lanes. */
    get step() {
      return runStepOf(lanes);
    },

    /** Checks the first batch of every method against the model and the adapter; throws RunRefusedError. */
    async preflight() {
      // The run's first batch stands for the data. A model's episodes are bounded by the same
      // context as the expert's, whose demonstrations of the same prompts stand for them.
      const step = runStepOf(lanes);
      const batch =
        source.kind === 'played' && source.player === 'model'
          ? playedBatch(await playBatch(source.play, step, { policy: createExpertPolicy(createEnv(source.play.env)) }, { nPositions: P }))
          : (await drawBatch(batches, step, () => player(lanes[0].trainer.model, sampling))).batch;
      checkFirstBatch(
        batch,
        lanes.map((l) => l.method),
        model,
        gpu.device,
        { sdccTeacher: spec.sdccTeacher },
      );
    },

    /**
     * One step of every lane at the run's step, in lane order. Cancelled (the watch says so) after
     * some lanes stepped, it returns theirs; cancelled before any, it throws CancelledError.
     */
    async next(hooks: StepHooks = {}) {
      const step = runStepOf(lanes);
      const out: Awaited<ReturnType<typeof stepLane>>[] = [];
      for (const l of lanes) {
        if (l.step !== step) continue;
        hooks.lane?.(l.method);
        try {
          out.push(await stepLane(l, step, hooks));
        } catch (error) {
          // Stopped between episodes: the lanes that stepped keep their records; the rest step next time.
          if (error instanceof CancelledError && out.length) return out;
          throw error;
        }
      }
      const every = spec.evaluation?.every ?? 0;
      for (const s of out) {
        if (!s.record || every <= 0 || s.record.step % every !== 0) continue;
        const heldOut = await evaluate(s.method, spec.evaluation!.prompts, hooks);
        s.record.evalReward = heldOut.reward;
        s.record.evalEm = heldOut.em;
      }
      return out;
    },

    evaluate,

    async checkpoint(metadata: Record<string, string> = {}) {
      const out: LaneCheckpoint[] = [];
      for (const l of lanes) {
        const bytes = await l.trainer.checkpoint({ ...metadata, method: l.method });
        out.push({ method: l.method, step: l.trainer.step, ...bytes });
      }
      return out;
    },

    /** Every sequence method's log-probability of every target of `rollout`, under `method`'s weights. */
    async score(method: Method, rollout: Rollout): Promise<Evaluation> {
      const tree = deriveTree(rollout);
      // naive-full runs on the whole tape: leave it out when the tape is longer than the model's positions.
      const fits = SEQUENCE_METHODS.filter((m) => m !== 'naive-full' || tree.figures.physicalLength <= P);
      return laneOf(lanes, method).trainer.evaluate([rollout], fits);
    },

    destroy() {
      lanes.forEach((l) => l.trainer.destroy());
    },
  };
}

/** A step is checkpointed every `every` steps of the run (counted from its start, resumed steps included) and at its last step. */
export function checkpointDue(step: number, every: number, last: boolean): boolean {
  return last || (every > 0 && step % every === 0);
}
