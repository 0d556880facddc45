// Messages between the page and the training worker, which owns the WebGPU device, the run and its
// persistence. The page sends commands and never awaits the GPU; the worker answers with the run's
// state as it changes: status, metric records (batched per step), checkpoints, the episode being
// played (live events), and replies to the few requests that carry a `job` (exports, scores).

import type { ModelConfig } from '../../model/config';
import type { Method } from '../../plan/types';
import type { RolloutJson } from '../../rollout/format';
import type { RunConfig } from '../../run/config';
import type { RunEvent, ScoredTargets } from '../../run/controller';

// The run's state types belong to the run controller (src/run/controller.ts), which emits them.
export type { BatchEntry, Progress, RunInfo, RunPhase, RunStatus, ScoredTargets } from '../../run/controller';

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

/** The controller's events, and the answers to requests with a job. */
export type TrainReply =
  | RunEvent
  | { type: 'checkpoint-file'; job: number; name: string; weights: Uint8Array; optimizer: Uint8Array }
  | { type: 'forked'; job: number; name: string; step: number }
  | { type: 'imported'; job: number; name: string; model: ModelConfig }
  | { type: 'rollout'; job: number; rollout: RolloutJson }
  | { type: 'scores'; job: number; method: Method; id: string; scores: ScoredTargets }
  | { type: 'failed'; job: number; message: string };
