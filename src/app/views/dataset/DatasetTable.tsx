// The data-set table of a JSONL set: one row per rollout with its figures (the rows `mw tree --json`
// prints) and, with a checkpoint, logdiff and μ per method and KL_SDCC. Sortable by any column,
// filtered by what the person types, virtualised (only the rows in sight are in the DOM, so 10k
// rollouts scroll as fast as 10); a click opens the rollout in the views; the shown rows export as CSV.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import {
  columnMeans,
  DRIFT_COLUMNS,
  FIGURE_COLUMNS,
  datasetCsv,
  editorTable,
  parseFilter,
  sortEntries,
  type Column,
  type Sort,
  type TableEntry,
} from '../../core/datasetTable';
import { downloadText, fileStem } from '../../export/download';
import { useWorkbench } from '../../store';
import { formatEffect as formatDelta, formatMagnitude } from '../../../present/number';
import { METHOD_BY_ID } from '../../../present/palette';
import { SEQUENCE_METHODS } from '../../../plan/types';
import type { EditorSum } from '../../../metrics/junctions';
import './dataset.css';

const ROW_HEIGHT = 26;
/** The table shows up to sixteen rows (with its header and its mean row) before it scrolls: the views below stay in reach. */
const MAX_ROWS = 16;
/** Room for the horizontal scroll bar when the columns are wider than the panel, so no row is half hidden under it. */
const SCROLLBAR = 16;

function columnWidth(c: Column): number {
  if (c.key === 'id') return 240;
  if (c.key.includes(':') || c.key === 'klSdcc') return 78;
  return c.key === 'evictionMassTotal' ? 92 : c.key === 'packedLength' ? 72 : 58;
}

function cell(column: Column, entry: TableEntry): string {
  const v = column.value(entry);
  if (v === null) return entry.drift && 'error' in entry.drift && column.key.includes(':') ? '×' : '—';
  return number(column, v);
}

function number(column: Column, v: number | string): string {
  if (typeof v === 'string') return v;
  if (column.key.startsWith('mu:')) return formatDelta(v);
  if (column.key.startsWith('logdiff:') || column.key === 'klSdcc') return formatMagnitude(v);
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(3))); // a reward of 1/3 reads 0.333 (the CSV keeps every digit)
}

export function DatasetTable() {
  const count = useWorkbench((s) => s.rollouts.length);
  const table = useWorkbench((s) => s.table);
  const progress = useWorkbench((s) => s.tableProgress);
  const error = useWorkbench((s) => s.tableError);
  if (count < 2) return null;
  return (
    <section className="panel dataset" aria-label="Data set">
      {table ? (
        <Table />
      ) : (
        <header className="panel-head">
          <h2>Data set</h2>
          {error ? (
            <span className="error-text">{error}</span>
          ) : (
            <span className="hint" data-testid="dataset-progress">
              deriving the figures of {count} rollouts{progress?.done ? ` · ${progress.done} of ${progress.total}` : ''}…
            </span>
          )}
        </header>
      )}
    </section>
  );
}

