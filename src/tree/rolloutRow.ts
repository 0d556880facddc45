// One rollout of a data set as one row of figures: its id, the section-3 figures (docs/tree.md) and
// its reward. `mw tree FILE.jsonl --json` prints these rows and the app's data-set table and its CSV
// have exactly these columns, so a CSV row and a CLI row of the same rollout are the same record.

import type { Rollout } from '../rollout/rollout';
import { deriveFigures } from './derive';
import type { TreeFigures } from './types';

export type RolloutRow = { id: string } & TreeFigures & { reward: number | null };

/** The columns, in the order `mw tree --json` writes them and the CSV lists them. */
export const ROLLOUT_ROW_FIELDS = [
  'id',
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
  'reward',
] as const satisfies readonly (keyof RolloutRow)[];

export function rolloutRow(rollout: Rollout, f: TreeFigures = deriveFigures(rollout)): RolloutRow {
  return {
    id: rollout.id,
    K: f.K,
    branches: f.branches,
    physicalLength: f.physicalLength,
    finalWalkLength: f.finalWalkLength,
    packedLength: f.packedLength,
    targets: f.targets,
    droppedTargets: f.droppedTargets,
    divergingLeaves: f.divergingLeaves,
    evictionMassTotal: f.evictionMassTotal,
    evictionMassMax: f.evictionMassMax,
    reward: rollout.reward ?? null,
  };
}
