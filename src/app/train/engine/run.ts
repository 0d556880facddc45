// The training run: one lane per method, each its own trainer (weights and AdamW state) started
// from the same weights, fed the same prompts. A step advances every lane that is at the run's
// step, so a lane that failed (a non-finite gradient: its update was not applied) retries alone.
// No DOM and no persistence here: the worker adds those, Node benchmarks use it as it is.

import { createExpertPolicy, type Env, type Policy } from '../../../harness';
import type { Gpu } from '../../../gpu/device';
import { NonFiniteGradientError } from '../../../gpu/adamw';
import { checkModelFits } from '../../../gpu/model';
import { assembleStep, createTrainer, type Evaluation, type StepFigures, type StepMetrics, type Trainer } from '../../../gpu/train';
import type { LrSchedule } from '../../../objectives/adamw';
import type { OptimizerState } from '../../../model/checkpoint';
import type { ModelConfig } from '../../../model/config';
import type { ModelWeights } from '../../../model/params';
import type { Method, SequenceMethod } from '../../../plan/types';
import type { Rollout } from '../../../rollout/rollout';
import { deriveTree } from '../../../tree/derive';
import { orderedMethods, type RunConfig } from './config';
import { CancelledError, evalPromptSeeds, playStep, runEnv, type EpisodeWatch, type StepRollouts, type TokenRelay } from './rollouts';

/** One method's figures after one step (docs/metrics.md), as stored, charted and exported: the trainer's, and the batch's. */
export type MetricRecord = StepFigures & {
  /** Mean edits per rollout of the batch. */
  K: number;
  reward: number;
  em: number;
  /** Greedy play on the held-out prompts after this step (every `evalEvery` steps), else null. */
  evalReward: number | null;
  evalEm: number | null;
  /** RL rollouts left out of the step: a branch longer than the model's positions. */
  skipped: number;
  /** Playing the episodes of the batch (RL: the model decoding). */
  genMs: number;
  /** Wall-clock time of the record's creation (ms since the epoch). */
  time: number;
};

export class RunRefusedError extends Error {
  override readonly name = 'RunRefusedError';
}

/** A lane's step failed; `nonFinite`: the update was refused (weights, moments and step unchanged). */
export class StepFailedError extends Error {
  override readonly name = 'StepFailedError';
  constructor(
    readonly method: Method,
    readonly nonFinite: boolean,
    message: string,
  ) {
    super(message);
  }
}

export interface Lane {
  method: Method;
  trainer: Trainer;
  /** The batch of this lane's last step, for inspection. */
  last: StepRollouts | null;
}

export interface LaneState {
  weights: ModelWeights;
  optimizer: OptimizerState;
}

export interface LaneCheckpoint {
  method: Method;
  step: number;
  weights: Uint8Array;
  optimizer: Uint8Array;
}

/** The lane's own model as a policy (see modelPolicy.ts), and where it streams tokens: sampling for RL, greedy for evaluations. */
export type LanePolicy = (lane: Lane, env: Env, mode?: 'sample' | 'greedy') => { policy: Policy; relay?: TokenRelay };

export interface RunEngineOptions {
  /** Starting weights of every lane (fresh or a loaded checkpoint). */
  weights: ModelWeights;
  /** Lanes resumed from a checkpoint: their weights and AdamW state. */
  resume?: Partial<Record<Method, LaneState>>;
  /** The lanes' model policy (RL, evaluations); without one an RL run is refused and nothing is evaluated. */
  lanePolicy?: LanePolicy;
}

export interface StepHooks {
  /** Per lane, before it plays or trains, and before it is evaluated. */
  lane?(method: Method, phase?: 'train' | 'eval'): void;
  watch?: EpisodeWatch;
}

export interface RunEngine {
  readonly config: RunConfig;
  readonly model: ModelConfig;
  readonly lanes: readonly Lane[];
  /** Completed steps: the smallest update count over the lanes. */
  readonly step: number;
  /** Checks the first batch of every method against the model and the adapter; throws RunRefusedError. */
  preflight(): Promise<void>;
  /**
   * One step of every lane at the run's step; records in lane order. Cancelled (the watch says so)
   * after some lanes stepped, it returns their records; cancelled before any, it throws CancelledError.
   */
  next(hooks?: StepHooks): Promise<MetricRecord[]>;
  checkpoint(metadata?: Record<string, string>): Promise<LaneCheckpoint[]>;
  /** Every sequence method's log-probability of every target of `rollout`, under `method`'s weights. */
  score(method: Method, rollout: Rollout): Promise<Evaluation>;
  destroy(): void;
}

