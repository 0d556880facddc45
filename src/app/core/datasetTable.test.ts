import { readFileSync } from 'node:fs';
import { csvParseRows } from 'd3';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import { ROLLOUT_ROW_FIELDS, rolloutRow } from '../../tree';
import type { DriftRow } from '../protocol/score';
import { columnMeans, DRIFT_COLUMNS, FIGURE_COLUMNS, datasetCsv, editorTable, parseFilter, sortEntries, type TableEntry } from './datasetTable';
import type { EditorSum } from '../../metrics/junctions';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
const worked = parseRolloutFile(read('../../../fixtures/worked-example.json'), 'worked-example.json')[0];
const calls = parseRolloutFile(read('../../../fixtures/calls-example.json'), 'calls-example.json')[0];
const noReward = { ...worked, id: 'no-reward', reward: undefined };
const entries: TableEntry[] = [worked, calls, noReward].map((r, index) => ({ index, row: rolloutRow(r) }));

describe('data-set table rows', () => {
  it('one row per rollout: id, the section-3 figures, reward (null when absent)', () => {
    expect(entries[0].row).toEqual({
      id: 'worked-example',
      K: 2,
      branches: 3,
      physicalLength: 17,
      finalWalkLength: 8,
      packedLength: 21,
      targets: 8,
      droppedTargets: 4,
      divergingLeaves: 2,
      evictionMassTotal: 8,
      evictionMassMax: 4,
      reward: 1,
    });
    expect(Object.keys(entries[1].row)).toEqual([...ROLLOUT_ROW_FIELDS]);
    expect(entries[2].row.reward).toBeNull();
  });

  it('sorts by any column both ways, rows without a value last, ties in file order', () => {
    const ids = (list: TableEntry[]) => list.map((e) => e.row.id);
    expect(ids(sortEntries(entries, { key: 'divergingLeaves', descending: true }))).toEqual(['worked-example', 'no-reward', 'calls-example']);
    expect(ids(sortEntries(entries, { key: 'divergingLeaves', descending: false }))).toEqual(['calls-example', 'worked-example', 'no-reward']);
    expect(ids(sortEntries(entries, { key: 'reward', descending: true })).pop()).toBe('no-reward');
    expect(ids(sortEntries(entries, { key: 'reward', descending: false })).pop()).toBe('no-reward');
    expect(ids(sortEntries(entries, { key: 'id', descending: false }))).toEqual(['calls-example', 'no-reward', 'worked-example']);
    expect(ids(sortEntries(entries, null))).toEqual(ids(entries));
  });

  it('filters by figures (FIELD OP NUMBER) and by pieces of the id, every term at once', () => {
    const shown = (text: string) => {
      const f = parseFilter(text);
      if (!f.ok) throw new Error(f.error);
      return entries.filter(f.test).map((e) => e.row.id);
    };
    expect(shown('')).toEqual(['worked-example', 'calls-example', 'no-reward']);
    expect(shown('D>1')).toEqual(['worked-example', 'no-reward']);
    expect(shown('K=1')).toEqual(['calls-example']);
    expect(shown('n_packed>=21 reward>0')).toEqual(['worked-example']);
    expect(shown('WORKED')).toEqual(['worked-example']);
    expect(shown('mass<6 example')).toEqual(['calls-example']);
    expect(parseFilter('Q>1')).toEqual({ ok: false, error: expect.stringMatching(/^Q: no such column/) });
    expect(parseFilter('D>x')).toEqual({ ok: false, error: 'D>x: D is compared with a number' });
  });

  it('CSV: the fields of mw tree --json in order, then the drift columns once any row is scored', () => {
    const csv = datasetCsv(entries);
    const [header, ...rows] = csvParseRows(csv.trimEnd());
    expect(header).toEqual([...ROLLOUT_ROW_FIELDS]);
    expect(rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])))).toEqual(
      entries.map((e) => Object.fromEntries(ROLLOUT_ROW_FIELDS.map((f) => [f, e.row[f] === null ? '' : String(e.row[f])]))),
    );
    const drift: DriftRow = {
      reference: 'live',
      methods: {
        'naive-compressed': { logdiff: 0.75, mu: -0.75 },
        'naive-full': { logdiff: 0.1875, mu: 0.1875 },
        'logit-tree': { logdiff: 0, mu: 0 },
        'packed-4d': null,
      },
      klSdcc: 0.25,
    };
    const scored = datasetCsv([
      { ...entries[0], drift },
      { ...entries[1], drift: { error: 'needs 2000 positions, the model has 1024' } },
    ]);
    const [h2, r0, r1] = csvParseRows(scored.trimEnd());
    expect(h2.slice(ROLLOUT_ROW_FIELDS.length)).toEqual([
      'reference',
      'naive-compressed.logdiff',
      'naive-compressed.mu',
      'naive-full.logdiff',
      'naive-full.mu',
      'logit-tree.logdiff',
      'logit-tree.mu',
      'packed-4d.logdiff',
      'packed-4d.mu',
      'sdcc.kl',
      'error',
    ]);
    expect(r0.slice(ROLLOUT_ROW_FIELDS.length)).toEqual(['live', '0.75', '-0.75', '0.1875', '0.1875', '0', '0', '', '', '0.25', '']);
    expect(r1.slice(ROLLOUT_ROW_FIELDS.length)).toEqual(['', '', '', '', '', '', '', '', '', '', 'needs 2000 positions, the model has 1024']);
  });

  it('summary row: the mean of each column over the rows that have a value, per method once scored', () => {
    const drift = (mu: number): DriftRow => ({
      reference: 'live',
      methods: { 'naive-compressed': { logdiff: -mu, mu }, 'naive-full': null, 'logit-tree': { logdiff: 0, mu: 0 }, 'packed-4d': { logdiff: 0, mu: 0 } },
      klSdcc: 0.5,
    });
    const scored: TableEntry[] = [
      { ...entries[0], drift: drift(-0.75) },
      { ...entries[1], drift: drift(-0.25) },
      { ...entries[2], drift: { error: 'too long' } },
    ];
    const columns = [...FIGURE_COLUMNS, ...DRIFT_COLUMNS];
    const means = columnMeans(scored, columns);
    const at = (key: string) => means[columns.findIndex((c) => c.key === key)];
    expect(at('id')).toEqual({ mean: null, count: 0 });
    expect(at('K')).toEqual({ mean: (2 + entries[1].row.K + 2) / 3, count: 3 });
    expect(entries[1].row.reward).toBeNull();
    expect(at('reward')).toEqual({ mean: 1, count: 1 }); // the rollouts without a reward left out, not counted as 0
    expect(at('mu:naive-compressed')).toEqual({ mean: -0.5, count: 2 }); // the unscored row left out
    expect(at('mu:naive-full')).toEqual({ mean: null, count: 0 });
    expect(at('klSdcc')).toEqual({ mean: 0.5, count: 2 });
  });
});

