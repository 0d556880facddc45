import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../run/engine';
import { appendRecords, createHistory, CSV_COLUMNS, CSV_MISMATCH_COLUMNS, historyCsv, historyJsonl } from './history';
import { mismatchFigures } from '../../metrics/mismatch';
import { sampleRecord } from '../../testing/sampleRecord';

const record = (method: MetricRecord['method'], step: number, loss: number): MetricRecord =>
  sampleRecord({
    step,
    method,
    loss,
    taskLoss: loss,
    logdiff: step === 1 ? null : 1e-7,
    rollout_corr: step === 1 ? null : mismatchFigures([{ train: [-0.5, -1], rollout: [-0.25, -1] }]),
    time: 1_700_000_000_000 + step,
  });

describe('metric history', () => {
  it('keeps one record per lane and step: a retried or restored step replaces the later ones', () => {
    const h = createHistory([record('packed-4d', 1, 5), record('packed-4d', 2, 4), record('sdcc', 1, 6)]);
    appendRecords(h, [record('packed-4d', 2, 3.5), record('packed-4d', 3, 3)]);
    expect(h.byMethod.get('packed-4d')!.map((r) => [r.step, r.loss])).toEqual([
      [1, 5],
      [2, 3.5],
      [3, 3],
    ]);
    expect(h.byMethod.get('sdcc')!.length).toBe(1);
  });

  it('exports JSONL (one record a line) and CSV (one header, empty cells for null)', () => {
    const h = createHistory([record('sdcc', 1, 6), record('packed-4d', 1, 5), record('packed-4d', 2, 4)]);
    const lines = historyJsonl(h)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((r) => `${r.step}:${r.method}`)).toEqual(['1:packed-4d', '1:sdcc', '2:packed-4d']);
    const csv = historyCsv(h).trim().split('\n');
    expect(csv[0]).toBe([...CSV_COLUMNS, ...CSV_MISMATCH_COLUMNS].join(','));
    expect(csv[0]).toContain('rollout_corr/k3_kl');
    expect(csv).toHaveLength(4);
    const first = csv[1].split(',');
    expect(first[CSV_COLUMNS.indexOf('logdiff')]).toBe('');
    expect(first[CSV_COLUMNS.indexOf('klFired')]).toBe('0');
    expect(Number(csv[3].split(',')[CSV_COLUMNS.indexOf('logdiff')])).toBe(1e-7);
    // verl's figures: empty where the step had none, the numbers otherwise (ℓ_rollout − ℓ_train averages 0.25 / 2).
    expect(first[CSV_COLUMNS.length]).toBe('');
    expect(Number(csv[3].split(',')[CSV_COLUMNS.length])).toBeCloseTo(0.125, 12);
  });
});
