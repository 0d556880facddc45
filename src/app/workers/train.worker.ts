// The training worker: owns the WebGPU device, the run engine (one trainer per method) and the
// run's persistence, so the page never waits on the GPU. Commands arrive as TrainRequest messages;
// the state goes back as TrainReply messages (trainProtocol.ts). The step loop yields between
// steps, so pause, reset and requests are handled while a run plays. A lost device is replaced and
// the run restored from its last checkpoint; a non-finite step pauses the run with the reason.
/// <reference lib="webworker" />
import { adapterLine, createGpu, GpuUnavailableError, type Gpu } from '../../gpu/device';
import { loadCheckpoint, loadOptimizerState } from '../../model/checkpoint';
import { initWeights, type ModelWeights } from '../../model/params';
import { BYTE_VOCAB } from '../../rollout/tokenizer';
import type { Method } from '../../plan/types';
import type { EventJson, RolloutJson } from '../../rollout/format';
import { configProblems, presetModel, type RunConfig } from '../train/engine/config';
import { laneModelPolicy } from '../train/engine/modelPolicy';
import { CancelledError } from '../train/engine/rollouts';
import { createRunEngine, RunRefusedError, StepFailedError, type LaneCheckpoint, type LaneState, type MetricRecord, type RunEngine } from '../train/engine/run';
import { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun } from '../persist/trainRun';
import type { Progress, RunInfo, RunPhase, RunStatus, ScoredTargets, TrainReply, TrainRequest } from '../protocol/train';

declare const self: DedicatedWorkerGlobalScope;

