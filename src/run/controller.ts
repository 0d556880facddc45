// The browser's training run as a controller: it owns the device, the run engine (one trainer per
// method), the metric history and the run's persistence, and reports the state as RunEvents as it
// changes. The train worker only turns messages into calls (src/app/workers/train.worker.ts); tests
// drive the same object in Node with an in-memory store. The step loop yields between steps, so
// pause, reset and requests are handled while a run plays. A lost device is replaced and the run
// restored from its last checkpoint; a non-finite step pauses the run with the reason.

import { adapterLine, GpuUnavailableError, type Gpu } from '../gpu/runtime/device';
import { CancelledError } from '../harness/dataset';
import { loadCheckpoint, loadCheckpointPair } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights, type ModelWeights } from '../model/params';
import type { Method } from '../plan/types';
import type { EventJson, RolloutJson } from '../rollout/format';
import type { Rollout } from '../rollout/rollout';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { configProblems, presetModel, runSpecOf, type RunConfig } from './config';
import { checkpointDue, createRunEngine, RunRefusedError, StepFailedError, type LaneCheckpoint, type LaneState, type MetricRecord, type RunEngine } from './engine';

export type RunPhase =
  /** No run. */
  | 'idle'
  /** Creating the device, the trainers; checking the first batch. */
  | 'preparing'
  | 'running'
  /** Paused by request; the step in flight finishes first. */
  | 'pausing'
  | 'paused'
  /** A fixed-length run reached its last step. */
  | 'done'
  /** The device was lost: a new one is being made and the run restored from its checkpoint. */
  | 'recovering'
  /** The config was refused before the run started (the reason names the limit). */
  | 'refused'
  /** No WebGPU in this browser: training cannot run (inspection still works). */
  | 'unavailable';

export interface RunStatus {
  phase: RunPhase;
  /** Why the run is in this phase, for people (a refusal, a failed step, a NaN). */
  reason?: string;
  /** What kind of stop `reason` explains. */
  cause?: 'non-finite' | 'step-error' | 'refused' | 'no-webgpu' | 'device' | 'busy' | 'not-restored';
}

export interface RunInfo {
  id: string;
  config: RunConfig;
  model: ModelConfig;
  createdAt: number;
  /** Step of the last checkpoint kept in the store (0: none yet). */
  checkpointStep: number;
}

export interface Progress {
  step: number;
  /** Steps of a fixed-length run, 0 for an open-ended one. */
  total: number;
  stepsPerSec: number;
  tokensPerSec: number;
  /** Seconds to the last step (null: open-ended, or not measured yet). */
  etaSec: number | null;
}

/** A rollout of a lane's last batch, as the page lists it (no reward: 0). */
export type BatchEntry = Pick<Rollout, 'id' | 'K' | 'length'> & { reward: number };

export interface ScoredTargets {
  /** Target ids of the rollout, ascending. */
  ids: number[];
  /** The rollout's own logprob per target (null where it has none). */
  rollout: (number | null)[];
  /** Per sequence method, its logprob per target (null where the method does not score it). */
  methods: Partial<Record<Method, (number | null)[]>>;
}

/** What the controller reports, as it happens. */
export type RunEvent =
  | { type: 'gpu'; ok: true; adapter: string; software: boolean }
  | { type: 'gpu'; ok: false; reason: string; message: string }
  | { type: 'status'; status: RunStatus }
  /** A run began, was restored, recovered or reset: the whole metric history replaces the page's. */
  | { type: 'run'; run: RunInfo | null; history: MetricRecord[] }
  | { type: 'metrics'; records: MetricRecord[]; progress: Progress }
  | { type: 'checkpointed'; step: number }
  /** The batch of a lane's last step, for inspection. */
  | { type: 'batch'; method: Method; step: number; rollouts: BatchEntry[] }
  /**
   * The episode being played, by the expert (SFT demonstrations, shared by every lane) or by a
   * lane's model (RL): its events so far; `done` once it ended (the events then are the rollout as trained).
   * At most one per live interval, the newest state: an episode may start before the last one's end was sent.
   */
  | {
      type: 'live';
      player: Method | 'expert';
      /** A training batch, or the greedy evaluation on held-out prompts. */
      purpose: 'train' | 'eval';
      step: number;
      index: number;
      total: number;
      id: string;
      events: EventJson[];
      done: boolean;
    }
  | { type: 'device-lost'; message: string }
  /** A new device holds the run again, from the checkpoint at `step`. */
  | { type: 'recovered'; step: number; adapter: string }
  /** A GPU validation or memory error the controller did not expect (shown, not fatal by itself). */
  | { type: 'gpu-error'; message: string };

