// What every per-target CSV starts with (the target, its token and the facts of docs/tree.md that
// name it), and how a table of cells becomes CSV: empty where a value is missing.
import { csvFormatRows } from 'd3';
import { targetFacts, tokenLabel, type TargetFacts, type ViewData } from '../core/viewData';

export type Cell = string | number | boolean | null;

export const TARGET_COLUMNS = ['id', 'token', 'label', 'segment', 'dropped', 'diverging', 'evictionMass'];

/** The TARGET_COLUMNS cells of target `id`, and its facts for the columns that follow. */
export function targetCells(view: ViewData, id: number): { cells: Cell[]; facts: TargetFacts } {
  const f = targetFacts(view, id);
  return { cells: [id, view.rollout.tokens[id], tokenLabel(view, id), f.segment, f.dropped, f.diverging, f.evictionMass], facts: f };
}

export function csvOf(header: readonly string[], rows: readonly Cell[][]): string {
  return `${csvFormatRows([[...header], ...rows.map((row) => row.map((v) => (v === null ? '' : String(v))))])}\n`;
}