function post(reply: TrainReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

const now = () => performance.now();
/**
 * Live episode updates at most this often: each one re-renders the live panel (and may start a
 * frame) on the page's main thread. Changes within the interval go out together, as the newest
 * state at its end (an episode that ended within it may be skipped for the next one's start).
 */
const LIVE_INTERVAL_MS = 100;

let gpu: Gpu | null = null;
/** Devices this worker destroys itself (reset, replacement) are not losses. */
const retired = new WeakSet<Gpu>();
let engine: RunEngine | null = null;
let info: RunInfo | null = null;
let history: MetricRecord[] = [];
let lastCheckpoint: LaneCheckpoint[] = [];
let status: RunStatus = { phase: 'idle' };
let playing = false;
/** Set by pause/reset: the step in flight stops between episodes. */
let cancelled = false;
/** The step loop while it runs. */
let loop: Promise<void> | null = null;
/** Recent step completions (wall ms, tokens) for the rates. */
let recent: { at: number; tokens: number }[] = [];

/** GPU work one at a time: steps, checkpoints, exports and scores never interleave. */
let gpuTail: Promise<unknown> = Promise.resolve();
function withGpu<T>(work: () => Promise<T>): Promise<T> {
  const run = gpuTail.then(work, work);
  gpuTail = run.catch(() => undefined);
  return run;
}

/** Commands that replace the run run one at a time. */
let commandTail: Promise<unknown> = Promise.resolve();
function serial(work: () => Promise<void>): void {
  commandTail = commandTail.then(work, work).catch((error: unknown) => reportFailure(error));
}

function setStatus(phase: RunPhase, reason?: string, cause?: RunStatus['cause']): void {
  status = reason ? { phase, reason, cause } : { phase };
  post({ type: 'status', status });
}

function reportFailure(error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  playing = false;
  setStatus(engine ? 'paused' : 'idle', message, 'step-error');
}

async function ensureGpu(): Promise<Gpu | null> {
  if (gpu) return gpu;
  try {
    const created = await createGpu();
    gpu = created;
    post({ type: 'gpu', ok: true, adapter: adapterLine(created.info), software: created.info.isSoftware });
    created.onEvent((event) => {
      if (event.type === 'uncaptured-error') post({ type: 'gpu-error', message: `${event.kind}: ${event.message}` });
    });
    void created.lost.then((event) => {
      if (!retired.has(created)) onDeviceLost(created, event.message || `the device was lost (${event.reason})`);
    });
    return created;
  } catch (error) {
    const reason = error instanceof GpuUnavailableError ? error.reason : 'error';
    const message = error instanceof Error ? error.message : String(error);
    post({ type: 'gpu', ok: false, reason, message });
    setStatus('unavailable', message, 'no-webgpu');
    return null;
  }
}

function retireGpu(): void {
  if (!gpu) return;
  retired.add(gpu);
  gpu.destroy();
  gpu = null;
}

/** The run's starting weights: a kept checkpoint, or fresh ones from the preset and the seed. */
async function startingWeights(config: RunConfig): Promise<ModelWeights> {
  if (!config.checkpoint) return initWeights(presetModel(config), config.seed);
  const file = await loadFile(config.checkpoint);
  if (!file) throw new RunRefusedError(`checkpoint ${config.checkpoint} is not stored in this browser: import it again`);
  return loadCheckpoint(file.bytes, { maxVocab: BYTE_VOCAB });
}

function laneStates(lanes: readonly LaneCheckpoint[]): Partial<Record<Method, LaneState>> {
  const out: Partial<Record<Method, LaneState>> = {};
  for (const lane of lanes) {
    const weights = loadCheckpoint(lane.weights);
    out[lane.method] = { weights, optimizer: loadOptimizerState(lane.optimizer, weights.config) };
  }
  return out;
}

async function buildEngine(device: Gpu, config: RunConfig, lanes: readonly LaneCheckpoint[]): Promise<RunEngine> {
  const weights = await startingWeights(config);
  if (weights.config.vocabSize !== BYTE_VOCAB) {
    throw new RunRefusedError(`the environments speak the byte tokenizer (${BYTE_VOCAB} tokens); this checkpoint has a vocabulary of ${weights.config.vocabSize}`);
  }
  try {
    return createRunEngine(device, config, { weights, resume: laneStates(lanes), lanePolicy: laneModelPolicy });
  } catch (error) {
    if (error instanceof RunRefusedError) throw error;
    // createGpuModel refuses what the adapter cannot hold, naming the limit.
    throw new RunRefusedError((error as Error).message);
  }
}

function finished(): boolean {
  return !!engine && !!info && info.config.steps > 0 && engine.step >= info.config.steps;
}

function progress(): Progress {
  const step = engine?.step ?? 0;
  const total = info?.config.steps ?? 0;
  let stepsPerSec = 0;
  let tokensPerSec = 0;
  if (recent.length >= 2) {
    const span = (recent[recent.length - 1].at - recent[0].at) / 1000;
    const tokens = recent.slice(1).reduce((s, r) => s + r.tokens, 0);
    if (span > 0) {
      stepsPerSec = (recent.length - 1) / span;
      tokensPerSec = tokens / span;
    }
  }
  const etaSec = total > 0 && stepsPerSec > 0 ? Math.max(0, total - step) / stepsPerSec : null;
  return { step, total, stepsPerSec, tokensPerSec, etaSec };
}

async function persistRun(): Promise<void> {
  if (!info) return;
  await saveRun({ info, playing }).catch(() => undefined);
}

/** Every lane's checkpoint, kept in memory (device loss) and in IndexedDB with the history (reloads). */
async function checkpoint(): Promise<void> {
  if (!engine || !info) return;
  const current = engine;
  const lanes = await withGpu(() => current.checkpoint({ run: info!.id }));
  if (current !== engine || !info) return;
  lastCheckpoint = lanes;
  const step = Math.min(...lanes.map((l) => l.step));
  info = { ...info, checkpointStep: step };
  const upTo = new Map(lanes.map((l) => [l.method, l.step]));
  const kept = history.filter((r) => r.step <= (upTo.get(r.method) ?? 0));
  try {
    await saveCheckpoint({ info, playing }, lanes, kept);
  } catch (error) {
    post({ type: 'gpu-error', message: `the checkpoint could not be stored in IndexedDB: ${(error as Error).message}` });
  }
  post({ type: 'checkpointed', step });
}

type LiveReply = Extract<TrainReply, { type: 'live' }>;

/** The newest live state not sent yet (`events` the episode's own array while it grows), and the timer that sends it. */
let liveUnsent: LiveReply | null = null;
let liveTimer: ReturnType<typeof setTimeout> | null = null;
let lastLivePost = -Infinity;

function sendLive(): void {
  liveTimer = null;
  if (!liveUnsent) return;
  const reply = liveUnsent.done ? liveUnsent : { ...liveUnsent, events: liveUnsent.events.slice() };
  liveUnsent = null;
  lastLivePost = now();
  post(reply);
}

/** Sends `reply` now, or as the newest state when LIVE_INTERVAL_MS has passed since the last one. */
function postLive(reply: LiveReply): void {
  liveUnsent = reply;
  const wait = lastLivePost + LIVE_INTERVAL_MS - now();
  if (wait <= 0) sendLive();
  else liveTimer ??= setTimeout(sendLive, wait);
}

/** Forgets the live state waiting to be sent (the run it belongs to ended). */
function dropLive(): void {
  if (liveTimer !== null) clearTimeout(liveTimer);
  liveTimer = null;
  liveUnsent = null;
}

function watcher(step: number) {
  let player: Method | 'expert' = 'expert';
  let purpose: 'train' | 'eval' = 'train';
  let index = 0;
  let total = 0;
  let id = '';
  const live = (events: readonly EventJson[], done: boolean) => postLive({ type: 'live', player, purpose, step, index, total, id, events: events as EventJson[], done });
  return {
    setPlayer(p: Method | 'expert', phase: 'train' | 'eval') {
      player = p;
      purpose = phase;
    },
    watch: {
      start(i: number, n: number, rolloutId: string) {
        index = i;
        total = n;
        id = rolloutId;
      },
      change: (events: readonly EventJson[]) => live(events, false),
      done: (rollout: RolloutJson) => live(rollout.events, true),
      cancelled: () => cancelled,
    },
  };
}

/** One step of every lane; false when the run should stop playing. */
async function stepOnce(): Promise<boolean> {
  const current = engine;
  if (!current || !info) return false;
  cancelled = false;
  const step = current.step;
  const w = watcher(step);
  try {
    const records = await withGpu(() =>
      current.next({
        lane: (method, phase = 'train') => w.setPlayer(phase === 'eval' || info!.config.objective === 'rl' ? method : 'expert', phase),
        watch: w.watch,
      }),
    );
    if (current !== engine) return false;
    history.push(...records);
    recent.push({ at: now(), tokens: records.reduce((s, r) => s + r.tokens, 0) });
    if (recent.length > 12) recent = recent.slice(-12);
    post({ type: 'metrics', records, progress: progress() });
    for (const lane of current.lanes) {
      if (!lane.last || !records.some((r) => r.method === lane.method)) continue;
      post({
        type: 'batch',
        method: lane.method,
        step: lane.trainer.step,
        rollouts: lane.last.rollouts.map((r) => ({ id: r.id, reward: r.reward ?? 0, K: r.K, length: r.length })),
      });
    }
    if (current.step % info.config.checkpointEvery === 0 || finished()) await checkpoint();
    return true;
  } catch (error) {
    if (current !== engine || error instanceof CancelledError) return false;
    // The device went away under the step (its loss may be reported just after the step's error):
    // recovery takes over.
    if (await deviceLost(current.lanes[0].trainer.gpu)) return false;
    playing = false;
    if (error instanceof StepFailedError) setStatus('paused', error.message, error.nonFinite ? 'non-finite' : 'step-error');
    else setStatus('paused', error instanceof Error ? error.message : String(error), 'step-error');
    await persistRun();
    return false;
  }
}

/** Whether `device` is lost, waiting briefly for a loss that is being reported. */
async function deviceLost(device: Gpu): Promise<boolean> {
  if (retired.has(device)) return true;
  return Promise.race([device.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 250))]);
}

