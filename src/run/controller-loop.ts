// The run controller's loop: one step of every lane at a time (metrics, batches and the live episode
// reported as they come, checkpoints on cadence), played until paused, done or failed. The loop yields
// between steps, so pause, reset and requests are handled while a run plays.

import { CancelledError } from '../harness/dataset';
import type { EventJson } from '../rollout/format';
import { deviceGone, withGpu } from './controller-device';
import { clearLive, postLive } from './controller-live';
import { checkpoint, persistRun } from './controller-persistence';
import { finished, setStatus, type ControllerState, type LiveEvent, type Progress } from './controller-state';
import { checkpointDue, StepFailedError } from './engine';

const now = () => performance.now();

/** How many recent steps the rates are measured over (at least). */
const RATE_WINDOW = 12;

/**
 * The steps the rates are measured over: at least two evaluation periods, so an evaluation's long
 * step is always averaged in. A window shorter than the period made the ETA drop between evaluations
 * and jump when one entered it.
 */
export function rateWindow(evalEvery: number): number {
  return Math.max(RATE_WINDOW, evalEvery > 0 ? 2 * evalEvery + 1 : 0);
}

/** The run's step and rates, from its recent step completions (wall ms, tokens). */
export function progress(step: number, total: number, recent: readonly { at: number; tokens: number }[]): Progress {
  const span = recent.length >= 2 ? (recent[recent.length - 1].at - recent[0].at) / 1000 : 0;
  const stepsPerSec = span > 0 ? (recent.length - 1) / span : 0;
  const tokensPerSec = span > 0 ? recent.slice(1).reduce((s, r) => s + r.tokens, 0) / span : 0;
  const etaSec = total > 0 && stepsPerSec > 0 ? Math.max(0, total - step) / stepsPerSec : null;
  return { step, total, stepsPerSec, tokensPerSec, etaSec };
}

/** One step of every lane; false when the run should stop playing. */
export async function stepOnce(run: ControllerState): Promise<boolean> {
  const current = run.engine;
  const info = run.info;
  const { emit } = run.deps;
  if (!current || !info) return false;
  run.cancelled = false;
  // The live episode: who plays it (set per lane) and which one it is (set as each starts).
  const live: Omit<LiveEvent, 'events' | 'done'> = { type: 'live', player: 'expert', purpose: 'train', step: current.step, index: 0, total: 0, id: '' };
  const post = (events: readonly EventJson[], done: boolean) => postLive(run, { ...live, events: events as EventJson[], done });
  try {
    const steps = await withGpu(run, () =>
      current.next({
        lane: (method, purpose = 'train') => {
          Object.assign(live, { player: purpose === 'eval' || run.info!.config.objective === 'rl' ? method : 'expert', purpose });
        },
        watch: {
          start: (index, total, id) => void Object.assign(live, { index, total, id }),
          change: (events) => post(events, false),
          done: (rollout) => post(rollout.events, true),
          cancelled: () => run.cancelled,
        },
      }),
    );
    if (current !== run.engine) return false;
    const records = steps.flatMap((s) => (s.record ? [s.record] : []));
    run.history.push(...records);
    run.recent.push({ at: now(), tokens: records.reduce((s, r) => s + r.tokens, 0) });
    const window = rateWindow(run.info?.config.evalEvery ?? 0);
    if (run.recent.length > window) run.recent = run.recent.slice(-window);
    emit({ type: 'metrics', records, progress: progress(current.step, run.info?.config.steps ?? 0, run.recent) });
    for (const s of steps) {
      const lane = current.lanes.find((l) => l.method === s.method)!;
      emit({
        type: 'batch',
        method: s.method,
        step: lane.trainer.step,
        rollouts: s.batch.rollouts.map((r) => ({ id: r.id, reward: r.reward ?? 0, K: r.K, length: r.length })),
      });
    }
    if (checkpointDue(current.step, run.info!.config.checkpointEvery, finished(run))) await checkpoint(run);
    return true;
  } catch (error) {
    if (current !== run.engine || error instanceof CancelledError) return false;
    // The device went away under the step: recovery takes over.
    if (await deviceGone(run, current.lanes[0].trainer.gpu)) return false;
    run.playing = false;
    setStatus(
      run,
      'paused',
      error instanceof Error ? error.message : String(error),
      error instanceof StepFailedError && error.nonFinite ? 'non-finite' : 'step-error',
    );
    await persistRun(run);
    return false;
  }
}

/** Plays the run: steps until paused, done or failed (one loop at a time). */
export function play(run: ControllerState): void {
  if (!run.engine) return;
  if (finished(run)) {
    setStatus(run, 'done');
    return;
  }
  run.playing = true;
  setStatus(run, 'running');
  void persistRun(run);
  run.loop ??= (async () => {
    run.recent = [];
    while (run.playing && run.engine && !finished(run)) {
      if (!(await stepOnce(run))) break;
    }
    if (run.engine && finished(run)) {
      run.playing = false;
      setStatus(run, 'done');
      await persistRun(run);
    } else if (run.engine && !run.playing && (run.status.phase === 'running' || run.status.phase === 'pausing')) {
      setStatus(run, 'paused');
    }
  })().finally(() => {
    run.loop = null;
  });
}

/** Stops the loop, frees the run's GPU objects and forgets the run (its stored record too). */
export async function stopRun(run: ControllerState): Promise<void> {
  run.playing = false;
  run.cancelled = true;
  await run.loop;
  clearLive(run);
  const old = run.engine;
  run.engine = null;
  if (old) await withGpu(run, async () => old.destroy());
  run.info = null;
  run.history = [];
  run.lastCheckpoint = [];
  await run.deps.store.clearRun().catch(() => undefined);
  run.deps.emit({ type: 'run', run: null, history: [] });
}
