// Running the learning experiment (src/experiments/learning.ts) on the run engine: per seed and
// editor, the start's held-out EM, then one run per method (and per swept λ) built from the browser's
// run config of that phase (runSpecOf), so the app's preset trains what the experiment measured.
// The RL runs of one seed and editor share their first batch, which the start plays once.

import type { Gpu } from '../gpu/runtime/device';
import { createGpuModel } from '../gpu/model';
import type { ModelWeights } from '../model/params';
import { runSpecOf } from '../run/config';
import { createRunEngine, modelPlayer, StepFailedError, type RunSpec } from '../run/engine';
import { playBatch, type PlayedBatch } from '../run/play';
import {
  checkLearningConfig,
  evaluations,
  groupKey,
  learningJobs,
  learningUnits,
  phaseRunConfig,
  updateRecord,
  type LearningConfig,
  type LearningJob,
  type LearningResults,
  type RunResult,
} from './learning';
import type { EditorSpec } from '../harness/editors';

export type LearningEvent =
  | { kind: 'baseline'; editor: string; seed: number; em: number }
  | { kind: 'update'; run: RunResult; update: number }
  | { kind: 'eval'; run: RunResult; update: number; em: number }
  | { kind: 'run'; run: RunResult };

export interface LearningHooks {
  /** After each unit of work (an update, an evaluation); `done` and `total` count them. */
  onEvent?(event: LearningEvent, progress: { done: number; total: number }): void;
  /** After each run (a long experiment can save what it has). */
  onRun?(results: LearningResults): void | Promise<void>;
  /** Runs (and baselines) of an earlier, interrupted experiment with the same config: kept, not run again. */
  resume?: Pick<LearningResults, 'runs' | 'baseline' | 'seconds'>;
}

export async function runLearning(config: LearningConfig, weights: ModelWeights, gpu: Gpu, hooks: LearningHooks = {}): Promise<LearningResults> {
  checkLearningConfig(config);
  // A resumed experiment's time is the earlier sessions' and this one's.
  const started = performance.now() - (hooks.resume?.seconds ?? 0) * 1000;
  const P = weights.config.nPositions;
  const total = learningUnits(config);
  let done = 0;
  const emit = (event: LearningEvent, units = 1) => {
    done += units;
    hooks.onEvent?.(event, { done, total });
  };
  const results: LearningResults = {
    format: 'memorywalker.experiment-learning/v1',
    model: { ...weights.config },
    config,
    baseline: [],
    runs: [],
    seconds: 0,
  };
  const kept = (editor: EditorSpec, seed: number, job: LearningJob) =>
    hooks.resume?.runs.find((r) => r.editor === editor.kind && r.seed === seed && groupKey(r) === groupKey({ ...job, editor: editor.kind, ...sdccOf(job) }));

  const start = createGpuModel(gpu, weights);
  try {
    for (const seed of config.seeds) {
      for (const editor of config.editors) {
        const specOf = (job: LearningJob): RunSpec => {
          const objective = job.phase === 'sft' ? 'sft' : 'rl';
          return { ...runSpecOf(phaseRunConfig(config, objective, editor, seed, [job.method], job.lambda)), sdccGate: job.gate, nothingToTrain: 'skip' };
        };
        // The start's held-out EM: every run of this seed and editor begins there.
        const probe = specOf({ phase: 'sft', method: config.methods[0], lambda: config.lambda, gate: 'leaves' });
        let base = hooks.resume?.baseline.find((b) => b.editor === editor.kind && b.seed === seed);
        if (!base) {
          const engine = createRunEngine(gpu, probe, { weights });
          try {
            const heldOut = await engine.evaluate(config.methods[0], config.eval.prompts);
            base = { editor: editor.kind, seed, em: heldOut.em, reward: heldOut.reward };
          } finally {
            engine.destroy();
          }
        }
        results.baseline.push(base);
        emit({ kind: 'baseline', editor: editor.kind, seed, em: base.em });

        // The RL runs' first batch: the start's own episodes, played once.
        let first: PlayedBatch | undefined;
        for (const job of learningJobs(config)) {
          const sizes = job.phase === 'sft' ? config.sft : config.rl;
          const units = sizes.updates + evaluations(sizes.updates, sizes.evalEvery);
          const previous = kept(editor, seed, job);
          if (previous) {
            results.runs.push(previous);
            emit({ kind: 'run', run: previous }, units);
            continue;
          }
          let spec = specOf(job);
          if (spec.source.kind === 'played' && spec.source.player === 'model') {
            first ??= await playBatch(spec.source.play, 0, modelPlayer(start, spec.source.sampling ?? {}), { nPositions: P });
            spec = { ...spec, source: { ...spec.source, first } };
          }
          const run = await runOne(
            gpu,
            spec,
            weights,
            { phase: job.phase, editor: editor.kind, seed, method: job.method, ...sdccOf(job) },
            sizes.updates,
            config,
            (event) => emit(event),
          );
          // Units of updates a stopped run never reached.
          done += units - (run.updates.length + run.evals.length);
          results.runs.push(run);
          emit({ kind: 'run', run }, 0);
          results.seconds = (performance.now() - started) / 1000;
          await hooks.onRun?.(results);
        }
      }
    }
  } finally {
    start.destroy();
  }
  results.seconds = (performance.now() - started) / 1000;
  return results;
}

/** SDCC's λ and gate as a run records them (null for the other methods). */
function sdccOf(job: LearningJob): Pick<RunResult, 'lambda' | 'gate'> {
  return job.method === 'sdcc' ? { lambda: job.lambda, gate: job.gate } : { lambda: null, gate: null };
}

/** One run: `updates` steps of one lane, its held-out EM every `evalEvery` of its phase and after the last. */
async function runOne(
  gpu: Gpu,
  spec: RunSpec,
  weights: ModelWeights,
  id: Pick<RunResult, 'phase' | 'editor' | 'seed' | 'method' | 'lambda' | 'gate'>,
  updates: number,
  config: LearningConfig,
  emit: (event: LearningEvent) => void,
): Promise<RunResult> {
  const started = performance.now();
  const run: RunResult = { ...id, updates: [], evals: [], stopped: null, seconds: 0 };
  const engine = createRunEngine(gpu, spec, { weights });
  try {
    for (let u = 1; u <= updates && run.stopped === null; u++) {
      try {
        const [step] = await engine.next();
        if (step.record) {
          run.updates.push(updateRecord(step.record));
          emit({ kind: 'update', run, update: u });
          if (step.record.evalEm !== null) {
            run.evals.push({ update: u, em: step.record.evalEm, reward: step.record.evalReward ?? 0 });
            emit({ kind: 'eval', run, update: u, em: step.record.evalEm });
          }
        }
      } catch (error) {
        // The update was not applied; the weights stay those of the last good one.
        if (!(error instanceof StepFailedError) || error.kind !== 'non-finite') throw error;
        run.stopped = `update ${u}: ${error.reason}`;
      }
    }
    // A last evaluation when the run ended between two.
    const lastUpdate = engine.step;
    if (run.evals.at(-1)?.update !== lastUpdate && lastUpdate > 0) {
      const heldOut = await engine.evaluate(id.method, config.eval.prompts);
      run.evals.push({ update: lastUpdate, em: heldOut.em, reward: heldOut.reward });
      emit({ kind: 'eval', run, update: lastUpdate, em: heldOut.em });
    }
  } finally {
    engine.destroy();
  }
  run.seconds = (performance.now() - started) / 1000;
  return run;
}