function startLoop(): void {
  if (loop || !engine) return;
  loop = (async () => {
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
  })().finally(() => {
    loop = null;
  });
}

function play(): void {
  if (!engine) return;
  if (finished()) {
    setStatus('done');
    return;
  }
  playing = true;
  setStatus('running');
  void persistRun();
  startLoop();
}

async function pause(): Promise<void> {
  if (!playing) return;
  playing = false;
  cancelled = true;
  setStatus(loop ? 'pausing' : 'paused');
  await persistRun();
}

/** Stops the loop and frees the run's GPU objects; the stored run stays unless `forget`. */
async function stopRun(forget: boolean): Promise<void> {
  playing = false;
  cancelled = true;
  await loop;
  dropLive();
  const old = engine;
  engine = null;
  if (old) await withGpu(async () => old.destroy());
  if (forget) {
    info = null;
    history = [];
    lastCheckpoint = [];
    await clearRun().catch(() => undefined);
  }
}

async function start(config: RunConfig, paused: boolean): Promise<void> {
  await stopRun(true);
  post({ type: 'run', run: null, history: [] });
  const problems = configProblems(config);
  if (problems.length) {
    setStatus('refused', problems.join('; '), 'refused');
    return;
  }
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
    setStatus('refused', error instanceof Error ? error.message : String(error), 'refused');
    return;
  }
  engine = created;
  info = { id: `run-${Date.now().toString(36)}`, config, model: created.model, createdAt: Date.now(), checkpointStep: 0 };
  history = [];
  playing = !paused;
  await persistRun();
  post({ type: 'run', run: info, history });
  if (paused) setStatus('paused');
  else play();
}