describe('drift per editor over the set', () => {
  const sum = (editor: string, n: number, s: number, cost: number): EditorSum => ({
    editor,
    rollouts: 1,
    edits: 2,
    targets: n,
    cost,
    methods: Object.fromEntries(
      (['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const).map((m) => [
        m,
        { n, sum: m === 'naive-full' ? s : 0, abs: m === 'naive-full' ? Math.abs(s) : 0, mu: null, logdiff: null },
      ]),
    ) as EditorSum['methods'],
  });
  const row = (editors: EditorSum[]): DriftRow => ({ reference: 'live', methods: {} as DriftRow['methods'], klSdcc: null, editors });
  it('sums the scored rows per editor, the costliest first; unscored and failed rows add nothing', () => {
    const scored: TableEntry[] = [
      { ...entries[0], drift: row([sum('compact', 10, 0.6, 1.5)]) },
      { ...entries[1], drift: row([sum('window', 4, -0.2, 0.4)]) },
      { ...entries[2], drift: row([sum('compact', 6, 0.3, 0.5)]) },
      { ...entries[0], index: 3, drift: { error: 'needs 2000 positions, the model has 1024' } },
      { ...entries[0], index: 4 },
    ];
    const table = editorTable(scored);
    expect(table.map((e) => [e.editor, e.rollouts, e.edits, e.targets, e.cost])).toEqual([
      ['compact', 2, 4, 16, 2],
      ['window', 1, 2, 4, 0.4],
    ]);
    expect(table[0].methods['naive-full'].sum).toBeCloseTo(0.9, 12);
    expect(table[0].methods['naive-full'].mu).toBeCloseTo(0.9 / 16, 12);
    expect(table[1].methods['naive-full'].logdiff).toBeCloseTo(0.05, 12);
    expect(editorTable(entries)).toEqual([]);
  });
});
