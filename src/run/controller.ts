// The browser's training run as a controller: it owns the device, the run engine (one trainer per
// method), the metric history and the run's persistence, and reports the state as RunEvents as it
// changes. The train worker only turns messages into calls (src/app/workers/train.worker.ts); tests
// drive the same object in Node with an in-memory store. A lost device is replaced and the run
// restored from its last checkpoint; a non-finite step pauses the run with the reason.
// Its state is one plain record (controller-state.ts); its jobs are modules of functions over it:
// the device (controller-device.ts), persistence (controller-persistence.ts), the step loop
// (controller-loop.ts) and the live view (controller-live.ts). This file runs the commands.

import { adapterLine, type Gpu } from '../gpu/runtime/device';
import { loadCheckpoint } from '../model/checkpoint';
import type { Method } from '../plan/types';
import type { RolloutJson } from '../rollout/format';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { configProblems, type RunConfig } from './config';
import { ensureGpu, withGpu } from './controller-device';
import { play, stepOnce, stopRun } from './controller-loop';
import { atCheckpoint, buildEngine, byteVocabularyProblem, persistRun } from './controller-persistence';
import {
  createControllerState,
  finished,
  serial,
  setStatus,
  type ControllerDeps,
  type ControllerState,
  type RestoredRun,
  type ScoredTargets,
} from './controller-state';
import type { RunEngine } from './engine';

export type {
  BatchEntry,
  ControllerDeps,
  Progress,
  RestoredRun,
  RunEvent,
  RunInfo,
  RunPhase,
  RunStatus,
  RunStore,
  ScoredTargets,
  StoredFile,
  StoredRun,
} from './controller-state';

/** The device-loss handler the device module calls. */
const lossHandler = (run: ControllerState) => (device: Gpu, message: string) => onDeviceLost(run, device, message);

async function start(run: ControllerState, config: RunConfig, paused: boolean): Promise<void> {
  await stopRun(run);
  const problems = configProblems(config);
  if (problems.length) return setStatus(run, 'refused', problems.join('; '), 'refused');
  setStatus(run, 'preparing');
  const device = await ensureGpu(run, lossHandler(run));
  if (!device) return;
  let created: RunEngine | null = null;
  try {
    created = await buildEngine(run.deps.store, device, config, []);
    await created.preflight();
  } catch (error) {
    created?.destroy();
    if (run.retired.has(device)) return;
    return setStatus(run, 'refused', error instanceof Error ? error.message : String(error), 'refused');
  }
  run.engine = created;
  run.info = { id: `run-${Date.now().toString(36)}`, config, model: created.model, createdAt: Date.now(), checkpointStep: 0 };
  run.playing = !paused;
  await persistRun(run);
  run.deps.emit({ type: 'run', run: run.info, history: run.history });
  if (paused) setStatus(run, 'paused');
  else play(run);
}

/** Restores the stored run (on hello) or the current one on a new device: from its last checkpoint. */
async function restore(run: ControllerState, stored: Omit<RestoredRun, 'playing'>, resume: boolean): Promise<boolean> {
  const device = await ensureGpu(run, lossHandler(run));
  if (!device) return false;
  const missing = stored.info.checkpointStep > 0 ? stored.info.config.methods.filter((m) => !stored.lanes.some((l) => l.method === m)) : [];
  try {
    if (missing.length) throw new Error(`its checkpoint of step ${stored.info.checkpointStep} has no ${missing.join(', ')} lane`);
    run.engine = await buildEngine(run.deps.store, device, stored.info.config, stored.lanes);
  } catch (error) {
    setStatus(run, 'refused', (error as Error).message, 'not-restored');
    return false;
  }
  const kept = atCheckpoint(stored.lanes, stored.history);
  run.info = { ...stored.info, checkpointStep: kept.step };
  run.history = kept.history;
  run.lastCheckpoint = stored.lanes.slice();
  run.deps.emit({ type: 'run', run: run.info, history: run.history });
  if (resume) play(run);
  else setStatus(run, finished(run) ? 'done' : 'paused');
  return true;
}

async function hello(run: ControllerState): Promise<void> {
  await run.deps.lock?.(() =>
    setStatus(run, 'unavailable', 'another tab of the workbench is training (one engine per browser profile): this one starts when it closes', 'busy'),
  );
  if (!(await ensureGpu(run, lossHandler(run)))) return;
  const stored = await run.deps.store.loadRun().catch(() => null);
  if (!stored) {
    run.deps.emit({ type: 'run', run: null, history: [] });
    setStatus(run, 'idle');
    return;
  }
  setStatus(run, 'preparing');
  await restore(run, stored, stored.playing);
}