/** Restores the stored run (on hello) or the current one on a new device: from its last checkpoint. */
async function restore(stored: { info: RunInfo; lanes: LaneCheckpoint[]; history: MetricRecord[] }, resume: boolean): Promise<boolean> {
  const device = await ensureGpu();
  if (!device) return false;
  try {
    engine = await buildEngine(device, stored.info.config, stored.lanes);
  } catch (error) {
    setStatus('refused', `the stored run cannot be restored: ${(error as Error).message}`, 'refused');
    return false;
  }
  const upTo = new Map(stored.lanes.map((l) => [l.method, l.step]));
  info = { ...stored.info, checkpointStep: stored.lanes.length ? Math.min(...stored.lanes.map((l) => l.step)) : 0 };
  history = stored.history.filter((r) => r.step <= (upTo.get(r.method) ?? 0));
  lastCheckpoint = stored.lanes.slice();
  post({ type: 'run', run: info, history });
  if (resume) play();
  else setStatus(finished() ? 'done' : 'paused');
  return true;
}

/**
 * One training engine per browser profile: the run in IndexedDB is one, and two tabs stepping it
 * would overwrite each other's checkpoints. The lock is held for the worker's life; a page that
 * reloads waits briefly for its predecessor's worker to let go, another tab waits until it closes.
 */
async function holdEngineLock(): Promise<void> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (!locks) return;
  await new Promise<void>((resolve) => {
    const waiting = setTimeout(
      () => setStatus('unavailable', 'another tab of the workbench is training (one engine per browser profile): this one starts when it closes', 'busy'),
      3000,
    );
    void locks.request('memorywalker-train-engine', () => {
      clearTimeout(waiting);
      resolve();
      return new Promise<void>(() => undefined);
    });
  });
}

async function hello(): Promise<void> {
  await holdEngineLock();
  const device = await ensureGpu();
  if (!device) return;
  const stored = await loadRun().catch(() => null);
  if (!stored) {
    post({ type: 'run', run: null, history: [] });
    setStatus('idle');
    return;
  }
  setStatus('preparing');
  await restore(stored, stored.playing);
}

function onDeviceLost(lost: Gpu, message: string): void {
  if (gpu !== lost) return;
  retired.add(lost);
  gpu = null;
  post({ type: 'device-lost', message });
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
    const ok = await restore({ info, lanes: lastCheckpoint, history }, false);
    if (!ok) return;
    post({ type: 'recovered', step: engine!.step, adapter: adapterLine(gpu.info) });
    if (wasPlaying) play();
  });
}

async function laneOf(method: Method) {
  const lane = engine?.lanes.find((l) => l.method === method);
  if (!lane) throw new Error(`no lane trains ${method}`);
  return lane;
}

async function exportCheckpoint(job: number, method: Method): Promise<void> {
  const lane = await laneOf(method);
  const bytes = await withGpu(() => lane.trainer.checkpoint({ run: info?.id ?? '', method }));
  const name = `${info?.id ?? 'run'}-${method}-step${lane.trainer.step}`;
  post({ type: 'checkpoint-file', job, name, weights: bytes.weights, optimizer: bytes.optimizer }, [bytes.weights.buffer as ArrayBuffer, bytes.optimizer.buffer as ArrayBuffer]);
}

