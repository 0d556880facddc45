// The data-set table as plain data: one entry per rollout of a JSONL set (its row of figures, the
// same record `mw tree --json` prints, and with a checkpoint its drift row), the columns a person
// sorts by, the filter they type (`D>0 reward<1 lookup`), and the CSV: the figure columns exactly
// as `mw tree --json` names them, then the drift columns when the set was scored.
import { csvOf, type Cell } from '../export/targetRows';
import { ROLLOUT_ROW_FIELDS, type RolloutRow } from '../../tree';
import { SCORED_METHODS, type DriftRow, type ScoredMethod } from '../protocol/score';
import { mergeEditorSums, type EditorSum } from '../../metrics/junctions';

export interface TableEntry {
  /** Position in the file (what selectRollout takes). */
  index: number;
  row: RolloutRow;
  /** Its drift under the loaded model; an error when it could not be scored; undefined before. */
  drift?: DriftRow | { error: string };
}

export type SortKey = keyof RolloutRow | `logdiff:${ScoredMethod}` | `mu:${ScoredMethod}` | 'klSdcc';

export interface Column {
  key: SortKey;
  /** Header text, in the words of the summary panel. */
  label: string;
  /** What the column holds, for a newcomer (the header's tooltip). */
  title: string;
  value(entry: TableEntry): number | string | null;
}

const figure = (key: keyof RolloutRow, label: string, title: string): Column => ({ key, label, title, value: (e) => e.row[key] });

/** The figure columns the table shows (the CSV has every field of the row). */
export const FIGURE_COLUMNS: Column[] = [
  figure('id', 'rollout', 'The rollout id; click a row to open it in the views'),
  figure('K', 'K', 'K: edits of the context (junctions of the conditioning tree)'),
  figure('branches', 'branches', 'K + 1 live views, one per segment'),
  figure('physicalLength', 'L', 'L: tape length, every token ever created'),
  figure('packedLength', 'N_packed', 'N_packed: trie nodes, the input size of the packed 4D forward'),
  figure('targets', 'targets', 'Tokens the policy generated (the loss-carrying act tokens)'),
  figure('divergingLeaves', 'D', 'D: diverging leaves, targets whose final prefix differs from their live prefix'),
  figure('evictionMassTotal', 'eviction mass', 'eviction mass: live-prefix tokens missing from the final prefix, summed over the targets'),
  figure('reward', 'reward', 'The reward recorded in the rollout'),
];

const SHORT: Record<ScoredMethod, string> = { 'naive-compressed': 'NC', 'naive-full': 'NF', 'logit-tree': 'LT', 'packed-4d': '4D' };

function driftOf(entry: TableEntry): DriftRow | null {
  return entry.drift && !('error' in entry.drift) ? entry.drift : null;
}

/** The drift columns, shown once a checkpoint is loaded: logdiff and μ per scored method, then KL_SDCC. */
export const DRIFT_COLUMNS: Column[] = [
  ...SCORED_METHODS.flatMap((m): Column[] => [
    {
      key: `logdiff:${m}`,
      label: `logdiff ${SHORT[m]}`,
      title: `logdiff of ${m}: mean |ℓ_m − ℓ_ref| over its targets`,
      value: (e) => driftOf(e)?.methods[m]?.logdiff ?? null,
    },
    {
      key: `mu:${m}`,
      label: `μ ${SHORT[m]}`,
      title: `μ of ${m}: mean (ℓ_m − ℓ_ref); below zero the method makes the policy's tokens look less likely`,
      value: (e) => driftOf(e)?.methods[m]?.mu ?? null,
    },
  ]),
  {
    key: 'klSdcc',
    label: 'KL_SDCC',
    title: 'KL_SDCC: mean KL(live ‖ final prefix) at the diverging leaves (0 without any)',
    value: (e) => driftOf(e)?.klSdcc ?? null,
  },
];

export function columnOf(key: SortKey): Column {
  const column = [...FIGURE_COLUMNS, ...DRIFT_COLUMNS].find((c) => c.key === key);
  if (column) return column;
  return figure(key as keyof RolloutRow, key, key);
}

export interface Sort {
  key: SortKey;
  descending: boolean;
}

