// Messages between the page and the training worker, which owns the WebGPU device, the run and its
// persistence. The page sends commands and never awaits the GPU; the worker answers with the run's
// state as it changes: status, metric records (batched per step), checkpoints, the episode being
// played (live events), and replies to the few requests that carry a `job` (exports, scores).

import type { ModelConfig } from '../../model/config';
import type { Method } from '../../plan/types';
import type { EventJson, RolloutJson } from '../../rollout/format';
import type { RunConfig } from '../train/engine/config';
import type { MetricRecord } from '../train/engine/run';

export type TrainRequest =
  /** The page is up: probe WebGPU, restore a stored run (which resumes if it was playing). */
  | { type: 'hello' }
  /** A new run from `config` (replacing any current one); it plays unless `paused`. */
  | { type: 'start'; config: RunConfig; paused?: boolean }
  | { type: 'play' }
  | { type: 'pause' }
  /** One step, then paused (a paused run, or a new one from `config` when there is none). */
  | { type: 'step'; config?: RunConfig }
  /** Ends the current run and forgets it (its stored checkpoints and history too). */
  | { type: 'reset' }
  /** Keeps a GPT-2 checkpoint under `name`, for configs whose `checkpoint` names it. */
  | { type: 'import-checkpoint'; job: number; name: string; bytes: Uint8Array }
  /** A lane's current weights as a checkpoint file (and its optimizer state). */
  | { type: 'export-checkpoint'; job: number; method: Method }
  /** Keeps a lane's current weights as a named checkpoint, to start another run from. */
  | { type: 'fork-checkpoint'; job: number; method: Method }
  /** A rollout of a lane's last batch. */
  | { type: 'rollout'; job: number; method: Method; id: string }
  /** Every method's log-probability of every target of a rollout of the last batch, under `method`'s weights. */
  | { type: 'score'; job: number; method: Method; id: string }
  /** Test hook: destroys the device as a driver reset would. */
  | { type: 'lose-device' };

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
  cause?: 'non-finite' | 'step-error' | 'refused' | 'no-webgpu' | 'device' | 'busy';
}

export interface RunInfo {
  id: string;
  config: RunConfig;
  model: ModelConfig;
  createdAt: number;
  /** Step of the last checkpoint kept in IndexedDB (0: none yet). */
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

export interface BatchEntry {
  id: string;
  reward: number;
  K: number;
  length: number;
}

export interface ScoredTargets {
  /** Target ids of the rollout, ascending. */
  ids: number[];
  /** The rollout's own logprob per target (null where it has none). */
  rollout: (number | null)[];
  /** Per sequence method, its logprob per target (null where the method does not score it). */
  methods: Partial<Record<Method, (number | null)[]>>;
}

export type TrainReply =
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
   * At most one per 100 ms, the newest state: an episode may start before the last one's end was sent.
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
  | { type: 'checkpoint-file'; job: number; name: string; weights: Uint8Array; optimizer: Uint8Array }
  | { type: 'forked'; job: number; name: string; step: number }
  | { type: 'imported'; job: number; name: string; model: ModelConfig }
  | { type: 'rollout'; job: number; rollout: RolloutJson }
  | { type: 'scores'; job: number; method: Method; id: string; scores: ScoredTargets }
  | { type: 'failed'; job: number; message: string }
  /** A GPU validation or memory error the worker did not expect (shown, not fatal by itself). */
  | { type: 'gpu-error'; message: string };
