// Where a run's batches come from: a file's rollouts through seeded epochs, or episodes played before
// each step, by the scripted expert (one batch per step, every lane trains on it) or by a lane's own
// model. Plain data (BatchSource) and the function that draws a lane's batch from it (drawBatch).

import { createEnv } from '../harness/env';
import { createExpertPolicy } from '../harness/policies/expert';
import type { SamplingOptions } from '../harness/policies/model';
import type { Method } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import type { ConditioningTree } from '../tree/types';
import { playBatch, type EpisodeWatch, type PlaySpec, type PlayedBatch, type Player } from './play';
import { batchIndices, type Order } from './seeds';

/** Where a run's rollouts come from. */
export type RolloutSource =
  /** A file's rollouts and their trees, B per step through seeded epochs (batchIndices). */
  | { kind: 'file'; rollouts: readonly Rollout[]; trees: readonly ConditioningTree[]; batch: number; order: Order; seed: number }
  /**
   * Episodes played before each step: by the scripted expert (one batch per step, shared by every
   * lane) or by each lane's model as it is then (on-policy, sampled as `sampling` says). `fit`: the
   * methods every trained rollout must fit (default the lane's own); `first`: step 0's batch, played already.
   */
  | { kind: 'played'; play: PlaySpec; player: 'expert' | 'model'; sampling?: SamplingOptions; fit?: readonly Method[]; first?: PlayedBatch };

/** What one lane trained on at one step: rollouts, their trees, and a played source's episodes (JSON, figures; null for a file). */
export type StepBatch = Pick<PlayedBatch, 'rollouts' | 'trees'> & { played: PlayedBatch | null };

export const playedBatch = (batch: PlayedBatch): StepBatch => ({ rollouts: batch.rollouts, trees: batch.trees, played: batch });

export interface BatchSource {
  source: RolloutSource;
  /** The model's positions: a played episode stops within them. */
  nPositions: number;
  /** The scripted expert, when it plays the run's batches. */
  expert: Player | null;
  /** The batch of the step being played when the lanes share it (the expert's; step 0's given batch). */
  shared: { step: number; batch: PlayedBatch } | null;
}

export function createBatchSource(source: RolloutSource, nPositions: number): BatchSource {
  return {
    source,
    nPositions,
    expert: source.kind === 'played' && source.player === 'expert' ? { policy: createExpertPolicy(createEnv(source.play.env)) } : null,
    shared: source.kind === 'played' && source.first ? { step: 0, batch: source.first } : null,
  };
}

/**
 * The batch a lane trains on at `step`, and the time spent playing it (0: reused). `modelPlayer`
 * gives the lane's own model as a player, asked for only when the lane's model plays.
 */
export async function drawBatch(s: BatchSource, step: number, modelPlayer: () => Player, watch?: EpisodeWatch): Promise<{ batch: StepBatch; genMs: number }> {
  const { source } = s;
  if (source.kind === 'file') {
    const indices = batchIndices(source.rollouts.length, source.batch, step, source.order, source.seed);
    return { batch: { rollouts: indices.map((i) => source.rollouts[i]), trees: indices.map((i) => source.trees[i]), played: null }, genMs: 0 };
  }
  const shares = s.expert || (step === 0 && source.first);
  if (shares && s.shared?.step === step) return { batch: playedBatch(s.shared.batch), genMs: 0 };
  const batch = await playBatch(source.play, step, s.expert ?? modelPlayer(), { nPositions: s.nPositions, watch });
  if (shares) s.shared = { step, batch };
  return { batch: playedBatch(batch), genMs: batch.genMs };
}
