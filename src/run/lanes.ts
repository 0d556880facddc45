// A run's lanes: one per method, each its own trainer (weights and AdamW state) started from the same
// weights, or resumed from its checkpoint. Plain data and the functions the engine (engine.ts) uses.

import type { Gpu } from '../gpu/runtime/device';
import { createTrainer, type Trainer } from '../gpu/train';
import type { LrSchedule } from '../objectives/adamw';
import type { ModelWeights } from '../model/params';
import type { Method } from '../plan/types';
import type { StepBatch } from './source';

export interface Lane {
  method: Method;
  trainer: Trainer;
  /** Steps taken: updates applied, and (nothingToTrain 'skip') steps skipped. */
  step: number;
  /** The batch of this lane's last step, for inspection. */
  last: StepBatch | null;
}

/** A lane's weights and AdamW state as data (what its checkpoint holds). */
export type LaneState = Awaited<ReturnType<Trainer['readState']>>;

/** One lane per method, in order; on a failure the lanes made so far are destroyed. */
export function createLanes(
  gpu: Gpu,
  methods: readonly Method[],
  weights: ModelWeights,
  schedule: LrSchedule,
  resume: Partial<Record<Method, LaneState>> = {},
): Lane[] {
  const lanes: Lane[] = [];
  try {
    for (const method of methods) {
      const resumed = resume[method];
      const trainer = createTrainer(gpu, resumed?.weights ?? weights, { schedule, optimizerState: resumed?.optimizer });
      lanes.push({ method, trainer, step: trainer.step, last: null });
    }
  } catch (error) {
    lanes.forEach((l) => l.trainer.destroy());
    throw error;
  }
  return lanes;
}

/** The run's step: the smallest over the lanes. */
export const runStepOf = (lanes: readonly Lane[]): number => Math.min(...lanes.map((l) => l.step));

export function laneOf(lanes: readonly Lane[], method: Method): Lane {
  const found = lanes.find((l) => l.method === method);
  if (!found) throw new Error(`no lane trains ${method}`);
  return found;
}
