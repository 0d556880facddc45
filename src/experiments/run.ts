// Running the experiment matrix (src/experiments/matrix.ts) on the run engine: per editor, the
// checkpoint plays the drift batch (src/run/play.ts), every replay method scores it, the checkpoint
// plays the held-out batch greedily, then per method one on-policy RL run (src/run/engine.ts) from
// the checkpoint, every run's update 1 on the same batch, and its held-out EM at the end.

import { createGpuModel } from '../gpu/model';
import { scoreRollouts } from '../gpu/score';
import { EPISODE_DEFAULTS } from '../harness/episode';
import { FULL_SAMPLING, isFullSampling } from '../harness/policies/model';
import { driftReport, logprobsOf } from '../metrics/drift-report';
import { expectedDrift } from '../metrics/expected-drift';
import { stepFiguresOf } from '../metrics/step';
import type { ModelWeights } from '../model/params';
import { METHODS, SEQUENCE_METHODS, type Method } from '../plan/types';
import type { ConditioningTree } from '../tree/types';
import { fitRollouts } from '../plan/needs';
import { createRunEngine, GREEDY, StepFailedError, type RunEngine, type RunOptions } from '../run/engine';
import { playBatch, type PlaySpec, type PlayedBatch } from '../run/play';
import { heldOutSeed } from '../run/seeds';
import {
  EVAL_TEMPERATURE,
  matrixResults,
  summarizeRun,
  type BatchFigures,
  type EditorResult,
  type EvalRecord,
  type MatrixConfig,
  type MatrixEngine,
  type MatrixEvent,
  type MatrixHooks,
  type MatrixResults,
  type RunRecord,
  type StepRecord,
} from './matrix';

function batchFigures(batch: PlayedBatch, nPositions: number): BatchFigures {
  // The rollouts every method can replay within the model's positions: the ones scored and trained on.
  const { trees } = fitRollouts(batch, METHODS, nPositions);
  const sum = (f: (t: ConditioningTree) => number) => trees.reduce((s, t) => s + f(t), 0);
  const finalWalk = sum((t) => t.figures.finalWalkLength);
  return {
    rollouts: batch.rollouts.length,
    usable: trees.length,
    meanReward: batch.summary.meanReward,
    em: batch.summary.em,
    K: trees.length ? sum((t) => t.figures.K) / trees.length : 0,
    divergingLeaves: sum((t) => t.figures.divergingLeaves),
    targets: sum((t) => t.figures.targets),
    droppedTargets: sum((t) => t.figures.droppedTargets),
    packedRatio: finalWalk ? sum((t) => t.figures.packedLength) / finalWalk : null,
    stops: batch.summary.stops,
  };
}

/**
 * Runs the matrix: per editor, the checkpoint's rollouts and their drift, the checkpoint's held-out
 * EM, and per method an RL run of `steps` on-policy updates from `weights`, then its held-out EM.
 */
