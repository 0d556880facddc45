import { csvParseRows } from 'd3';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile, validateRollout } from '../../rollout';
import { buildViewData } from '../core/viewData';
import { targetsCsv } from './targetsCsv';

const text = readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8');
const view = buildViewData(parseRolloutFile(text, 'worked-example.json')[0]);

describe('per-target CSV', () => {
  const lines = targetsCsv(view).trim().split('\n');
  const header = lines[0].split(',');
  const row = (id: number) =>
    Object.fromEntries(
      lines
        .find((l) => l.startsWith(`${id},`))!
        .split(',')
        .map((v, i) => [header[i], v]),
    );
  it('has one row per target', () => {
    expect(lines).toHaveLength(9);
  });
  it('writes the section-3 facts and each method prefix length (its position id)', () => {
    expect(row(13)).toMatchObject({
      segment: '1',
      dropped: 'false',
      diverging: 'true',
      evictionMass: '4',
      livePrefixLength: '8',
      finalPrefixLength: '4',
      fullPrefixLength: '13',
      scoringNode: '15',
      'naive-compressed.prefixLength': '4',
      'naive-full.prefixLength': '13',
      'logit-tree.prefixLength': '8',
      'packed-4d.prefixLength': '8',
      'sdcc.prefixLength': '4',
      'sdcc.teacherPrefixLength': '8',
    });
    expect(row(2)).toMatchObject({ dropped: 'true', evictionMass: '', finalPrefixLength: '', 'naive-compressed.prefixLength': '' });
  });
  it('quotes a token label holding a comma or a quote, so the table opens with its columns intact', () => {
    const events = [
      { op: 'append', role: 'prompt', tokens: [10] },
      { op: 'append', role: 'act', tokens: [44, 34], logprobs: [-1, -2] }, // ',' and '"'
    ];
    const json = { format: 'memorywalker.rollout/v1', id: 'q', vocab: 272, events };
    const [header, comma, quote] = csvParseRows(targetsCsv(buildViewData(validateRollout(json, { file: 'q.json' }))));
    expect(comma.slice(0, 4)).toEqual(['1', '44', ',', '0']);
    expect(quote.slice(0, 4)).toEqual(['2', '34', '"', '0']);
    expect([comma.length, quote.length]).toEqual([header.length, header.length]);
  });
});
