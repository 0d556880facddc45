// Before a run trains: its first batch stands for the data, and every method's plan of it must fit
// the model's positions, score a target and fit the adapter's buffers. One refusal, one clear line.

import { checkModelFits } from '../gpu/model';
import type { ModelConfig } from '../model/config';
import { methodNeeds } from '../plan/needs';
import type { Method, PlanOptions } from '../plan/types';
import type { StepBatch } from './source';

export class RunRefusedError extends Error {
  override readonly name = 'RunRefusedError';
}

/** Throws RunRefusedError naming the first of `methods` whose plans of `batch` the model or the adapter cannot take. */
export function checkFirstBatch(batch: StepBatch, methods: readonly Method[], config: ModelConfig, device: GPUDevice, options: PlanOptions = {}): void {
  const P = config.nPositions;
  for (const method of methods) {
    const needs = batch.trees.map((tree) => methodNeeds(tree, method, options));
    const positions = Math.max(0, ...needs.map((n) => n.positions));
    if (positions > P) {
      throw new RunRefusedError(
        `${method} needs position ${positions - 1} but the model has n_positions ${P}` +
          (method === 'naive-full' ? ' (naive-full scores on the whole physical tape)' : '') +
          ': lower the difficulty, the filler or the editor budget, or use a larger model',
      );
    }
    if (needs.every((n) => n.targets === 0)) throw new RunRefusedError(`${method} scores no target in the first batch (every target is dropped)`);
    try {
      checkModelFits(
        config,
        device,
        needs.reduce((s, n) => s + n.rows, 0),
      );
    } catch (error) {
      throw new RunRefusedError(`${method}, batch of ${batch.rollouts.length} rollouts: ${(error as Error).message}`);
    }
  }
}
