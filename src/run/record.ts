// A lane's step as the record a run stores, charts and exports (docs/metrics.md): the trainer's
// figures and the batch's, and the one line that says why a batch had nothing to train on.

import type { StepFigures, StepMetrics } from '../gpu/train';
import { stepFiguresOf } from '../metrics/step';
import type { StepBatch } from './source';

/** One method's figures after one step (docs/metrics.md), as stored, charted and exported: the trainer's, and the batch's. */
export type MetricRecord = StepFigures & {
  /** Mean edits per rollout of the batch. */
  K: number;
  reward: number;
  em: number;
  /** Greedy play on the held-out prompts after this step (every `evaluation.every` steps), else null. */
  evalReward: number | null;
  evalEm: number | null;
  /** Rollouts left out of the step: their method's plan does not fit the model's positions, or scores nothing. */
  skipped: number;
  /** Playing the episodes of the batch (RL: the model decoding). */
  genMs: number;
  /** Wall-clock time of the record's creation (ms since the epoch). */
  time: number;
};

/** The record of a step; `demonstrations`: the batch is the expert's, whose logprobs are 0. */
export function metricRecord(m: StepMetrics, batch: StepBatch, genMs: number, skipped: number, demonstrations: boolean): MetricRecord {
  return {
    ...stepFiguresOf(m),
    // Demonstrations carry logprob 0 (the expert is certain): a gap to them is not drift.
    ...(demonstrations ? { logdiff: null, mu: null, rollout_corr: null } : {}),
    K: batch.trees.reduce((s, t) => s + t.K, 0) / batch.trees.length,
    reward: batch.played?.reward ?? 0,
    em: batch.played?.em ?? 0,
    evalReward: null,
    evalEm: null,
    skipped,
    genMs,
    time: Date.now(),
  };
}

/** "3 × naive-full needs 140 positions, the model has 128; 1 × ..." */
export function summarizeReasons(leftOut: readonly { reason: string }[]): string {
  const counts = new Map<string, number>();
  for (const { reason } of leftOut) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} × ${reason}`).join('; ');
}
