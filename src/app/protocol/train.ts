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

/** Each request calls the run controller's method of its name (src/run/controller.ts says what each does). */
export type TrainRequest =
  | { type: 'hello' }
  | { type: 'start'; config: RunConfig; paused?: boolean }
  | { type: 'play' }
  | { type: 'pause' }
  | { type: 'step'; config?: RunConfig }
  | { type: 'reset' }
  | { type: 'import-checkpoint'; job: number; name: string; bytes: Uint8Array }
  | { type: 'export-checkpoint'; job: number; method: Method }
  | { type: 'fork-checkpoint'; job: number; method: Method }
  | { type: 'rollout'; job: number; method: Method; id: string }
  | { type: 'score'; job: number; method: Method; id: string };

/** The controller's events, and the answers to requests with a job. */
export type TrainReply =
  | RunEvent
  | { type: 'checkpoint-file'; job: number; name: string; weights: Uint8Array; optimizer: Uint8Array }
  | { type: 'forked'; job: number; name: string; step: number }
  | { type: 'imported'; job: number; name: string; model: ModelConfig }
  | { type: 'rollout'; job: number; rollout: RolloutJson }
  | { type: 'scores'; job: number; method: Method; id: string; scores: ScoredTargets }
  | { type: 'failed'; job: number; message: string };
