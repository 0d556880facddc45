// The run controller's data: what it reports (RunEvent and the types in it), what it needs from its
// host (ControllerDeps, RunStore), and the one plain record of its state (ControllerState) that the
// controller's modules (device, persistence, loop, live view) read and write. No module keeps state of its own.

import type { Gpu } from '../gpu/runtime/device';
import type { ModelConfig } from '../model/config';
import type { Method } from '../plan/types';
import type { EventJson } from '../rollout/format';
import type { Rollout } from '../rollout/rollout';
import type { RunConfig } from './config';
import type { LaneCheckpoint, MetricRecord, RunEngine } from './engine';

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

/** The live episode update the controller reports. */
export type LiveEvent = Extract<RunEvent, { type: 'live' }>;

/** Live episode updates: the newest state not sent yet (`events` the episode's own array while it grows), and the timer that sends it. */
export interface LiveState {
  unsent: LiveEvent | null;
  timer: ReturnType<typeof setTimeout> | null;
  lastPost: number;
}

/** Everything a run controller knows; its modules are functions of this record. */
export interface ControllerState {
  deps: ControllerDeps;
  liveInterval: number;
  gpu: Gpu | null;
  /** Devices this controller destroys itself (reset, replacement) are not losses. */
  retired: WeakSet<Gpu>;
  engine: RunEngine | null;
  info: RunInfo | null;
  history: MetricRecord[];
  /** Every lane's last checkpoint, kept in memory to restore the run on a new device. */
  lastCheckpoint: LaneCheckpoint[];
  status: RunStatus;
  playing: boolean;
  /** Set by pause/reset: the step in flight stops between episodes. */
  cancelled: boolean;
  loop: Promise<void> | null;
  /** Recent step completions (wall ms, tokens) for the rates. */
  recent: { at: number; tokens: number }[];
  /** GPU work one at a time: steps, checkpoints, exports and scores never interleave. */
  gpuTail: Promise<unknown>;
  /** Commands that replace the run run one at a time. */
  commandTail: Promise<unknown>;
  live: LiveState;
}

export function createControllerState(deps: ControllerDeps): ControllerState {
  return {
    deps,
    liveInterval: deps.liveIntervalMs ?? 100,
    gpu: null,
    retired: new WeakSet<Gpu>(),
    engine: null,
    info: null,
    history: [],
    lastCheckpoint: [],
    status: { phase: 'idle' },
    playing: false,
    cancelled: false,
    loop: null,
    recent: [],
    gpuTail: Promise.resolve(),
    commandTail: Promise.resolve(),
    live: { unsent: null, timer: null, lastPost: -Infinity },
  };
}

export function setStatus(run: ControllerState, phase: RunPhase, reason?: string, cause?: RunStatus['cause']): void {
  run.status = reason ? { phase, reason, cause } : { phase };
  run.deps.emit({ type: 'status', status: run.status });
}

/** Queues a command that replaces the run: one at a time; a failure pauses the run with the reason. */
export function serial(run: ControllerState, work: () => Promise<void>): void {
  run.commandTail = run.commandTail.then(work, work).catch((error: unknown) => {
    run.playing = false;
    setStatus(run, run.engine ? 'paused' : 'idle', error instanceof Error ? error.message : String(error), 'step-error');
  });
}

/** Whether a fixed-length run reached its last step. */
export function finished(run: ControllerState): boolean {
  return !!run.engine && !!run.info && run.info.config.steps > 0 && run.engine.step >= run.info.config.steps;
}
