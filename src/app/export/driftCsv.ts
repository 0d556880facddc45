// Per-target drift as CSV, one row per target with its facts: ℓ_live, and for each scored method its
// ℓ_m and ℓ_m − ℓ_live (and ℓ_m − ℓ_rollout when the rollout's logprobs are this model's), then
// SDCC's KL at the diverging leaves. Empty where a method does not score the target.
import { comparesWithRollout, type DriftData } from '../core/drift';
import type { ViewData } from '../core/viewData';
import { csvOf, TARGET_COLUMNS, targetCells } from './targetRows';

export function driftCsv(view: ViewData, drift: DriftData): string {
  const withRollout = comparesWithRollout(drift);
  const methods = drift.methods.filter((m) => !m.error);
  const header = [
    ...TARGET_COLUMNS,
    'rolloutLogprob',
    'live.logprob',
    ...methods.flatMap((m) => [`${m.method}.logprob`, `${m.method}.minusLive`, ...(withRollout ? [`${m.method}.minusRollout`] : [])]),
    'sdcc.kl',
  ];
  const rows = Array.from(view.rollout.targets, (id) => {
    const { cells, facts: f } = targetCells(view, id);
    cells.push(f.rolloutLogprob, drift.live.get(id) ?? null);
    for (const m of methods) {
      const lp = m.logprob.get(id);
      cells.push(lp ?? null, m.delta.get(id) ?? null);
      if (withRollout) cells.push(lp !== undefined && f.rolloutLogprob !== null ? lp - f.rolloutLogprob : null);
    }
    cells.push(drift.sdcc.kl.get(id) ?? null);
    return cells;
  });
  return csvOf(header, rows);
}