export interface StoredRun {
  info: RunInfo;
  /** Whether the run was playing when last written: a restored run resumes playing. */
  playing: boolean;
}

export interface StoredFile {
  name: string;
  bytes: Uint8Array;
  model: ModelConfig;
  savedAt: number;
}

export interface RestoredRun extends StoredRun {
  lanes: LaneCheckpoint[];
  history: MetricRecord[];
}

/** Where the run outlives the page (IndexedDB in the browser). */
export interface RunStore {
  saveRun(run: StoredRun): Promise<void>;
  /** A checkpoint: every lane's files, the history up to it and the run record, atomically. */
  saveCheckpoint(run: StoredRun, lanes: readonly LaneCheckpoint[], history: readonly MetricRecord[]): Promise<void>;
  loadRun(): Promise<RestoredRun | null>;
  clearRun(): Promise<void>;
  saveFile(file: StoredFile): Promise<void>;
  loadFile(name: string): Promise<StoredFile | null>;
}

export interface ControllerDeps {
  /** A device (throws GpuUnavailableError without WebGPU). */
  createGpu(): Promise<Gpu>;
  store: RunStore;
  emit(event: RunEvent): void;
  /** Held before the first command runs (the browser: one engine per profile); it may report 'busy' while it waits. */
  lock?(busy: () => void): Promise<void>;
  /** Live episode updates at most this often (default 100 ms: each one re-renders the page's live panel). */
  liveIntervalMs?: number;
}

const now = () => performance.now();

/** Why a checkpoint cannot play the environments, or null: they speak the byte tokenizer. */
function byteVocabularyProblem(weights: ModelWeights): string | null {
  const V = weights.config.vocabSize;
  return V === BYTE_VOCAB ? null : `the environments speak the byte tokenizer (${BYTE_VOCAB} tokens); this checkpoint has a vocabulary of ${V}`;
}

/** The checkpoint's step (the slowest lane's) and the history up to each lane's checkpoint. */
function atCheckpoint(lanes: readonly LaneCheckpoint[], history: readonly MetricRecord[]) {
  const upTo = new Map(lanes.map((l) => [l.method, l.step]));
  return { step: lanes.length ? Math.min(...lanes.map((l) => l.step)) : 0, history: history.filter((r) => r.step <= (upTo.get(r.method) ?? 0)) };
}

