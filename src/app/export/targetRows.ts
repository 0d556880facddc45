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
  return `${csvFormatRows([header.map(neutralise), ...rows.map((row) => row.map(csvCell))])}\n`;
}

/** A value as CSV text: empty when missing, booleans as written, text neutralised (see `neutralise`). */
export function csvCell(v: Cell | undefined): string {
  return v === null || v === undefined ? '' : neutralise(String(v));
}

/** A number as a spreadsheet reads it (`-2.5`, `1e-7`): it is a value, not a formula, and stays as it is. */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Text a spreadsheet would run as a formula (a cell starting with `=`, `+`, `-`, `@`, a tab or a
 * carriage return: `=HYPERLINK(…)`, `+1+cmd`, `@SUM(1,1)`) gets a leading apostrophe, which the
 * spreadsheet shows as text; numbers (`-2.5`) stay numbers. Every CSV the page writes goes through it.
 */
export function neutralise(text: string): string {
  return /^[=+\-@\t\r]/.test(text) && !NUMBER.test(text) ? `'${text}` : text;
}
