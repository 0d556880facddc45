// One rollout of a data set as one row of figures: its id, the section-3 figures (docs/tree.md) and
// its reward. `mw tree FILE.jsonl --json` prints these rows and the app's data-set table and its CSV
// have exactly these columns, so a CSV row and a CLI row of the same rollout are the same record.

import type { Rollout } from '../rollout/rollout';
import { deriveFigures } from './derive';
import type { TreeFigures } from './types';

export type RolloutRow = { id: string } & TreeFigures & { reward: number | null };

/** The section-3 figures, in the order `mw tree` prints them. */
export const TREE_FIGURES = [
  'K',
  'branches',
  'physicalLength',
  'finalWalkLength',
  'packedLength',
  'targets',
  'droppedTargets',
  'divergingLeaves',
  'evictionMassTotal',
  'evictionMassMax',
] as const satisfies readonly (keyof TreeFigures)[];

/** The columns, in the order `mw tree --json` writes them and the CSV lists them. */
export const ROLLOUT_ROW_FIELDS = ['id', ...TREE_FIGURES, 'reward'] as const satisfies readonly (keyof RolloutRow)[];

export function rolloutRow(rollout: Rollout, f: TreeFigures = deriveFigures(rollout)): RolloutRow {
  const row = { id: rollout.id } as RolloutRow;
  for (const name of TREE_FIGURES) row[name] = f[name];
  row.reward = rollout.reward ?? null;
  return row;
}