/** Sorted copy; rows without a value (no reward, not scored) go last either way; ties keep file order. */
export function sortEntries(entries: readonly TableEntry[], sort: Sort | null): TableEntry[] {
  if (!sort) return [...entries];
  const { value } = columnOf(sort.key);
  const sign = sort.descending ? -1 : 1;
  return [...entries].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    if (x === null || y === null) return x === y ? a.index - b.index : x === null ? 1 : -1;
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
    return order ? sign * order : a.index - b.index;
  });
}

// Filter terms: `FIELD OP NUMBER` (OP one of < <= > >= = !=) on a figure, anything else a piece of the id.
const FIELD_NAMES: Record<string, SortKey> = {
  k: 'K',
  branches: 'branches',
  l: 'physicalLength',
  final: 'finalWalkLength',
  n_packed: 'packedLength',
  npacked: 'packedLength',
  targets: 'targets',
  dropped: 'droppedTargets',
  d: 'divergingLeaves',
  mass: 'evictionMassTotal',
  massmax: 'evictionMassMax',
  reward: 'reward',
};
for (const field of ROLLOUT_ROW_FIELDS) FIELD_NAMES[field.toLowerCase()] = field;

export type Filter = { ok: true; test(entry: TableEntry): boolean } | { ok: false; error: string };

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '=': (a, b) => a === b,
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};

/** Parses what the person typed: every term must hold (e.g. `D>0 reward<1 compact`). */
export function parseFilter(text: string): Filter {
  const tests: ((e: TableEntry) => boolean)[] = [];
  for (const term of text.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([A-Za-z_]+)(<=|>=|!=|==|<|>|=)(.*)$/.exec(term);
    if (!m) {
      const piece = term.toLowerCase();
      tests.push((e) => e.row.id.toLowerCase().includes(piece));
      continue;
    }
    const key = FIELD_NAMES[m[1].toLowerCase()];
    if (!key) return { ok: false, error: `${m[1]}: no such column (K, branches, L, N_packed, targets, dropped, D, mass, reward)` };
    const bound = Number(m[3]);
    if (m[3].trim() === '' || !Number.isFinite(bound)) return { ok: false, error: `${term}: ${m[1]} is compared with a number` };
    const compare = COMPARE[m[2]];
    const { value } = columnOf(key);
    tests.push((e) => {
      const v = value(e);
      return typeof v === 'number' && compare(v, bound);
    });
  }
  return { ok: true, test: (e) => tests.every((t) => t(e)) };
}

/**
 * The table's summary row: per numeric column, the mean over the entries that have a value (a rollout
 * without a reward, or not yet scored, is left out of that column's mean), and how many it averages;
 * null where none has one. The id column has no mean.
 */
export function columnMeans(entries: readonly TableEntry[], columns: readonly Column[]): { mean: number | null; count: number }[] {
  return columns.map((column) => {
    if (column.key === 'id') return { mean: null, count: 0 };
    let sum = 0;
    let count = 0;
    for (const entry of entries) {
      const v = column.value(entry);
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      sum += v;
      count++;
    }
    return { mean: count ? sum / count : null, count };
  });
}

/** The rows as CSV in the order given: every field of `mw tree --json`, then the drift columns when any row was scored. */
export function datasetCsv(entries: readonly TableEntry[]): string {
  const scored = entries.some((e) => e.drift !== undefined);
  const header: string[] = [...ROLLOUT_ROW_FIELDS];
  if (scored) header.push('reference', ...SCORED_METHODS.flatMap((m) => [`${m}.logdiff`, `${m}.mu`]), 'sdcc.kl', 'error');
  const rows = entries.map((e) => {
    const cells: Cell[] = ROLLOUT_ROW_FIELDS.map((f) => e.row[f]);
    if (scored) {
      const d = driftOf(e);
      cells.push(d?.reference ?? null, ...SCORED_METHODS.flatMap((m) => [d?.methods[m]?.logdiff ?? null, d?.methods[m]?.mu ?? null]), d?.klSdcc ?? null);
      cells.push(e.drift && 'error' in e.drift ? e.drift.error : null);
    }
    return cells;
  });
  return csvOf(header, rows);
}

/** Drift per edit summed per editor over the scored rows shown (each row's own sums, src/metrics/junctions.ts), the costliest first. */
export function editorTable(entries: readonly TableEntry[]): EditorSum[] {
  return mergeEditorSums(entries.map((e) => driftOf(e)?.editors ?? []));
}
