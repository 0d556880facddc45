// The training run, one engine for `mw train`, `mw experiment` and the browser: one lane per method,
// each its own trainer (weights and AdamW state) started from the same weights and fed the same
// prompts. A step advances every lane that is at the run's step: its batch from the run's source,
// each rollout's tree derived once, the rollouts its method cannot train on left out and counted,
// then one update. A lane whose update failed (a non-finite gradient) retries alone. No DOM, no
// files: callers add persistence (src/run/files.ts for the CLI, IndexedDB in the browser).

import { CancelledError } from '../harness/dataset';
import { createEnv } from '../harness/env';
import { createExpertPolicy } from '../harness/policies/expert';
import type { SamplingOptions } from '../harness/policies/model';
import type { Gpu } from '../gpu/runtime/device';
import { NonFiniteGradientError } from '../gpu/kernels/adamw/adamw';
import { createGpuModelPolicy } from '../gpu/generate';
import { checkModelFits, type GpuModel } from '../gpu/model';
import { createTrainer, type StepFigures, type StepMetrics, type Trainer } from '../gpu/train';
import type { Evaluation } from '../metrics/drift-report';
import { stepFiguresOf } from '../metrics/step';
import type { LrSchedule } from '../objectives/adamw';
import { planStep, type StepOptions } from '../objectives/step';
import type { CheckpointPairBytes } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import { fitRollouts, methodNeeds } from '../plan/needs';
import { SEQUENCE_METHODS, type Method } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import { playBatch, type EpisodeWatch, type PlaySpec, type PlayedBatch, type Player, type TokenRelay } from './play';
import { batchIndices, heldOutSeed, type Order } from './seeds';

/** Where a run's rollouts come from. */
export type RolloutSource =
  /** A file's rollouts and their trees, B per step through seeded epochs (batchIndices). */
  | { kind: 'file'; rollouts: readonly Rollout[]; trees: readonly ConditioningTree[]; batch: number; order: Order; seed: number }
  /**
   * Episodes played before each step: by the scripted expert (one batch per step, shared by every
   * lane) or by each lane's model as it is then (on-policy, sampled as `sampling` says). `fit`: the
   * methods every trained rollout must fit (default the lane's own); `first`: step 0's batch, played already.
   */
  | { kind: 'played'; play: PlaySpec; player: 'expert' | 'model'; sampling?: SamplingOptions; fit?: readonly Method[]; first?: PlayedBatch };

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

/** One method's figures after one step (docs/metrics.md), as stored, charted and exported: the trainer's, and the batch's. */
export type MetricRecord = StepFigures & {
  /** Mean edits per rollout of the batch. */
  K: number;
  reward: number;
  em: number;
  /** Greedy play on the held-out prompts after this step (every `evaluation.every` steps), else null. */
  evalReward: number | null;
  evalEm: number | null;
  /** Rollouts left out of the step: their method's plan does not fit the model's positions, or scores nothing. */
  skipped: number;
  /** Playing the episodes of the batch (RL: the model decoding). */
  genMs: number;
  /** Wall-clock time of the record's creation (ms since the epoch). */
  time: number;
};

export class RunRefusedError extends Error {
  override readonly name = 'RunRefusedError';
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

/** What one lane trained on at one step: rollouts, their trees, and a played source's episodes (JSON, figures; null for a file). */
export type StepBatch = Pick<PlayedBatch, 'rollouts' | 'trees'> & { played: PlayedBatch | null };

export interface Lane {
  method: Method;
  trainer: Trainer;
  /** Steps taken: updates applied, and (nothingToTrain 'skip') steps skipped. */
  step: number;
  /** The batch of this lane's last step, for inspection. */
  last: StepBatch | null;
}

/** One lane's step (the engine's stepLane). */
export type LaneStep = Awaited<ReturnType<RunEngine['next']>>[number];

/** A lane's weights and AdamW state as data (what its checkpoint holds). */
export type LaneState = Awaited<ReturnType<Trainer['readState']>>;

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
  const lanes: Lane[] = [];
  try {
    for (const method of spec.methods) {
      const resumed = options.resume?.[method];
      const trainer = createTrainer(gpu, resumed?.weights ?? options.weights, { schedule: spec.schedule, optimizerState: resumed?.optimizer });
      lanes.push({ method, trainer, step: trainer.step, last: null });
    }
  } catch (error) {
    lanes.forEach((l) => l.trainer.destroy());
    throw error;
  }
  const stepOf = () => Math.min(...lanes.map((l) => l.step));
  const lane = (method: Method) => {
    const found = lanes.find((l) => l.method === method);
    if (!found) throw new Error(`no lane trains ${method}`);
    return found;
  };
  const expert = source.kind === 'played' && source.player === 'expert' ? { policy: createExpertPolicy(createEnv(source.play.env)) } : null;
  /** The expert's batch of the step being played (every lane trains on it). */
  let shared: { step: number; batch: PlayedBatch } | null = source.kind === 'played' && source.first ? { step: 0, batch: source.first } : null;

