// CSV cells a spreadsheet would run as formulas are neutralised with a leading apostrophe in every
// CSV the page writes (the data-set table, per-target, drift and metric-history CSVs all go through
// csvOf or neutralise); numbers stay numbers.

import { csvParseRows } from 'd3';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import { generateRandomRollout } from '../../rollout/generate-random';
import { rolloutRow } from '../../tree';
import { datasetCsv } from '../core/datasetTable';
import { createHistory, CSV_COLUMNS, historyCsv } from '../core/history';
import { sampleRecord } from '../../testing/sampleRecord';
import { csvOf, neutralise } from './targetRows';

const HOSTILE = ['=HYPERLINK("http://127.0.0.1/x","click")', '+1+cmd', '-2+3', '@SUM(1,1)', '\tleading tab', '\rcarriage', '=1+1'];

describe('CSV formula injection', () => {
  it('neutralises every cell starting with = + - @ tab or carriage return, and only those', () => {
    for (const text of HOSTILE) expect(neutralise(text)).toBe(`'${text}`);
    for (const text of ['plain', 'a=b', "'already", '', ' =spaced', '1-2']) expect(neutralise(text)).toBe(text);
    // Numbers stay numbers, as numbers and as numeric text.
    for (const text of ['-2.5', '+3', '-1e-7', '-.5', '0', '42']) expect(neutralise(text)).toBe(text);
    const csv = csvOf(
      ['a', 'b'],
      [
        [-2.5, '-2+3'],
        [1e-7, null],
        [true, '@SUM(1,1)'],
      ],
    );
    expect(csvParseRows(csv.trim())).toEqual([
      ['a', 'b'],
      ['-2.5', "'-2+3"],
      ['1e-7', ''],
      ['true', "'@SUM(1,1)"],
    ]);
  });

  it('the data-set CSV: hostile rollout ids come out as text, the figures as numbers', () => {
    const rollouts = HOSTILE.map((id, i) => JSON.stringify({ ...generateRandomRollout({ seed: 40 + i, size: 'small', id: 'x' }), id }));
    const parsed = parseRolloutFile(rollouts.join('\n'), 'hostile.jsonl');
    const rows = csvParseRows(datasetCsv(parsed.map((r, index) => ({ index, row: rolloutRow(r) }))).trim());
    const id = rows[0].indexOf('id');
    expect(rows.slice(1).map((r) => r[id])).toEqual(HOSTILE.map((h) => `'${h}`));
    const length = rows[0].indexOf('physicalLength');
    for (const [i, r] of rows.slice(1).entries()) expect(r[length]).toBe(String(rolloutRow(parsed[i]).physicalLength));
  });

  it('the metric-history CSV: negative figures stay numbers', () => {
    const record = sampleRecord({ loss: 2, taskLoss: 2, logdiff: -2.5, mu: -1e-8, reward: -0.5 });
    const [, row] = csvParseRows(historyCsv(createHistory([record])).trim());
    expect(row[CSV_COLUMNS.indexOf('logdiff')]).toBe('-2.5');
    expect(row[CSV_COLUMNS.indexOf('mu')]).toBe('-1e-8');
    expect(row[CSV_COLUMNS.indexOf('reward')]).toBe('-0.5');
  });
});