export async function runMatrix(config: MatrixConfig, weights: ModelWeights, engine: MatrixEngine, hooks: MatrixHooks = {}): Promise<MatrixResults> {
  const started = performance.now();
  const P = weights.config.nPositions;
  for (const [name, v] of [
    ['n', config.n],
    ['group', config.group],
    ['steps', config.steps],
    ['evalN', config.evalN],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`runMatrix: ${name} must be an integer >= 1, got ${v}`);
  }
  if (config.episode.maxContext > P) throw new Error(`runMatrix: maxContext ${config.episode.maxContext} exceeds the model's ${P} positions`);
  const schedule = { peak: config.lr, warmup: 0, total: config.steps, min: config.lr };
  // Units of work, for progress: per editor the drift batch and the baseline, per run each update's batch and the final evaluation.
  const total = config.editors.length * (2 + config.methods.length * (config.steps + 1));
  let done = 0;
  const emit = (event: MatrixEvent) => hooks.onEvent?.(event, { done: ++done, total });
  const player: NonNullable<RunOptions['player']> = (model, sampling) => ({ policy: engine.createPolicy(model, sampling) });
  const evalRecord = ({ seed, rollouts, em, reward }: Awaited<ReturnType<RunEngine['evaluate']>>): EvalRecord => {
    return { seed, rollouts, em, meanReward: reward, temperature: EVAL_TEMPERATURE };
  };

  const base = createGpuModel(engine.gpu, weights);
  const editors: EditorResult[] = [];
  try {
    for (const editor of config.editors) {
      const play: PlaySpec = {
        env: config.env,
        editor,
        prompts: config.n,
        group: config.group,
        seed: config.seed,
        maxActTokens: config.episode.maxActTokens ?? EPISODE_DEFAULTS.maxActTokens,
        maxContext: config.episode.maxContext,
      };
      const first = await playBatch(play, 0, player(base, config.driftSampling), { nPositions: P });
      const firstFigures = batchFigures(first, P);
      const scored = fitRollouts(first, METHODS, P);
      const scores = await scoreRollouts(base, scored.trained, SEQUENCE_METHODS, { rows: true });
      const drift = driftReport(scored.trained, logprobsOf(scores), config.bins);
      const expected = expectedDrift(scores, config.driftSampling);
      emit({ kind: 'rollouts', editor: editor.kind, batch: firstFigures, drift });
      const seed = heldOutSeed(config.seed);
      const heldOut = await playBatch(play, 0, player(base, GREEDY), { nPositions: P, seed, prompts: config.evalN, group: 1 });
      const baseline = evalRecord({ ...heldOut, rollouts: heldOut.rollouts.length });
      emit({ kind: 'baseline', editor: editor.kind, eval: baseline });

      // Update 1 of every run draws from the checkpoint itself: the drift batch when it was sampled
      // like a training batch, else one training batch drawn once for all runs.
      let firstTrain: PlayedBatch | undefined = isFullSampling(config.driftSampling) ? first : undefined;
      const runs: Partial<Record<Method, RunRecord>> = {};
      for (const method of config.methods) {
        const run = createRunEngine(
          engine.gpu,
          {
            methods: [method],
            objective: 'rl',
            lambda: method === 'sdcc' ? config.lambda : undefined,
            schedule,
            // On-policy, the rollout logprobs are the current weights' live-prefix scores, so logdiff
            // already is the conditioning drift; measuring it again would add a forward to the
            // non-exact methods' step time only.
            conditioningDrift: false,
            source: { kind: 'played', play, player: 'model', sampling: FULL_SAMPLING, fit: METHODS, first: firstTrain },
            nothingToTrain: 'skip',
          },
          { weights, player },
        );
        try {
          const steps: StepRecord[] = [];
          const reusedFirst = firstTrain !== undefined;
          let stopped: string | null = null;
          for (let update = 1; update <= config.steps && stopped === null; update++) {
            let record: StepRecord;
            try {
              const [step] = await run.next();
              const played = step.batch.played!;
              if (update === 1) firstTrain = played;
              const metrics = step.metrics && stepFiguresOf(step.metrics);
              record = { update, seed: played.seed, batch: batchFigures(played, P), generateMs: step.genMs, metrics, skipped: step.skipped };
            } catch (error) {
              // The update was not applied; the weights stay those of the last good update.
              if (!(error instanceof StepFailedError) || error.kind !== 'non-finite') throw error;
              const played = run.lanes[0].last!.played!;
              const generateMs = update === 1 && reusedFirst ? 0 : played.genMs;
              record = { update, seed: played.seed, batch: batchFigures(played, P), generateMs, metrics: null, skipped: error.reason };
              stopped = `update ${update}: ${error.reason}`;
            }
            steps.push(record);
            emit({ kind: 'step', editor: editor.kind, method, record });
          }
          const final = evalRecord(await run.evaluate(method, config.evalN));
          const result: RunRecord = { method, steps, final, summary: summarizeRun(steps), stopped };
          runs[method] = result;
          // A run stopped early never reaches the units of its missing updates.
          done += config.steps - steps.length;
          emit({ kind: 'run', editor: editor.kind, method, run: result });
        } finally {
          run.destroy();
        }
      }
      const result: EditorResult = {
        editor: editor.kind,
        spec: editor,
        rollouts: { seed: first.seed, batch: firstFigures, summary: first.summary, skipped: scored.leftOut, generateMs: first.genMs },
        drift,
        expected,
        baseline,
        runs,
      };
      editors.push(result);
      await hooks.onEditor?.(result);
    }
  } finally {
    base.destroy();
  }
  return matrixResults(config, weights.config, editors, (performance.now() - started) / 1000);
}
