// One live chart: steps on x, a metric on y (d3 scales, linear or log), one line per method in the
// palette's colour, the latest value labelled at the right edge, and under them, where the run
// matches a shipped experiment, its reference curves dashed (mean over seeds, a band for their
// range). Drawn on a Surface: the page's canvas or an exported SVG file.

import { groups, max, maxIndex, min, minIndex, scaleLinear, scaleLog, type ScaleContinuousNumeric } from 'd3';
import type { Objective } from '../../../gpu/train';
import type { Method } from '../../../plan/types';
import { INK, METHOD_BY_ID } from '../../../present/palette';
import type { MetricRecord } from '../../../run/engine';
import type { ReferencePoint } from '../../../run/reference';
import { LOG_FLOOR, type ChartSpec } from './specs';
import type { Surface } from './surface';

export interface Series {
  method: Method;
  color: string;
  /** [step, value] in step order. */
  points: [number, number][];
}

/** A shipped experiment's curve for one method: dashed, with its seeds' range as a band. */
export type ReferenceSeries = Omit<Series, 'points'> & { points: readonly ReferencePoint[] };

export interface ChartFrame {
  width: number;
  height: number;
  /** Draw the title and note too (exports; the page shows them in HTML). */
  header?: { title: string; note: string };
  /** Steps of a fixed-length run: the x axis spans them from the start. */
  totalSteps?: number;
  references?: readonly ReferenceSeries[];
  /** A run exists (started, paused or finished): without one the charts wait for the first. */
  run?: boolean;
}

/** What an empty chart says: before a run, that it fills once one starts; in a run, why this one is empty. */
export function emptyChartText(series: readonly Series[], run: boolean): string {
  if (!run) return 'fills in when a training run starts';
  return series.length ? 'no data yet: the first points come with the first steps' : 'no method of this run records this metric';
}

const MARGIN = { left: 46, right: 74, top: 10, bottom: 22 };
const HEADER_H = 38;

export function seriesOf(spec: ChartSpec, lanes: ReadonlyMap<Method, readonly MetricRecord[]>, objective: Objective): Series[] {
  const out: Series[] = [];
  for (const [method, records] of lanes) {
    if (spec.only && !spec.only.includes(method)) continue;
    const points: [number, number][] = [];
    for (const r of records) {
      const v = spec.value(r, objective);
      if (v !== null && Number.isFinite(v)) points.push([r.step, v]);
    }
    out.push({ method, color: METHOD_BY_ID[method].color, points });
  }
  return out;
}

/** At most ~2 points per pixel column: keeps the first, the last, and each column's extremes. */
function thin(points: readonly [number, number][], x: (s: number) => number): [number, number][] {
  if (points.length < 600) return points.slice();
  const out = groups(points, (p) => Math.floor(x(p[0]))).flatMap(([, column]) => {
    const lo = column[minIndex(column, (p) => p[1])];
    const hi = column[maxIndex(column, (p) => p[1])];
    return lo[0] <= hi[0] ? [lo, hi] : [hi, lo];
  });
  const last = points[points.length - 1];
  if (out[out.length - 1] !== last) out.push(last);
  return out;
}

