// The per-target table as CSV: every target's section-3 facts and how each method conditions it.
import type { DriftData } from '../core/drift';
import { planIndex } from '../core/methodViews';
import type { ViewData } from '../core/viewData';
import { csvOf, TARGET_COLUMNS, targetCells, type Cell } from './targetRows';
import { METHODS } from '../../plan/types';

/** With `drift` (the model's scores of this rollout), adds ℓ_live and each method's ℓ_m per target. */
export function targetsCsv(view: ViewData, drift: DriftData | null = null): string {
  const header = [
    ...TARGET_COLUMNS,
    'livePrefixLength',
    'finalPrefixLength',
    'fullPrefixLength',
    'scoringNode',
    'position',
    'rolloutLogprob',
    ...METHODS.map((m) => `${m}.prefixLength`),
    'sdcc.teacherPrefixLength',
    ...(drift ? ['model.live.logprob', ...drift.methods.map((m) => `model.${m.method}.logprob`)] : []),
  ];
  // A position id counts the keys visible before the token (docs/methods.md): the prefix length, in O(1).
  const indexes = METHODS.map((m) => planIndex(view, m));
  const sdcc = planIndex(view, 'sdcc');
  const lengthAt = (located: { seq: { positions: Int32Array }; index: number } | undefined) => (located ? located.seq.positions[located.index] : null);
  const rows = Array.from(view.rollout.targets, (id): Cell[] => {
    const { cells, facts: f } = targetCells(view, id);
    return [
      ...cells,
      f.livePrefixLength,
      f.finalPrefixLength,
      f.fullPrefixLength,
      f.scoringNode,
      f.depth,
      f.rolloutLogprob,
      ...indexes.map((index) => lengthAt(index.at.get(id))),
      lengthAt(sdcc.teacherAt.get(id)),
      ...(drift ? [drift.live.get(id) ?? null, ...drift.methods.map((m) => m.logprob.get(id) ?? null)] : []),
    ];
  });
  return csvOf(header, rows);
}
