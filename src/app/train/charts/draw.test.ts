// What a chart says when it has nothing to draw, and that it prints no made-up axis numbers then;
// with points, the axis labels are the data's.
import { describe, expect, it } from 'vitest';
import { drawChart, emptyChartText, type Series } from './draw';
import { CHARTS } from './specs';
import type { Surface } from './surface';

function texts(series: Series[], run: boolean): string[] {
  const out: string[] = [];
  const surface: Surface = { rect() {}, polyline() {}, circle() {}, polygon() {}, clip() {}, unclip() {}, text: (t) => void out.push(t) };
  drawChart(surface, CHARTS.find((c) => c.id === 'time')!, series, { width: 320, height: 160, run });
  return out;
}

describe('an empty chart', () => {
  it('before a run says it fills once a run starts, and labels no axis values', () => {
    const shown = texts([], false);
    expect(shown).toContain('fills in when a training run starts');
    expect(shown.filter((t) => t.endsWith(' ms'))).toEqual([]);
    expect(emptyChartText([], false)).not.toMatch(/lane/);
  });
  it('in a run says why it is empty', () => {
    const lane: Series = { method: 'packed-4d', color: '#fff', points: [] };
    expect(texts([lane], true)).toContain('no data yet: the first points come with the first steps');
    expect(emptyChartText([], true)).toBe('no method of this run records this metric');
  });
  it('with points, labels the step-time axis with distinct values from the data', () => {
    const lane: Series = {
      method: 'packed-4d',
      color: '#fff',
      points: [
        [1, 40],
        [2, 55],
        [3, 48],
      ],
    };
    const ms = texts([lane], true).filter((t) => t.endsWith(' ms'));
    expect(ms).toContain('48 ms'); // the latest value at the right edge
    const axis = ms.slice(0, -1);
    expect(new Set(axis).size).toBe(axis.length);
  });
});