export function drawChart(surface: Surface, spec: ChartSpec, series: readonly Series[], frame: ChartFrame): void {
  const x0 = MARGIN.left;
  const y0 = MARGIN.top + (frame.header ? HEADER_H : 0);
  const plotW = Math.max(10, frame.width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, frame.height - y0 - MARGIN.bottom);
  if (frame.header) {
    surface.text(frame.header.title, 12, 18, { color: INK.text, size: 13, weight: 600 });
    surface.text(frame.header.note, 12, 34, { color: INK.muted, size: 11 });
  }
  surface.rect(INK.bg, x0, y0, plotW, plotH);

  const floored = (v: number) => (spec.log ? Math.max(v, LOG_FLOOR) : v);
  const references = frame.references ?? [];
  const bands = references.flatMap((r) => r.points);
  const points = series.flatMap((s) => s.points);
  const maxStep = Math.max(frame.totalSteps ?? 0, max(bands, (p) => p.update) ?? 0, max(points, (p) => p[0]) ?? 0);
  let lo = Math.min(min(bands, (p) => p.min) ?? Infinity, min(points, (p) => floored(p[1])) ?? Infinity);
  let hi = Math.max(max(bands, (p) => p.max) ?? -Infinity, max(points, (p) => floored(p[1])) ?? -Infinity);
  const empty = !Number.isFinite(lo);
  if (spec.robust && !empty) {
    const values = points.map((p) => p[1]).sort((a, b) => a - b);
    if (values.length >= 8) hi = values[Math.floor(0.95 * (values.length - 1))] * 1.25;
  }
  if (!empty && !spec.log) {
    lo = Math.min(lo, ...(spec.include ?? []));
    hi = Math.max(hi, ...(spec.include ?? []));
  }
  const x = scaleLinear()
    .domain([0, Math.max(1, maxStep)])
    .range([x0, x0 + plotW]);
  let y: ScaleContinuousNumeric<number, number>;
  if (spec.log) {
    const a = empty ? LOG_FLOOR : lo;
    const b = empty ? 1 : hi;
    y = scaleLog()
      .domain([a, Math.max(b, a * 10)])
      .range([y0 + plotH, y0])
      .nice();
  } else {
    let a = empty ? 0 : lo;
    let b = empty ? 1 : hi;
    if (b - a < 1e-12) {
      const pad = Math.max(Math.abs(a) * 0.1, 1e-3);
      a -= pad;
      b += pad;
    }
    y = scaleLinear()
      .domain([a, b])
      .range([y0 + plotH, y0])
      .nice(5);
  }

  // An empty chart has no scale to read: grid lines, no numbers (an empty step-time axis read "1 ms, 1 ms, 1 ms, 0 ms").
  const yTicks = spec.log ? logTicks(y) : y.ticks(4);
  for (const t of yTicks) {
    const py = Math.round(y(t)) + 0.5;
    surface.polyline(INK.grid, 1, [
      [x0, py],
      [x0 + plotW, py],
    ]);
    if (empty) continue;
    const label = spec.log && t <= LOG_FLOOR ? `≤${spec.format(t)}` : spec.format(t);
    surface.text(label, x0 - 6, py, { color: INK.muted, size: 10, align: 'right', baseline: 'middle' });
  }
  for (const t of x.ticks(5).filter(Number.isInteger)) {
    const px = Math.round(x(t)) + 0.5;
    surface.polyline(INK.grid, 1, [
      [px, y0],
      [px, y0 + plotH],
    ]);
    surface.text(String(t), px, y0 + plotH + 14, { color: INK.muted, size: 10, align: 'center' });
  }
  surface.polyline(INK.line, 1, [
    [x0, y0],
    [x0, y0 + plotH],
    [x0 + plotW, y0 + plotH],
  ]);

  if (empty) {
    surface.text(emptyChartText(series, frame.run ?? series.length > 0), x0 + plotW / 2, y0 + plotH / 2, {
      color: INK.muted,
      size: 11,
      align: 'center',
      baseline: 'middle',
    });
    return;
  }

  // Reference bands and dashed means first, the live lines over them, then the latest value of each
  // live line at the right edge (labels pushed apart vertically).
  surface.clip(x0, y0 - 2, plotW + 2, plotH + 4);
  const [yLo, yHi] = y.domain();
  const clampY = (v: number) => y(Math.min(Math.max(floored(v), yLo), yHi));
  for (const r of references) {
    const upper = r.points.map((p) => [x(p.update), clampY(p.max)] as [number, number]);
    const lower = r.points.map((p) => [x(p.update), clampY(p.min)] as [number, number]).reverse();
    surface.polygon(r.color, [...upper, ...lower], 0.1);
    surface.polyline(
      r.color,
      1.4,
      r.points.map((p) => [x(p.update), clampY(p.mean)] as [number, number]),
      [5, 4],
    );
  }
  if (references.length && !series.some((s) => s.points.length)) {
    // Two short lines: a chart is about 220 px wide in a three-column panel.
    const note = { color: INK.muted, size: 10.5, align: 'center' } as const;
    surface.text('dashed: the shipped experiment', x0 + plotW / 2, y0 + 14, note);
    surface.text('live lines from the first evaluation', x0 + plotW / 2, y0 + 28, note);
  }
  for (const s of series) {
    const pts = thin(s.points, x).map(([step, v]) => [x(step), clampY(v)] as [number, number]);
    if (pts.length === 1) surface.circle(s.color, pts[0][0], pts[0][1], 2.5);
    else surface.polyline(s.color, 1.6, pts);
  }
  surface.unclip();
  // The latest value of each line at the right edge; lines ending on the same label share it.
  const byText = new Map<string, { text: string; colors: string[]; py: number }>();
  for (const s of series) {
    if (!s.points.length) continue;
    const [step, v] = s.points[s.points.length - 1];
    const py = clampY(v);
    surface.circle(s.color, x(step), py, 2.5);
    const text = spec.format(v);
    const g = byText.get(text);
    if (g) g.colors.push(s.color);
    else byText.set(text, { text, colors: [s.color], py });
  }
  const labels = [...byText.values()].sort((a, b) => a.py - b.py);
  const gap = 12;
  // Push apart downwards, then pull back up from the bottom edge.
  for (let i = 1; i < labels.length; i++) labels[i].py = Math.max(labels[i].py, labels[i - 1].py + gap);
  const bottom = y0 + plotH;
  for (let i = labels.length - 1; i >= 0; i--) {
    const limit = i === labels.length - 1 ? bottom : labels[i + 1].py - gap;
    labels[i].py = Math.min(labels[i].py, limit);
  }
  for (const l of labels) {
    let lx = x0 + plotW + 6;
    if (l.colors.length > 1) {
      for (const c of l.colors) {
        surface.rect(c, lx, l.py - 3, 4, 6);
        lx += 5;
      }
      lx += 2;
    }
    surface.text(l.text, lx, l.py, { color: l.colors.length > 1 ? INK.text : l.colors[0], size: 10.5, weight: 600, baseline: 'middle' });
  }
}

function logTicks(y: ScaleContinuousNumeric<number, number>): number[] {
  const [a, b] = y.domain();
  const out: number[] = [];
  const first = Math.ceil(Math.log10(a));
  const lastExp = Math.floor(Math.log10(b));
  const step = Math.max(1, Math.ceil((lastExp - first + 1) / 5));
  for (let e = first; e <= lastExp; e += step) out.push(10 ** e);
  return out;
}