export function createRunController(deps: ControllerDeps) {
  const { store, emit } = deps;
  const liveInterval = deps.liveIntervalMs ?? 100;
  let gpu: Gpu | null = null;
  /** Devices this controller destroys itself (reset, replacement) are not losses. */
  const retired = new WeakSet<Gpu>();
  let engine: RunEngine | null = null;
  let info: RunInfo | null = null;
  let history: MetricRecord[] = [];
  let lastCheckpoint: LaneCheckpoint[] = [];
  let status: RunStatus = { phase: 'idle' };
  let playing = false;
  /** Set by pause/reset: the step in flight stops between episodes. */
  let cancelled = false;
  let loop: Promise<void> | null = null;
  /** Recent step completions (wall ms, tokens) for the rates. */
  let recent: { at: number; tokens: number }[] = [];

  /** GPU work one at a time: steps, checkpoints, exports and scores never interleave. */
  let gpuTail: Promise<unknown> = Promise.resolve();
  const withGpu = <T>(work: () => Promise<T>): Promise<T> => {
    const run = gpuTail.then(work, work);
    gpuTail = run.catch(() => undefined);
    return run;
  };

  /** Commands that replace the run run one at a time. */
  let commandTail: Promise<unknown> = Promise.resolve();
  const serial = (work: () => Promise<void>): void => {
    commandTail = commandTail.then(work, work).catch((error: unknown) => {
      playing = false;
      setStatus(engine ? 'paused' : 'idle', error instanceof Error ? error.message : String(error), 'step-error');
    });
  };

  const setStatus = (phase: RunPhase, reason?: string, cause?: RunStatus['cause']) => {
    status = reason ? { phase, reason, cause } : { phase };
    emit({ type: 'status', status });
  };

  const ensureGpu = async (): Promise<Gpu | null> => {
    if (gpu) return gpu;
    try {
      const created = await deps.createGpu();
      gpu = created;
      emit({ type: 'gpu', ok: true, adapter: adapterLine(created.info), software: created.info.isSoftware });
      created.onEvent((event) => {
        if (event.type === 'uncaptured-error') emit({ type: 'gpu-error', message: `${event.kind}: ${event.message}` });
      });
      void created.lost.then((event) => {
        if (!retired.has(created)) onDeviceLost(created, event.message || `the device was lost (${event.reason})`);
      });
      return created;
    } catch (error) {
      const reason = error instanceof GpuUnavailableError ? error.reason : 'error';
      const message = error instanceof Error ? error.message : String(error);
      emit({ type: 'gpu', ok: false, reason, message });
      setStatus('unavailable', message, 'no-webgpu');
      return null;
    }
  };

  /**
   * The stored lanes as one pair each (docs/reliability.md): the optimizer state must be bound to its
   * weights and at the lane's step; a mixed pair is refused, naming the lane, rather than resumed wrongly.
   */
  const laneStates = (lanes: readonly LaneCheckpoint[]) => {
    const out: Partial<Record<Method, LaneState>> = {};
    for (const lane of lanes) {
      try {
        const { weights, optimizer } = loadCheckpointPair(lane);
        if (optimizer!.step !== lane.step) throw new Error(`checkpoint: the optimizer state is at step ${optimizer!.step}, the lane at step ${lane.step}`);
        out[lane.method] = { weights, optimizer: optimizer! };
      } catch (error) {
        throw new RunRefusedError(`the ${lane.method} lane's checkpoint of step ${lane.step}: ${(error as Error).message}`);
      }
    }
    return out;
  };

  /** The run's engine from its starting weights (a kept checkpoint, or fresh ones from the preset and the seed) and its stored lanes. */
  const buildEngine = async (device: Gpu, config: RunConfig, lanes: readonly LaneCheckpoint[]): Promise<RunEngine> => {
    const file = config.checkpoint ? await store.loadFile(config.checkpoint) : null;
    if (config.checkpoint && !file) throw new RunRefusedError(`checkpoint ${config.checkpoint} is not stored in this browser: import it again`);
    const weights = file ? loadCheckpoint(file.bytes, { maxVocab: BYTE_VOCAB }) : initWeights(presetModel(config), config.seed);
    const refused = byteVocabularyProblem(weights);
    if (refused) throw new RunRefusedError(refused);
    // createGpuModel throws for what the adapter cannot hold, naming the limit: the caller shows it as the refusal.
    return createRunEngine(device, runSpecOf(config), { weights, resume: laneStates(lanes) });
  };

  const finished = () => !!engine && !!info && info.config.steps > 0 && engine.step >= info.config.steps;

  const progress = (): Progress => {
    const step = engine?.step ?? 0;
    const total = info?.config.steps ?? 0;
    const span = recent.length >= 2 ? (recent[recent.length - 1].at - recent[0].at) / 1000 : 0;
    const stepsPerSec = span > 0 ? (recent.length - 1) / span : 0;
    const tokensPerSec = span > 0 ? recent.slice(1).reduce((s, r) => s + r.tokens, 0) / span : 0;
    const etaSec = total > 0 && stepsPerSec > 0 ? Math.max(0, total - step) / stepsPerSec : null;
    return { step, total, stepsPerSec, tokensPerSec, etaSec };
  };

  const persistRun = async () => {
    if (info) await store.saveRun({ info, playing }).catch(() => undefined);
  };

  /** Every lane's checkpoint, kept in memory (device loss) and in the store with the history (reloads). */
  const checkpoint = async () => {
    const current = engine;
    if (!current || !info) return;
    const lanes = await withGpu(() => current.checkpoint({ run: info!.id }));
    if (current !== engine || !info) return;
    lastCheckpoint = lanes;
    const { step, history: kept } = atCheckpoint(lanes, history);
    info = { ...info, checkpointStep: step };
    const unstored = (error: Error) => emit({ type: 'gpu-error', message: `the checkpoint could not be stored: ${error.message}` });
    await store.saveCheckpoint({ info, playing }, lanes, kept).catch(unstored);
    emit({ type: 'checkpointed', step });
  };

  // Live episode updates: the newest state not sent yet (`events` the episode's own array while it grows), and the timer that sends it.
  type LiveEvent = Extract<RunEvent, { type: 'live' }>;
  let liveUnsent: LiveEvent | null = null;
  let liveTimer: ReturnType<typeof setTimeout> | null = null;
  let lastLivePost = -Infinity;
  const sendLive = () => {
    liveTimer = null;
    if (!liveUnsent) return;
    const event = liveUnsent.done ? liveUnsent : { ...liveUnsent, events: liveUnsent.events.slice() };
    liveUnsent = null;
    lastLivePost = now();
    emit(event);
  };
  /** Sends `event` now, or as the newest state once the live interval has passed since the last one. */
  const postLive = (event: LiveEvent) => {
    liveUnsent = event;
    const wait = lastLivePost + liveInterval - now();
    if (wait <= 0) sendLive();
    else liveTimer ??= setTimeout(sendLive, wait);
  };

  /** One step of every lane; false when the run should stop playing. */
  const stepOnce = async (): Promise<boolean> => {
    const current = engine;
    if (!current || !info) return false;
    cancelled = false;
    // The live episode: who plays it (set per lane) and which one it is (set as each starts).
    const live: Omit<LiveEvent, 'events' | 'done'> = { type: 'live', player: 'expert', purpose: 'train', step: current.step, index: 0, total: 0, id: '' };
    const post = (events: readonly EventJson[], done: boolean) => postLive({ ...live, events: events as EventJson[], done });
    try {
      const steps = await withGpu(() =>
        current.next({
          lane: (method, purpose = 'train') => {
            Object.assign(live, { player: purpose === 'eval' || info!.config.objective === 'rl' ? method : 'expert', purpose });
          },
          watch: {
            start: (index, total, id) => void Object.assign(live, { index, total, id }),
            change: (events) => post(events, false),
            done: (rollout) => post(rollout.events, true),
            cancelled: () => cancelled,
          },
        }),
      );
      if (current !== engine) return false;
      const records = steps.flatMap((s) => (s.record ? [s.record] : []));
      history.push(...records);
      recent.push({ at: now(), tokens: records.reduce((s, r) => s + r.tokens, 0) });
      if (recent.length > 12) recent = recent.slice(-12);
      emit({ type: 'metrics', records, progress: progress() });
      for (const s of steps) {
        const lane = current.lanes.find((l) => l.method === s.method)!;
        emit({ type: 'batch', method: s.method, step: lane.trainer.step, rollouts: s.batch.rollouts.map((r) => ({ id: r.id, reward: r.reward ?? 0, K: r.K, length: r.length })) });
      }
      if (checkpointDue(current.step, info.config.checkpointEvery, finished())) await checkpoint();
      return true;
    } catch (error) {
      if (current !== engine || error instanceof CancelledError) return false;
      // The device went away under the step (its loss may be reported just after the step's error,
      // so wait briefly for it): recovery takes over.
      const device = current.lanes[0].trainer.gpu;
      const lost = () => Promise.race([device.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 250))]);
      if (retired.has(device) || (await lost())) return false;
      playing = false;
      setStatus('paused', error instanceof Error ? error.message : String(error), error instanceof StepFailedError && error.nonFinite ? 'non-finite' : 'step-error');
      await persistRun();
      return false;
    }
  };

  const play = () => {
    if (!engine) return;
    if (finished()) return setStatus('done');
    playing = true;
    setStatus('running');
    void persistRun();
    loop ??= (async () => {
      recent = [];
      while (playing && engine && !finished()) {
        if (!(await stepOnce())) break;
      }
      if (engine && finished()) {
        playing = false;
        setStatus('done');
        await persistRun();
      } else if (engine && !playing && (status.phase === 'running' || status.phase === 'pausing')) {
        setStatus('paused');
      }
    })().finally(() => (loop = null));
  };

  /** Stops the loop, frees the run's GPU objects and forgets the run (its stored record too). */
  const stopRun = async () => {
    playing = false;
    cancelled = true;
    await loop;
    if (liveTimer !== null) clearTimeout(liveTimer);
    liveTimer = null;
    liveUnsent = null;
    const old = engine;
    engine = null;
    if (old) await withGpu(async () => old.destroy());
    info = null;
    history = [];
    lastCheckpoint = [];
    await store.clearRun().catch(() => undefined);
    emit({ type: 'run', run: null, history: [] });
  };

  const start = async (config: RunConfig, paused: boolean) => {
    await stopRun();
    const problems = configProblems(config);
    if (problems.length) return setStatus('refused', problems.join('; '), 'refused');
    setStatus('preparing');
    const device = await ensureGpu();
    if (!device) return;
    let created: RunEngine | null = null;
    try {
      created = await buildEngine(device, config, []);
      await created.preflight();
    } catch (error) {
      created?.destroy();
      if (retired.has(device)) return;
      return setStatus('refused', error instanceof Error ? error.message : String(error), 'refused');
    }
    engine = created;
    info = { id: `run-${Date.now().toString(36)}`, config, model: created.model, createdAt: Date.now(), checkpointStep: 0 };
    playing = !paused;
    await persistRun();
    emit({ type: 'run', run: info, history });
    if (paused) setStatus('paused');
    else play();
  };

  /** Restores the stored run (on hello) or the current one on a new device: from its last checkpoint. */
  const restore = async (stored: Omit<RestoredRun, 'playing'>, resume: boolean): Promise<boolean> => {
    const device = await ensureGpu();
    if (!device) return false;
    const missing = stored.info.checkpointStep > 0 ? stored.info.config.methods.filter((m) => !stored.lanes.some((l) => l.method === m)) : [];
    try {
      if (missing.length) throw new Error(`its checkpoint of step ${stored.info.checkpointStep} has no ${missing.join(', ')} lane`);
      engine = await buildEngine(device, stored.info.config, stored.lanes);
    } catch (error) {
      setStatus('refused', (error as Error).message, 'not-restored');
      return false;
    }
    const kept = atCheckpoint(stored.lanes, stored.history);
    info = { ...stored.info, checkpointStep: kept.step };
    history = kept.history;
    lastCheckpoint = stored.lanes.slice();
    emit({ type: 'run', run: info, history });
    if (resume) play();
    else setStatus(finished() ? 'done' : 'paused');
    return true;
  };

  const hello = async () => {
    await deps.lock?.(() => setStatus('unavailable', 'another tab of the workbench is training (one engine per browser profile): this one starts when it closes', 'busy'));
    if (!(await ensureGpu())) return;
    const stored = await store.loadRun().catch(() => null);
    if (!stored) {
      emit({ type: 'run', run: null, history: [] });
      setStatus('idle');
      return;
    }
    setStatus('preparing');
    await restore(stored, stored.playing);
  };

  const onDeviceLost = (lost: Gpu, message: string) => {
    if (gpu !== lost) return;
    retired.add(lost);
    gpu = null;
    emit({ type: 'device-lost', message });
    const wasPlaying = playing;
    serial(async () => {
      setStatus('recovering', message, 'device');
      playing = false;
      cancelled = true;
      // A read back on a lost device rejects; should one hang instead, recovery does not wait on it.
      await Promise.race([loop, new Promise((r) => setTimeout(r, 3000))]);
      const old = engine;
      engine = null;
      // The old device's buffers are gone with it; destroying them is harmless and frees the objects.
      old?.destroy();
      gpuTail = Promise.resolve();
      if (!info) {
        await ensureGpu();
        setStatus('idle', `recovered from a lost device: ${message}`, 'device');
        return;
      }
      let attempts = 0;
      while (!(await ensureGpu()) && attempts++ < 3) await new Promise((r) => setTimeout(r, 500 * attempts));
      if (!gpu) return;
      if (!(await restore({ info, lanes: lastCheckpoint, history }, false))) return;
      emit({ type: 'recovered', step: engine!.step, adapter: adapterLine(gpu.info) });
      if (wasPlaying) play();
    });
  };

  const laneOf = (method: Method) => {
    const lane = engine?.lanes.find((l) => l.method === method);
    if (!lane) throw new Error(`no lane trains ${method}`);
    return lane;
  };

  const laneCheckpoint = async (method: Method) => {
    const lane = laneOf(method);
    const bytes = await withGpu(() => lane.trainer.checkpoint({ run: info?.id ?? '', method }));
    return { lane, bytes, name: `${info?.id ?? 'run'}-${method}-step${lane.trainer.step}` };
  };

  const batchRollout = (method: Method, id: string) => {
    const lane = laneOf(method);
    const played = lane.last?.played;
    const index = played?.rollouts.findIndex((r) => r.id === id) ?? -1;
    if (!played || index < 0) throw new Error(`rollout ${id} is not in the last batch of ${method}`);
    return { json: played.json[index], rollout: played.rollouts[index] };
  };

  return {
    /** The page is up: probe the device, restore a stored run (which resumes if it was playing). */
    hello: () => serial(hello),
    /** A new run from `config` (replacing any current one); it plays unless `paused`. */
    start: (config: RunConfig, paused = false) => serial(() => start(config, paused)),
    play: () => serial(async () => play()),
    pause() {
      if (!playing) return;
      playing = false;
      cancelled = true;
      setStatus(loop ? 'pausing' : 'paused');
      void persistRun();
    },
    /** One step, then paused (a paused run, or a new one from `config` when there is none). */
    step(config?: RunConfig) {
      serial(async () => {
        if (!engine && config) await start(config, true);
        if (!engine || playing || loop || finished()) return;
        setStatus('running');
        if (await stepOnce()) setStatus(finished() ? 'done' : 'paused');
      });
    },
    /** Ends the current run and forgets it (its stored checkpoints and history too). */
    reset() {
      cancelled = true;
      playing = false;
      serial(async () => {
        await stopRun();
        setStatus(gpu ? 'idle' : status.phase === 'unavailable' ? 'unavailable' : 'idle');
      });
    },
    /** A lane's current weights as a checkpoint file and its optimizer state. */
    async exportCheckpoint(method: Method) {
      const { name, bytes } = await laneCheckpoint(method);
      return { name, ...bytes };
    },
    /** Keeps a lane's current weights as a named checkpoint, to start another run from. */
    async forkCheckpoint(method: Method) {
      const { lane, name, bytes } = await laneCheckpoint(method);
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
    rollout: async (method: Method, id: string): Promise<RolloutJson> => batchRollout(method, id).json,
    /** Every method's log-probability of every target of a rollout of the last batch, under `method`'s weights. */
    async score(method: Method, id: string): Promise<ScoredTargets> {
      const { rollout } = batchRollout(method, id);
      const current = engine!;
      const evaluation = await withGpu(() => current.score(method, rollout));
      const ids = Array.from(rollout.targets);
      const scores: ScoredTargets = { ids, rollout: ids.map((t) => (Number.isFinite(rollout.logprobs[t]) ? rollout.logprobs[t] : null)), methods: {} };
      for (const [m, perRollout] of Object.entries(evaluation)) scores.methods[m as Method] = ids.map((t) => perRollout[0].get(t) ?? null);
      return scores;
    },
    /** Test hook: destroys the device as a driver reset would (under the run, not through reset). */
    loseDevice() {
      gpu?.device.destroy();
    },
    /** Resolves once the commands queued so far and the step loop have finished. */
    async settled() {
      for (let tail = commandTail; ; tail = commandTail) {
        await tail;
        await loop;
        if (tail === commandTail && !loop) return;
      }
    },
  };
}
