// What each live chart plots from the metric records (docs/metrics.md), in words the chart's header says.
// The drift charts follow the objective: RL rollouts carry the model's own logprobs, so drift is
// measured against them; SFT demonstrations carry logprob 0 (the expert is certain), so drift is
// measured against the workbench's exact live-prefix score instead (conditioning drift).

import type { Objective } from '../../../gpu/train';
import type { MismatchFigures } from '../../../metrics/mismatch';
import type { Method } from '../../../plan/types';
import type { MetricRecord } from '../../../run/engine';
import { formatEffect } from '../../../present/number';

export interface ChartSpec {
  id: string;
  title: string;
  /** One line under the title: what the numbers are. */
  note(objective: Objective): string;
  value(r: MetricRecord, objective: Objective): number | null;
  /** A log y axis (default linear). */
  log?: boolean;
  /** Values the y axis always spans (0 for a signed drift, [0, 1] for a reward). */
  include?: readonly number[];
  /** Upper end of the y axis at the 95th percentile (one slow first step would flatten the rest). */
  robust?: boolean;
  /** Shown for these objectives only (default: both). */
  objectives?: readonly Objective[];
  /** Only these methods have the series (default: every lane). */
  only?: readonly Method[];
  /** Draws a matching shipped experiment's curves of the same figure (src/run/reference.ts) under the live lines. */
  reference?: boolean;
  format(v: number): string;
}

/** Values at or below this are drawn on the floor of a log chart. */
export const LOG_FLOOR = 1e-8;

const fixed = (digits: number) => (v: number) => v.toFixed(digits);
/** A drift figure in the one number format of reported effects (src/present/number.ts): never 0 when it is not. */
const sci = (v: number) => formatEffect(v, { signed: false });
const signedSci = (v: number) => formatEffect(v);

/**
 * What the signed drift's sign means, per method (docs/metrics.md, "The verdict"): Naive-Compressed has no stale
 * context, so its positive μ is not one.
 */
const SIGN_NOTE =
  'Naive-Compressed < 0: time-travel leakage (evidence the final walk lacks); it can only lower the score there, so > 0 means the model reads the ' +
  'final walk better: it is being trained on final walks (Naive-Compressed, SDCC), or later summaries point at the token; Naive-Full > 0: stale ' +
  'context; the exact methods sit at the round-off floor';

/** The drift the charts and the readouts use for this objective (see the file comment). */
export function driftOf(r: MetricRecord, objective: Objective): number | null {
  return objective === 'rl' ? r.logdiff : r.conditioningDrift;
}

export function signedDriftOf(r: MetricRecord, objective: Objective): number | null {
  return objective === 'rl' ? r.mu : r.conditioningMu;
}

export function driftLabel(objective: Objective): string {
  return objective === 'rl' ? 'logdiff |ℓ_m − ℓ_rollout|' : 'conditioning drift |ℓ_m − ℓ_live|';
}

/** One of verl's train–rollout mismatch figures, charted under the name verl logs it (RL rollouts only). */
function rolloutCorr(id: string, name: keyof MismatchFigures, { note, ...axis }: { note: string } & Pick<ChartSpec, 'log' | 'include' | 'format'>): ChartSpec {
  return { id, title: `rollout_corr/${name}`, note: () => note, value: (r) => r.rollout_corr?.[name] ?? null, objectives: ['rl'], ...axis };
}

export const CHARTS: readonly ChartSpec[] = [
  {
    id: 'loss',
    title: 'Loss',
    note: (o) => (o === 'rl' ? 'PPO-clipped policy loss (+ λ·KL for SDCC)' : 'target NLL under the method (+ λ·KL for SDCC)'),
    value: (r) => r.loss,
    include: [0],
    format: fixed(3),
  },
  {
    id: 'drift',
    title: 'Drift',
    note: (o) =>
      o === 'rl'
        ? 'logdiff: mean |ℓ_m − ℓ_rollout| against the model’s own rollout logprobs (log scale)'
        : 'SFT: demonstrations carry logprob 0, so drift is against the exact live-prefix score, which the exact methods are (0 by construction; log scale)',
    value: driftOf,
    log: true,
    format: sci,
  },
  {
    id: 'mu',
    title: 'Signed drift μ',
    note: (o) => `${o === 'rl' ? 'mean(ℓ_m − ℓ_rollout)' : 'mean(ℓ_m − ℓ_live)'}: ${SIGN_NOTE}`,
    value: signedDriftOf,
    include: [0],
    format: signedSci,
  },
  {
    id: 'conditioning',
    title: 'Conditioning drift',
    note: () => 'mean |ℓ_m − ℓ_live| against the exact live-prefix score (log scale)',
    value: (r) => r.conditioningDrift,
    log: true,
    // Under SFT the drift chart already is the conditioning drift.
    objectives: ['rl'],
    format: sci,
  },
  {
    id: 'reward',
    title: 'Held-out EM',
    note: () => 'exact match of each model’s greedy play on held-out prompts under the editor, every few steps',
    value: (r) => r.evalEm,
    include: [0, 1],
    reference: true,
    format: fixed(2),
  },
  {
    id: 'batch-reward',
    title: 'Batch reward',
    note: () => 'mean reward of the batch each model played (sampled at temperature 1)',
    value: (r) => r.reward,
    include: [0, 1],
    objectives: ['rl'],
    format: fixed(2),
  },
  {
    id: 'kl',
    title: 'KL_SDCC',
    note: () => 'forward KL at diverging leaves (SDCC only); 0 where the batch has none',
    value: (r) => r.klSdcc,
    include: [0],
    only: ['sdcc'],
    format: sci,
  },
  rolloutCorr('k3', 'k3_kl', {
    note: 'verl’s k3 estimate of KL(π_rollout ‖ π_method) over the batch’s targets, mean(ρ − log ρ − 1) with ρ = π_method / π_rollout (log scale)',
    log: true,
    format: sci,
  }),
  rolloutCorr('ess', 'rollout_is_eff_sample_size', {
    note: 'verl’s effective sample size of the importance weights ρ, 1 / mean((ρ / mean ρ)²): 1 when the method scores as the rollout did',
    include: [1],
    format: fixed(3),
  }),
  rolloutCorr('ppl', 'log_ppl_diff', {
    note: 'verl’s per-rollout log-perplexity gap, mean ℓ_rollout − mean ℓ_method, averaged over the batch: > 0 the method finds the rollout less likely',
    include: [0],
    format: sci,
  }),
  {
    id: 'packed',
    title: 'N_packed / N_final',
    note: () => 'trie nodes over final-walk tokens of the batch: what the 4D forward pays',
    value: (r) => (r.nFinal > 0 ? r.nPacked / r.nFinal : null),
    include: [1],
    format: fixed(2),
  },
  {
    id: 'time',
    title: 'Step time',
    note: () => 'ms per update on the GPU: forward, backward, AdamW, read back',
    value: (r) => r.stepMs,
    robust: true,
    include: [0],
    format: (v) => (v >= 1000 ? `${(v / 1000).toFixed(v >= 10_000 ? 0 : 1)} s` : `${v.toFixed(0)} ms`),
  },
];