function Table() {
  const table = useWorkbench((s) => s.table)!;
  const source = useWorkbench((s) => s.source);
  const rolloutIndex = useWorkbench((s) => s.rolloutIndex);
  const selectRollout = useWorkbench((s) => s.selectRollout);
  const model = useWorkbench((s) => s.model);
  const tableDrift = useWorkbench((s) => s.tableDrift);
  const scoring = useWorkbench((s) => s.tableScoring);
  const scoreTable = useWorkbench((s) => s.scoreTable);
  const stop = useWorkbench((s) => s.stopTableScoring);
  const [sort, setSort] = useState<Sort | null>(null);
  const [query, setQuery] = useState('');
  const filter = useMemo(() => parseFilter(query), [query]);

  const driftRows = tableDrift && model && tableDrift.set === table.set && tableDrift.modelKey === model.key ? tableDrift.rows : null;
  const entries = useMemo(
    () => table.rows.map((row, index): TableEntry => ({ index, row, ...(driftRows?.has(index) ? { drift: driftRows.get(index) } : {}) })),
    [table, driftRows, tableDrift?.version], // the Map is filled in place; `version` says when
  );
  const filtered = useMemo(() => (filter.ok ? entries.filter(filter.test) : entries), [entries, filter]);
  const shown = useMemo(() => sortEntries(filtered, sort), [filtered, sort]);
  const columns = model ? [...FIGURE_COLUMNS, ...DRIFT_COLUMNS] : FIGURE_COLUMNS;
  const scored = driftRows?.size ?? 0;
  const means = useMemo(() => columnMeans(shown, columns), [shown, columns]);

  const scroller = useRef<HTMLDivElement>(null);
  // The header row sits (sticky) inside the scroller, above the rows: the list starts one row down.
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    scrollMargin: ROW_HEIGHT,
  });
  const widths = columns.map(columnWidth);
  const template = widths.map((w) => `${w}px`).join(' ');
  const width = widths.reduce((a, b) => a + b, 0) + 6 * (widths.length - 1) + 24;

  const toggle = (key: Column['key']) =>
    setSort((s) => (s?.key === key ? (s.descending ? { key, descending: false } : null) : { key, descending: key !== 'id' }));
  const stem = fileStem(source?.name ?? 'dataset');

  return (
    <>
      <header className="panel-head">
        <h2>Data set</h2>
        <span className="hint" data-testid="dataset-count">
          {table.rows.length} rollouts{shown.length !== table.rows.length ? ` · ${shown.length} shown` : ''} · click a row to open it
        </span>
        <input
          type="search"
          className="dataset-filter"
          placeholder="filter: D>0 reward<1 compact"
          value={query}
          onChange={(e) => setQuery(e.currentTarget.value)}
          data-testid="dataset-filter"
          aria-label="Filter rollouts"
          title="Terms that must all hold: FIELD OP NUMBER (K, branches, L, N_packed, targets, dropped, D, mass, reward; < <= > >= = !=), or a piece of the id"
        />
        {!filter.ok && (
          <span className="error-text" data-testid="dataset-filter-error">
            {filter.error}
          </span>
        )}
        <span className="dataset-actions">
          {model &&
            (scoring ? (
              <>
                <span className="hint" data-testid="dataset-scoring">
                  scoring {scoring.done} of {scoring.total}…
                </span>
                <button type="button" onClick={stop} data-testid="dataset-score-stop">
                  Stop
                </button>
              </>
            ) : (
              scored < table.rows.length && (
                <button
                  type="button"
                  onClick={() => void scoreTable()}
                  data-testid="dataset-score"
                  title={`Score every rollout with ${model.name} (one at a time on WebGPU): logdiff and μ per method`}
                >
                  Score {scored ? `the other ${table.rows.length - scored}` : `all ${table.rows.length}`} with {model.name}
                </button>
              )
            ))}
          <button
            type="button"
            onClick={() => downloadText(datasetCsv(filtered), `${stem}-rollouts.csv`, 'text/csv')}
            data-testid="export-dataset-csv"
            title="Save the rows shown (in file order) as CSV: the fields of mw tree --json, then the drift columns once scored"
          >
            CSV
          </button>
        </span>
      </header>
      {model && (
        <p className="dataset-note muted">
          logdiff and μ per method (NC Naive-Compressed, NF Naive-Full, LT LogitTree, 4D Packed 4D mask) against each rollout&apos;s own logprobs where they are
          this model&apos;s, else against the exact live-prefix score; KL_SDCC at the diverging leaves. {scored} of {table.rows.length} rollouts scored.
        </p>
      )}
      <div
        className="dataset-scroll"
        ref={scroller}
        role="table"
        aria-rowcount={shown.length + 2}
        data-testid="dataset-table"
        style={{ height: (Math.min(MAX_ROWS, Math.max(1, shown.length)) + 2) * ROW_HEIGHT + 4 + SCROLLBAR }}
      >
        <div className="dataset-row head" role="row" style={{ gridTemplateColumns: template, width, height: ROW_HEIGHT }}>
          {columns.map((c) => (
            <button
              type="button"
              key={c.key}
              role="columnheader"
              className="dataset-head"
              title={c.title}
              aria-sort={sort?.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none'}
              onClick={() => toggle(c.key)}
              data-testid={`dataset-sort-${c.key}`}
            >
              {c.label}
              {sort?.key === c.key ? (sort.descending ? ' ▾' : ' ▴') : ''}
            </button>
          ))}
        </div>
        <div style={{ height: virtualizer.getTotalSize(), width, position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const entry = shown[item.index];
            return (
              <div
                key={entry.index}
                role="row"
                className={entry.index === rolloutIndex ? 'dataset-row active' : 'dataset-row'}
                style={{ gridTemplateColumns: template, width, height: ROW_HEIGHT, transform: `translateY(${item.start - ROW_HEIGHT}px)` }}
                onClick={() => void selectRollout(entry.index)}
                data-testid="dataset-row"
                data-index={entry.index}
                data-id={entry.row.id}
                aria-selected={entry.index === rolloutIndex}
                title={entry.drift && 'error' in entry.drift ? `not scored: ${entry.drift.error}` : entry.row.id}
              >
                {columns.map((c) => (
                  <span role="cell" key={c.key} className={c.key === 'id' ? 'id' : 'num'}>
                    {cell(c, entry)}
                  </span>
                ))}
              </div>
            );
          })}
        </div>
        <div className="dataset-row mean" role="row" style={{ gridTemplateColumns: template, width, height: ROW_HEIGHT }} data-testid="dataset-mean">
          {columns.map((c, i) => (
            <span
              role="cell"
              key={c.key}
              className={c.key === 'id' ? 'id' : 'num'}
              title={
                c.key === 'id' ? 'Each column’s mean over the rows shown that have a value' : `${c.label}: mean of ${means[i].count} of ${shown.length} rows`
              }
            >
              {c.key === 'id' ? `mean of ${shown.length} shown` : means[i].mean === null ? '—' : number(c, means[i].mean!)}
            </span>
          ))}
        </div>
      </div>
      <EditorTable sums={editorTable(filtered)} />
    </>
  );
}