export function runSchedule(config: RunConfig): LrSchedule {
  const total = config.steps > 0 ? config.steps : 1_000_000;
  return { peak: config.lr, warmup: Math.min(10, total), total, min: config.lr / 10 };
}

export function createRunEngine(gpu: Gpu, config: RunConfig, options: RunEngineOptions): RunEngine {
  const model = options.weights.config;
  const env = runEnv(config);
  const expert = createExpertPolicy(env);
  const schedule = runSchedule(config);
  if (config.objective === 'rl' && !options.lanePolicy) throw new RunRefusedError('RL needs the model as a policy; this build has none');
  const lanes: Lane[] = [];
  try {
    for (const method of orderedMethods(config.methods)) {
      const resumed = options.resume?.[method];
      const trainer = createTrainer(gpu, resumed?.weights ?? options.weights, { schedule, optimizerState: resumed?.optimizer });
      lanes.push({ method, trainer, last: null });
    }
  } catch (error) {
    lanes.forEach((l) => l.trainer.destroy());
    throw error;
  }
  const stepOf = () => Math.min(...lanes.map((l) => l.trainer.step));
  /** SFT: one set of demonstrations per step, shared by every lane. */
  let shared: { step: number; batch: StepRollouts } | null = null;

  const demonstrations = async (step: number, watch?: EpisodeWatch) => {
    if (shared?.step !== step) shared = { step, batch: await playStep(config, step, env, { policy: expert }, 1, model.nPositions, watch) };
    return shared.batch;
  };

  /** Positions a rollout needs under this run: its longest branch (the exact scores), naive-full its tape. */
  const needsPositions = (rollout: Rollout) => {
    const tree = deriveTree(rollout);
    let longest = 0;
    for (let k = 0; k <= tree.K; k++) longest = Math.max(longest, tree.branchIds(k).length);
    return config.methods.includes('naive-full') ? Math.max(longest, rollout.length) : longest;
  };

  const record = (lane: Lane, m: StepMetrics, batch: StepRollouts, genMs: number, skipped: number): MetricRecord => ({
    step: lane.trainer.step,
    method: lane.method,
    objective: config.objective,
    loss: m.loss,
    taskLoss: m.taskLoss,
    // Demonstrations carry logprob 0 (the expert is certain): a gap to them is not drift.
    logdiff: config.objective === 'rl' ? m.logdiff : null,
    mu: config.objective === 'rl' ? m.mu : null,
    conditioningDrift: m.conditioningDrift,
    conditioningMu: m.conditioningMu,
    klSdcc: m.klSdcc,
    klFired: m.klFired,
    divergingLeaves: m.divergingLeaves,
    targets: m.targets,
    tokens: m.tokens,
    nPacked: m.nPacked,
    nFinal: m.nFinal,
    K: batch.K,
    reward: batch.reward,
    em: batch.em,
    evalReward: null,
    evalEm: null,
    skipped,
    lr: m.lr,
    gradNorm: m.gradNorm,
    stepMs: m.stepMs,
    genMs,
    time: Date.now(),
  });

  const engine: RunEngine = {
    config,
    model,
    lanes,
    get step() {
      return stepOf();
    },

    async preflight() {
      // The run's first demonstrations stand for the data (RL rollouts are bounded by the same
      // context): every method's plan must fit the model's positions and the adapter's buffers.
      const batch = await demonstrations(stepOf());
      const trees = batch.rollouts.map(deriveTree);
      for (const lane of lanes) {
        const step = assembleStep(trees, batch.rollouts, { method: lane.method, objective: 'sft' });
        const rows = step.batch.tokens.length;
        let maxPosition = 0;
        for (const p of step.batch.positions) maxPosition = Math.max(maxPosition, p);
        if (maxPosition >= model.nPositions) {
          throw new RunRefusedError(
            `${lane.method} needs position ${maxPosition} but the model has n_positions ${model.nPositions}` +
              (lane.method === 'naive-full' ? ' (naive-full scores on the whole physical tape)' : '') +
              ': lower the difficulty, the filler or the editor budget, or use a larger model',
          );
        }
        if (step.batch.targets.length === 0) throw new RunRefusedError(`${lane.method} scores no target in the first batch (every target is dropped)`);
        try {
          checkModelFits(model, gpu.device, rows);
          if (step.teacher) checkModelFits(model, gpu.device, step.teacher.tokens.length);
        } catch (error) {
          throw new RunRefusedError(`${lane.method}, batch of ${batch.rollouts.length} rollouts: ${(error as Error).message}`);
        }
      }
    },

    async next(hooks = {}) {
      const step = stepOf();
      const out: MetricRecord[] = [];
      for (const lane of lanes) {
        if (lane.trainer.step !== step) continue;
        hooks.lane?.(lane.method);
        let batch: StepRollouts;
        let genMs = 0;
        try {
          if (config.objective === 'sft') {
            const had = shared?.step === step;
            batch = await demonstrations(step, hooks.watch);
            genMs = had ? 0 : batch.genMs;
          } else {
            const watch = hooks.watch ?? {};
            batch = await playStep(config, step, env, options.lanePolicy!(lane, env), config.group, model.nPositions, watch);
            genMs = batch.genMs;
          }
        } catch (error) {
          // Stopped between episodes: the lanes that stepped keep their records; the rest step next time.
          if (error instanceof CancelledError && out.length) return out;
          throw error;
        }
        lane.last = batch;
        // The model's own episodes can outgrow its positions: a view over the context limit before
        // an edit shortens it. Such rollouts are left out of the step and counted.
        const fit = config.objective === 'rl' ? batch.rollouts.filter((r) => needsPositions(r) <= model.nPositions) : batch.rollouts;
        if (fit.length === 0) {
          throw new StepFailedError(lane.method, false, `${lane.method}: every rollout of step ${step + 1} needs more than the model's ${model.nPositions} positions (n_positions)`);
        }
        let metrics: StepMetrics;
        try {
          metrics = await lane.trainer.trainStep(fit, { method: lane.method, objective: config.objective, lambda: config.lambda, conditioningDrift: true });
        } catch (error) {
          if (error instanceof NonFiniteGradientError) throw new StepFailedError(lane.method, true, `${lane.method}: ${error.message}`);
          throw new StepFailedError(lane.method, false, `${lane.method}: ${(error as Error).message}`);
        }
        out.push(record(lane, metrics, batch, genMs, batch.rollouts.length - fit.length));
      }
      // Evaluations are not cancelled: they belong to the step whose records they complete.
      if (options.lanePolicy && config.evalEvery > 0) {
        for (const r of out) {
          if (r.step % config.evalEvery !== 0) continue;
          const lane = lanes.find((l) => l.method === r.method)!;
          hooks.lane?.(lane.method, 'eval');
          const watch = { ...hooks.watch, cancelled: undefined };
          const played = await playStep(config, r.step, env, options.lanePolicy(lane, env, 'greedy'), 1, model.nPositions, watch, evalPromptSeeds(config));
          r.evalReward = played.reward;
          r.evalEm = played.em;
        }
      }
      return out;
    },

    async checkpoint(metadata = {}) {
      const out: LaneCheckpoint[] = [];
      for (const lane of lanes) {
        const bytes = await lane.trainer.checkpoint({ ...metadata, method: lane.method });
        out.push({ method: lane.method, step: lane.trainer.step, ...bytes });
      }
      return out;
    },

    async score(method, rollout) {
      const lane = lanes.find((l) => l.method === method);
      if (!lane) throw new Error(`no lane trains ${method}`);
      const methods: SequenceMethod[] = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'];
      const tree = deriveTree(rollout);
      // naive-full runs on the whole tape: leave it out when the tape is longer than the model's positions.
      const fits = methods.filter((m) => m !== 'naive-full' || tree.figures.physicalLength <= model.nPositions);
      return lane.trainer.evaluate([rollout], fits);
    },

    destroy() {
      lanes.forEach((l) => l.trainer.destroy());
    },
  };
  return engine;
}