  /** The batch `target` trains on at `step`, and the time spent playing it (0: reused). */
  const draw = async (target: Lane | null, step: number, watch?: EpisodeWatch): Promise<{ batch: StepBatch; genMs: number }> => {
    if (source.kind === 'file') {
      const indices = batchIndices(source.rollouts.length, source.batch, step, source.order, source.seed);
      return { batch: { rollouts: indices.map((i) => source.rollouts[i]), trees: indices.map((i) => source.trees[i]), played: null }, genMs: 0 };
    }
    const shares = expert || (step === 0 && source.first);
    if (shares && shared?.step === step) return { batch: played(shared.batch), genMs: 0 };
    const who = expert ?? player((target ?? lanes[0]).trainer.model, source.sampling ?? {});
    const batch = await playBatch(source.play, step, who, { nPositions: P, watch });
    if (shares) shared = { step, batch };
    return { batch: played(batch), genMs: batch.genMs };
  };
  const played = (batch: PlayedBatch): StepBatch => ({ rollouts: batch.rollouts, trees: batch.trees, played: batch });

  const record = (m: StepMetrics, batch: StepBatch, genMs: number, skipped: number): MetricRecord => ({
    ...stepFiguresOf(m),
    // Demonstrations carry logprob 0 (the expert is certain): a gap to them is not drift.
    ...(expert ? { logdiff: null, mu: null, rollout_corr: null } : {}),
    K: batch.trees.reduce((s, t) => s + t.K, 0) / batch.trees.length,
    reward: batch.played?.reward ?? 0,
    em: batch.played?.em ?? 0,
    evalReward: null,
    evalEm: null,
    skipped,
    genMs,
    time: Date.now(),
  });

  /**
   * One lane's step: its batch, the rollouts the update trained on and those left out (with why),
   * the trainer's figures and the record of them (null when the step was skipped), and the time
   * spent playing its batch (0 when it reused a batch played already).
   */
  const stepLane = async (l: Lane, step: number, hooks: StepHooks) => {
    const { batch, genMs } = await draw(l, step, hooks.watch);
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
    return { ...base, metrics, record: record(metrics, batch, genMs, leftOut.length), skipped: null };
  };

  /** `method`'s model playing `prompts` held-out prompts greedily (the run's played source). */
  const evaluate = async (method: Method, prompts: number, hooks: StepHooks = {}) => {
    if (source.kind !== 'played') throw new Error('evaluate: a run from a file has no environment to play');
    const l = lane(method);
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
      return stepOf();
    },

    /** Checks the first batch of every method against the model and the adapter; throws RunRefusedError. */
    async preflight() {
      // The run's first batch stands for the data: every method's plan must fit the model's
      // positions and the adapter's buffers. A model's episodes are bounded by the same context as
      // the expert's, whose demonstrations of the same prompts stand for them.
      const step = stepOf();
      const batch =
        source.kind === 'played' && source.player === 'model'
          ? played(await playBatch(source.play, step, { policy: createExpertPolicy(createEnv(source.play.env)) }, { nPositions: P }))
          : (await draw(null, step)).batch;
      for (const l of lanes) {
        const needs = batch.trees.map((tree) => methodNeeds(tree, l.method, { sdccTeacher: spec.sdccTeacher }));
        const positions = Math.max(0, ...needs.map((n) => n.positions));
        if (positions > P) {
          throw new RunRefusedError(
            `${l.method} needs position ${positions - 1} but the model has n_positions ${P}` +
              (l.method === 'naive-full' ? ' (naive-full scores on the whole physical tape)' : '') +
              ': lower the difficulty, the filler or the editor budget, or use a larger model',
          );
        }
        if (needs.every((n) => n.targets === 0)) throw new RunRefusedError(`${l.method} scores no target in the first batch (every target is dropped)`);
        try {
          checkModelFits(model, gpu.device, needs.reduce((s, n) => s + n.rows, 0));
        } catch (error) {
          throw new RunRefusedError(`${l.method}, batch of ${batch.rollouts.length} rollouts: ${(error as Error).message}`);
        }
      }
    },

    /**
     * One step of every lane at the run's step, in lane order. Cancelled (the watch says so) after
     * some lanes stepped, it returns theirs; cancelled before any, it throws CancelledError.
     */
    async next(hooks: StepHooks = {}) {
      const step = stepOf();
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
      return lane(method).trainer.evaluate([rollout], fits);
    },

    destroy() {
      lanes.forEach((l) => l.trainer.destroy());
    },
  };
}

/** "3 × naive-full needs 140 positions, the model has 128; 1 × ..." */
function summarizeReasons(leftOut: readonly { reason: string }[]): string {
  const counts = new Map<string, number>();
  for (const { reason } of leftOut) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} × ${reason}`).join('; ');
}

/** A step is checkpointed every `every` steps of the run (counted from its start, resumed steps included) and at its last step. */
export function checkpointDue(step: number, every: number, last: boolean): boolean {
  return last || (every > 0 && step % every === 0);
}