/** Drift per edit summed per editor (the memory editor or harness that made the edits) over the scored rows shown. */
function EditorTable({ sums }: { sums: EditorSum[] }) {
  if (!sums.length) return null;
  return (
    <div className="pad">
      <p className="caption">
        Drift per edit summed per editor over the scored rollouts shown: each method&apos;s Σ(ℓ_m − ℓ_live) over the targets its edits make diverge, and their
        mean μ (a target two edits make diverge counts for each); cost: the sum of the edits&apos; costs.
      </p>
      <table className="drift-table" data-testid="editor-table">
        <thead>
          <tr>
            <th>editor</th>
            <th>rollouts</th>
            <th>edits</th>
            <th>targets</th>
            <th>cost</th>
            {SEQUENCE_METHODS.map((m) => (
              <th key={m} title="Σ (ℓ_m − ℓ_live) over n targets, and μ">
                {METHOD_BY_ID[m].short} Σ · μ
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sums.map((e) => (
            <tr key={e.editor} data-editor={e.editor} data-testid="editor-row">
              <td>{e.editor}</td>
              <td>{e.rollouts}</td>
              <td>{e.edits}</td>
              <td>{e.targets}</td>
              <td>{formatMagnitude(e.cost)}</td>
              {SEQUENCE_METHODS.map((m) => {
                const f = e.methods[m];
                return (
                  <td key={m} data-method={m} data-sum={String(f.sum)}>
                    {f.mu === null ? '—' : `${formatDelta(f.sum)} · ${formatDelta(f.mu)}`}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