async function forkCheckpoint(job: number, method: Method): Promise<void> {
  const lane = await laneOf(method);
  const bytes = await withGpu(() => lane.trainer.checkpoint({ run: info?.id ?? '', method }));
  const name = `${info?.id ?? 'run'}-${method}-step${lane.trainer.step}.safetensors`;
  await saveFile({ name, bytes: bytes.weights, model: lane.trainer.model.config, savedAt: Date.now() });
  post({ type: 'forked', job, name, step: lane.trainer.step });
}

async function importCheckpoint(job: number, name: string, bytes: Uint8Array): Promise<void> {
  const weights = loadCheckpoint(bytes, { maxVocab: BYTE_VOCAB });
  if (weights.config.vocabSize !== BYTE_VOCAB) {
    throw new Error(`${name}: the environments speak the byte tokenizer (${BYTE_VOCAB} tokens); this checkpoint has a vocabulary of ${weights.config.vocabSize}`);
  }
  await saveFile({ name, bytes, model: weights.config, savedAt: Date.now() });
  post({ type: 'imported', job, name, model: weights.config });
}

async function batchRollout(method: Method, id: string) {
  const lane = await laneOf(method);
  const index = lane.last?.rollouts.findIndex((r) => r.id === id) ?? -1;
  if (!lane.last || index < 0) throw new Error(`rollout ${id} is not in the last batch of ${method}`);
  return { lane, json: lane.last.json[index], rollout: lane.last.rollouts[index] };
}

async function score(job: number, method: Method, id: string): Promise<void> {
  const { rollout } = await batchRollout(method, id);
  const current = engine!;
  const evaluation = await withGpu(() => current.score(method, rollout));
  const ids = Array.from(rollout.targets);
  const scores: ScoredTargets = {
    ids,
    rollout: ids.map((t) => (Number.isFinite(rollout.logprobs[t]) ? rollout.logprobs[t] : null)),
    methods: {},
  };
  for (const [m, perRollout] of Object.entries(evaluation)) {
    const map = perRollout[0];
    scores.methods[m as Method] = ids.map((t) => map.get(t) ?? null);
  }
  post({ type: 'scores', job, method, id, scores });
}

/** Requests with a job answer `failed` with the reason instead of their reply. */
function answer(job: number, work: () => Promise<void>): void {
  work().catch((error: unknown) => post({ type: 'failed', job, message: error instanceof Error ? error.message : String(error) }));
}

self.onmessage = (event: MessageEvent<TrainRequest>) => {
  const request = event.data;
  switch (request.type) {
    case 'hello':
      serial(hello);
      break;
    case 'start':
      serial(() => start(request.config, !!request.paused));
      break;
    case 'play':
      serial(async () => play());
      break;
    case 'pause':
      void pause();
      break;
    case 'step':
      serial(async () => {
        if (!engine && request.config) await start(request.config, true);
        if (!engine || playing || loop || finished()) return;
        setStatus('running');
        const ok = await stepOnce();
        if (ok) setStatus(finished() ? 'done' : 'paused');
      });
      break;
    case 'reset':
      cancelled = true;
      playing = false;
      serial(async () => {
        await stopRun(true);
        post({ type: 'run', run: null, history: [] });
        setStatus(gpu ? 'idle' : status.phase === 'unavailable' ? 'unavailable' : 'idle');
      });
      break;
    case 'import-checkpoint':
      answer(request.job, () => importCheckpoint(request.job, request.name, request.bytes));
      break;
    case 'export-checkpoint':
      answer(request.job, () => exportCheckpoint(request.job, request.method));
      break;
    case 'fork-checkpoint':
      answer(request.job, () => forkCheckpoint(request.job, request.method));
      break;
    case 'rollout':
      answer(request.job, async () => post({ type: 'rollout', job: request.job, rollout: (await batchRollout(request.method, request.id)).json }));
      break;
    case 'score':
      answer(request.job, () => score(request.job, request.method, request.id));
      break;
    case 'lose-device':
      // As a driver reset would: the device goes away under the run, not through reset.
      gpu?.device.destroy();
      break;
  }
};