/** A lost device: a new one is made and the run restored on it from its last checkpoint (playing again if it was). */
function onDeviceLost(run: ControllerState, lost: Gpu, message: string): void {
  if (run.gpu !== lost) return;
  run.retired.add(lost);
  run.gpu = null;
  run.deps.emit({ type: 'device-lost', message });
  const wasPlaying = run.playing;
  serial(run, async () => {
    setStatus(run, 'recovering', message, 'device');
    run.playing = false;
    run.cancelled = true;
    // A read back on a lost device rejects; should one hang instead, recovery does not wait on it.
    await Promise.race([run.loop, new Promise((r) => setTimeout(r, 3000))]);
    const old = run.engine;
    run.engine = null;
    // The old device's buffers are gone with it; destroying them is harmless and frees the objects.
    old?.destroy();
    run.gpuTail = Promise.resolve();
    if (!run.info) {
      await ensureGpu(run, lossHandler(run));
      setStatus(run, 'idle', `recovered from a lost device: ${message}`, 'device');
      return;
    }
    let attempts = 0;
    while (!(await ensureGpu(run, lossHandler(run))) && attempts++ < 3) await new Promise((r) => setTimeout(r, 500 * attempts));
    if (!run.gpu) return;
    if (!(await restore(run, { info: run.info, lanes: run.lastCheckpoint, history: run.history }, false))) return;
    run.deps.emit({ type: 'recovered', step: run.engine!.step, adapter: adapterLine(run.gpu.info) });
    if (wasPlaying) play(run);
  });
}

function laneOf(run: ControllerState, method: Method) {
  const lane = run.engine?.lanes.find((l) => l.method === method);
  if (!lane) throw new Error(`no lane trains ${method}`);
  return lane;
}

async function laneCheckpoint(run: ControllerState, method: Method) {
  const lane = laneOf(run, method);
  const bytes = await withGpu(run, () => lane.trainer.checkpoint({ run: run.info?.id ?? '', method }));
  return { lane, bytes, name: `${run.info?.id ?? 'run'}-${method}-step${lane.trainer.step}` };
}

function batchRollout(run: ControllerState, method: Method, id: string) {
  const lane = laneOf(run, method);
  const played = lane.last?.played;
  const index = played?.rollouts.findIndex((r) => r.id === id) ?? -1;
  if (!played || index < 0) throw new Error(`rollout ${id} is not in the last batch of ${method}`);
  return { json: played.json[index], rollout: played.rollouts[index] };
}

export function createRunController(deps: ControllerDeps) {
  const run = createControllerState(deps);
  const { store } = deps;
  return {
    /** The page is up: probe the device, restore a stored run (which resumes if it was playing). */
    hello: () => serial(run, () => hello(run)),
    /** A new run from `config` (replacing any current one); it plays unless `paused`. */
    start: (config: RunConfig, paused = false) => serial(run, () => start(run, config, paused)),
    play: () => serial(run, async () => play(run)),
    pause() {
      if (!run.playing) return;
      run.playing = false;
      run.cancelled = true;
      setStatus(run, run.loop ? 'pausing' : 'paused');
      void persistRun(run);
    },
    /** One step, then paused (a paused run, or a new one from `config` when there is none). */
    step(config?: RunConfig) {
      serial(run, async () => {
        if (!run.engine && config) await start(run, config, true);
        if (!run.engine || run.playing || run.loop || finished(run)) return;
        setStatus(run, 'running');
        if (await stepOnce(run)) setStatus(run, finished(run) ? 'done' : 'paused');
      });
    },
    /** Ends the current run and forgets it (its stored checkpoints and history too). */
    reset() {
      run.cancelled = true;
      run.playing = false;
      serial(run, async () => {
        await stopRun(run);
        setStatus(run, run.gpu ? 'idle' : run.status.phase === 'unavailable' ? 'unavailable' : 'idle');
      });
    },
    /** A lane's current weights as a checkpoint file and its optimizer state. */
    async exportCheckpoint(method: Method) {
      const { name, bytes } = await laneCheckpoint(run, method);
      return { name, ...bytes };
    },
    /** Keeps a lane's current weights as a named checkpoint, to start another run from. */
    async forkCheckpoint(method: Method) {
      const { lane, name, bytes } = await laneCheckpoint(run, method);
      const file = `${name}.safetensors`;
      await store.saveFile({ name: file, bytes: bytes.weights, model: lane.trainer.model.config, savedAt: Date.now() });
      return { name: file, step: lane.trainer.step };
    },
    /** Keeps a GPT-2 checkpoint under `name`, for configs whose `checkpoint` names it. */
    async importCheckpoint(name: string, bytes: Uint8Array) {
      const weights = loadCheckpoint(bytes, { maxVocab: BYTE_VOCAB });
      const refused = byteVocabularyProblem(weights);
      if (refused) throw new Error(`${name}: ${refused}`);
      await store.saveFile({ name, bytes, model: weights.config, savedAt: Date.now() });
      return { name, model: weights.config };
    },
    /** A rollout of a lane's last batch. */
    rollout: async (method: Method, id: string): Promise<RolloutJson> => batchRollout(run, method, id).json,
    /** Every method's log-probability of every target of a rollout of the last batch, under `method`'s weights. */
    async score(method: Method, id: string): Promise<ScoredTargets> {
      const { rollout } = batchRollout(run, method, id);
      const current = run.engine!;
      const evaluation = await withGpu(run, () => current.score(method, rollout));
      const ids = Array.from(rollout.targets);
      const scores: ScoredTargets = { ids, rollout: ids.map((t) => (Number.isFinite(rollout.logprobs[t]) ? rollout.logprobs[t] : null)), methods: {} };
      for (const [m, perRollout] of Object.entries(evaluation)) scores.methods[m as Method] = ids.map((t) => perRollout[0].get(t) ?? null);
      return scores;
    },
    /** Resolves once the commands queued so far and the step loop have finished. */
    async settled() {
      for (let tail = run.commandTail; ; tail = run.commandTail) {
        await tail;
        await run.loop;
        if (tail === run.commandTail && !run.loop) return;
      }
    },
  };
}
