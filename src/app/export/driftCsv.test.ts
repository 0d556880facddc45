import { readFileSync } from 'node:fs';
import { csvParse } from 'd3';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import { driftOf } from '../core/drift';
import { buildViewData } from '../core/viewData';
import type { MethodScores } from '../protocol/score';
import { driftCsv } from './driftCsv';

const view = buildViewData(parseRolloutFile(readFileSync(new URL('../../../fixtures/worked-example.json', import.meta.url), 'utf8'), 'w.json')[0]);
const rows = (n: number, special: Record<number, number[]> = {}) => Float32Array.from(Array.from({ length: n }, (_, i) => special[i] ?? [1, 0, 0]).flat());
const all = Int32Array.from([2, 3, 7, 8, 13, 14, 15, 16]);
const scores: MethodScores[] = [
  { method: 'naive-compressed', ids: Int32Array.from([13, 14, 15, 16]), logprobs: Float64Array.from([-5, -2, -2, -1]), rows: rows(4, { 0: [0, 1, 0] }) },
  { method: 'logit-tree', ids: all, logprobs: Float64Array.from([-1, -2, -1, -2, -3, -1, -2, -1]), rows: rows(8) },
];

describe('per-target drift CSV', () => {
  it('every target with its facts, each method’s score and its difference to the live score, SDCC’s KL at diverging leaves', () => {
    const drift = driftOf(view, scores);
    const table = csvParse(driftCsv(view, drift));
    expect(table.map((r) => r.id)).toEqual(['2', '3', '7', '8', '13', '14', '15', '16']);
    // The worked example's logprobs are hand-made (not this model's): no column against them.
    expect(table.columns).not.toContain('naive-compressed.minusRollout');
    const t13 = table.find((r) => r.id === '13')!;
    expect(t13).toMatchObject({
      diverging: 'true',
      evictionMass: '4',
      rolloutLogprob: '-0.75',
      'live.logprob': '-3',
      'naive-compressed.logprob': '-5',
      'naive-compressed.minusLive': '-2',
      'logit-tree.minusLive': '0',
    });
    expect(Number(t13['sdcc.kl'])).toBeCloseTo(drift.sdcc.kl.get(13)!, 12);
    const t2 = table.find((r) => r.id === '2')!;
    expect(t2).toMatchObject({ dropped: 'true', 'naive-compressed.logprob': '', 'sdcc.kl': '' });
  });
});
