// The experiment matrix as files a person reads: table.md (the paper's Table 1 shape, editor ×
// method, plus the checkpoint's drift and the rollouts' structure) and SVG plots built as strings
// with d3's scales and shapes (no DOM), in the methods' colours the app uses too (src/present/palette.ts).

import { format, line, scaleBand, scaleLinear, scaleLog, scaleSqrt } from 'd3';
import { INK, METHOD_BY_ID } from '../present/palette';
import { duration } from '../present/progress';
import { describeConfig } from '../model/config';
import { formatEnvSpec } from '../harness/env';
import { describeSampling, FULL_SAMPLING, isFullSampling } from '../harness/policies/model';
import { SEQUENCE_METHODS, type Method } from '../plan/types';
import type { EditorResult, MatrixResults, RunRecord } from './matrix';

// ---------------------------------------------------------------------------------------------
// Numbers.

/** A drift-sized number: fixed to 4 decimals from 1e-3 up, else 2 significant digits in e-notation. */
export function formatDrift(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (v === 0) return '0';
  return Math.abs(v) >= 1e-3 ? v.toFixed(4) : v.toExponential(1);
}

const pct = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : `${Math.round(100 * v)}%`);
export const fixed = (v: number | null | undefined, digits: number) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(digits));

/** The method step times are relative to: naive-compressed when it ran, else the first method. */
function timeReference(result: EditorResult, methods: readonly Method[]): Method | null {
  const order = methods.includes('naive-compressed') ? ['naive-compressed' as Method, ...methods] : methods;
  return order.find((m) => result.runs[m]?.summary.stepMs != null) ?? null;
}

export const label = (m: Method) => METHOD_BY_ID[m].label;

// ---------------------------------------------------------------------------------------------
// table.md

/** A Markdown table; `align` has one letter per column, l or r (e.g. 'llrr'). */
export function mdTable(headers: string[], rows: string[][], align: string): string {
  const rule = [...align].map((a) => (a === 'r' ? '---:' : ':---'));
  return [headers, rule, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n') + '\n';
}

export function matrixTable(results: MatrixResults, meta: { checkpoint: string | null } = { checkpoint: null }): string {
  const c = results.config;
  const methods = c.methods;
  const rows: string[][] = [];
  for (const r of results.editors) {
    const ref = timeReference(r, methods);
    const refMs = ref ? r.runs[ref]!.summary.stepMs! : null;
    for (const m of methods) {
      const run = r.runs[m];
      if (!run) continue;
      const s = run.summary;
      const rel = s.stepMs !== null && refMs ? `${(s.stepMs / refMs).toFixed(2)}×` : '–';
      const kl = m === 'sdcc' ? `${formatDrift(s.klSdcc)} (${s.klFiredSteps}/${s.updates})` : '–';
      rows.push([
        r.editor,
        m,
        formatDrift(s.logdiff),
        formatDrift(s.mu),
        kl,
        fixed(s.meanReward, 3),
        `${fixed(r.baseline.em, 3)} → ${fixed(run.final.em, 3)}`,
        `${rel} (${s.stepMs === null ? '–' : Math.round(s.stepMs)} ms)`,
        s.tokensPerStep === null ? '–' : String(Math.round(s.tokensPerStep)),
        `${s.updates}${s.skipped ? ` (+${s.skipped} skipped)` : ''}${run.stopped ? ' stopped' : ''}`,
      ]);
    }
  }
  const driftRows = results.editors.flatMap((r) =>
    SEQUENCE_METHODS.map((m) => {
      const d = r.drift.methods[m];
      const sign = d.sign.rollout;
      // Results written before the expected drift existed have none.
      const e = r.expected?.methods[m];
      return [
        r.editor,
        m,
        String(d.n),
        formatDrift(d.logdiff),
        formatDrift(d.mu),
        sign.negativeShare === null ? '–' : `${pct(sign.negativeShare)} of ${sign.diverging}`,
        formatDrift(d.conditioningDrift),
        formatDrift(e?.mu),
        e?.sign.negativeShare == null ? '–' : `${pct(e.sign.negativeShare)} of ${e.sign.diverging}`,
      ];
    }),
  );
  const structure = results.editors.map((r) => {
    const b = r.rollouts.batch;
    return [
      r.editor,
      `${b.usable}/${b.rollouts}`,
      fixed(b.K, 2),
      String(b.divergingLeaves),
      String(b.droppedTargets),
      fixed(b.packedRatio, 2),
      Object.entries(b.stops)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
      fixed(b.meanReward, 3),
      fixed(b.em, 3),
    ];
  });
  // Results written before the drift batch had its own sampler drew it like the training batches.
  const driftSampling = c.driftSampling ?? FULL_SAMPLING;
  const trainLike = isFullSampling(driftSampling);
  return [
    '# Experiment matrix\n',
    `Model ${meta.checkpoint ? `\`${meta.checkpoint}\` ` : ''}(${describeConfig(results.model)}); environment \`${formatEnvSpec(c.env)}\`; ` +
      `batches of ${c.n} prompts × ${c.group} rollouts, seed ${c.seed}; ${c.steps} on-policy RL update${c.steps === 1 ? '' : 's'} per run ` +
      `(PPO-clipped, GRPO advantages, constant lr ${c.lr}${methods.includes('sdcc') ? `, SDCC λ ${c.lambda}` : ''}) from the same checkpoint. ` +
      `Training batches are sampled at temperature ${c.trainTemperature}; EM is measured on a held-out batch of ${c.evalN} prompts decoded greedily ` +
      `(temperature ${c.evalTemperature}). Episodes decode within ${c.episode.maxContext} positions. Took ${duration(results.seconds)}.\n`,
    '## Table 1: editor × method\n',
    "logdiff = mean |ℓ_train − ℓ_rollout| and μ = mean (ℓ_train − ℓ_rollout) over the targets of each update's on-policy batch, averaged over the run " +
      "(sdcc: its student, the compressed walk); EM = held-out exact match after the run (EM₀: the checkpoint's); " +
      'KL_SDCC = mean KL at diverging leaves (updates where it fired / updates); reward = mean reward of the on-policy batches; ' +
      'step = median update time relative to naive-compressed (first update left out from three updates on: it compiles pipelines); ' +
      "rows = mean rows through the model per update (the packed input, SDCC's teacher included). " +
      'On-policy, the rollout logprobs are the live-prefix scores of the weights being trained, so logdiff is also the conditioning drift.\n',
    mdTable(['editor', 'method', 'logdiff', 'μ', 'KL_SDCC (fired)', 'reward', 'EM₀ → EM', 'step', 'rows', 'updates'], rows, 'llrrrrrrrr'),
    '## Drift at the checkpoint\n',
    `Every scoring method on the checkpoint's own rollouts (sampled at ${describeSampling(driftSampling)}${trainLike ? "; update 1's batch" : ', logprobs recorded at T=1'}), ` +
      'against their rollout-time logprobs; ' +
      `negative = share of the targets with |difference| > ${results.editors[0]?.drift.signEpsilon ?? 1e-4} whose difference is below zero ` +
      '(naive-compressed: time-travel leakage, expected mostly negative; naive-full: stale context, expected mostly positive). ' +
      `expected μ = the mean over targets of the signed drift the batch's sampler should expect there, Σ_a s(a)(log q_m(a) − log p(a)), exact ` +
      '(μ averages one sample per target); at temperature 1 it is −KL(p ‖ q_m) ≤ 0 for every method. Histograms: drift-<editor>.svg.\n',
    mdTable(['editor', 'method', 'n', 'logdiff', 'μ', 'negative', 'cond. drift', 'expected μ', 'expected negative'], driftRows, 'llrrrrrrr'),
    '## Rollouts\n',
    "The checkpoint's batch per editor: rollouts used (every method replays them within the model's positions) of those generated, " +
      'mean K, diverging leaves D, dropped targets, N_packed / final-walk length, how episodes ended, mean reward and EM (sampled).\n',
    mdTable(['editor', 'used', 'K', 'D', 'dropped', 'packed ratio', 'stops', 'reward', 'EM'], structure, 'lrrrrrlrr'),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// SVG

const FONT = 'font-family="ui-sans-serif, system-ui, sans-serif"';

export function text(x: number, y: number, content: string, attrs = ''): string {
  const escaped = content.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${escaped}</text>`;
}

export function svg(width: number, height: number, body: string[]): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">\n` +
    `<rect width="${width}" height="${height}" fill="${INK.bg}"/>\n${body.join('\n')}\n</svg>\n`
  );
}

/** A bottom axis: rule, ticks and labels at `ticks`. */
export function xAxis(scale: (v: number) => number, ticks: number[], y: number, fmt: (v: number) => string): string {
  return ticks
    .map((t) => {
      const x = scale(t);
      return (
        `<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${y}" y2="${y + 4}" stroke="${INK.muted}"/>` +
        text(x, y + 16, fmt(t), `fill="${INK.muted}" text-anchor="middle" font-size="10"`)
      );
    })
    .join('\n');
}

export function yAxis(scale: { (v: number): number; ticks(n: number): number[] }, x: number, width: number, fmt: (v: number) => string, count = 4): string {
  return scale
    .ticks(count)
    .map((t) => {
      const y = scale(t);
      return (
        `<line x1="${x}" x2="${x + width}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${INK.grid}"/>` +
        text(x - 6, y + 3, fmt(t), `fill="${INK.muted}" text-anchor="end" font-size="10"`)
      );
    })
    .join('\n');
}

/**
 * Histograms of the signed drift ℓ_m − ℓ_rollout of every scoring method on the checkpoint's
 * rollouts of one editor: one panel per method on the shared range, in the method's colour. Counts
 * on a square-root scale: the undisturbed targets pile up in the bin around 0 and would flatten
 * the tails, which are the drift.
 */
export function driftSvg(result: EditorResult): string {
  const width = 800;
  const panel = 96;
  const top = 58;
  const left = 220;
  const right = 20;
  const height = top + SEQUENCE_METHODS.length * panel + 44;
  const edges = result.drift.methods[SEQUENCE_METHODS[0]].histogram.rollout.edges;
  const x = scaleLinear()
    .domain([edges[0], edges[edges.length - 1]])
    .range([left, width - right]);
  const b = result.rollouts.batch;
  const subtitle =
    `checkpoint's own rollouts: ${b.usable} used of ${b.rollouts}, K mean ${b.K.toFixed(2)}, ${b.divergingLeaves} diverging leaves, ` +
    `${result.drift.withLogprobs} targets with rollout logprobs; counts on a √ scale`;
  const body: string[] = [
    text(16, 22, `Signed drift ℓ_method − ℓ_rollout per target — editor ${result.editor}`, `fill="${INK.text}" font-size="15" font-weight="600"`),
    text(16, 40, subtitle, `fill="${INK.muted}"`),
  ];
  SEQUENCE_METHODS.forEach((m, i) => {
    const h = result.drift.methods[m].histogram.rollout;
    const d = result.drift.methods[m];
    const y0 = top + i * panel;
    const y1 = y0 + panel - 22;
    const maxCount = Math.max(1, ...h.counts);
    const y = scaleSqrt()
      .domain([0, maxCount])
      .range([y1, y0 + 16]);
    const color = METHOD_BY_ID[m].color;
    body.push(`<rect x="${left}" y="${y0 + 10}" width="${width - left - right}" height="${y1 - y0 - 10}" fill="${INK.panel}"/>`);
    h.counts.forEach((count, k) => {
      if (count === 0) return;
      const xa = x(h.edges[k]) + 0.5;
      const xb = x(h.edges[k + 1]) - 0.5;
      body.push(
        `<rect x="${xa.toFixed(1)}" y="${y(count).toFixed(1)}" width="${Math.max(1, xb - xa).toFixed(1)}" height="${(y1 - y(count)).toFixed(1)}" fill="${color}"/>`,
      );
    });
    body.push(
      `<line x1="${x(0).toFixed(1)}" x2="${x(0).toFixed(1)}" y1="${y0 + 10}" y2="${y1}" stroke="${INK.text}" stroke-dasharray="3,3" stroke-opacity="0.6"/>`,
    );
    body.push(`<line x1="${left}" x2="${width - right}" y1="${y1}" y2="${y1}" stroke="${INK.line}"/>`);
    body.push(text(16, y0 + 26, label(m), `fill="${color}" font-size="13" font-weight="600"`));
    const sign = d.sign.rollout;
    const lines = [
      `n ${d.n} (tallest bin ${maxCount})`,
      `logdiff ${formatDrift(d.logdiff)}, μ ${formatDrift(d.mu)}`,
      sign.negativeShare === null ? 'no |diff| > 1e-4' : `|diff| > 1e-4: ${sign.diverging}, ${pct(sign.negativeShare)} < 0`,
    ];
    lines.forEach((l, j) => body.push(text(16, y0 + 42 + 14 * j, l, `fill="${INK.muted}" font-size="11"`)));
  });
  const axisY = top + SEQUENCE_METHODS.length * panel - 22;
  const span = edges[edges.length - 1] - edges[0];
  const fmt = format(span < 0.02 ? '.1e' : '.2~f');
  body.push(xAxis(x, x.ticks(8), axisY, fmt));
  body.push(
    text(
      (left + width - right) / 2,
      axisY + 34,
      `ℓ_method − ℓ_rollout (nats), ${edges.length - 1} bins on one range for all methods`,
      `fill="${INK.muted}" text-anchor="middle" font-size="11"`,
    ),
  );
  return svg(width, height, body);
}

/**
 * Curves of one editor's RL runs: batch reward and logdiff per update, and held-out EM before and
 * after. Methods are dodged a few pixels apart on the update axis so equal values stay visible.
 */
export function curvesSvg(result: EditorResult, methods: readonly Method[]): string {
  const width = 1040;
  const height = 380;
  const top = 90;
  const bottom = 316;
  const runs = methods.map((m) => result.runs[m]).filter((r): r is RunRecord => r !== undefined);
  const updates = Math.max(1, ...runs.map((r) => r.steps.length));
  const panels = [
    { x0: 56, x1: 336 },
    { x0: 404, x1: 684 },
    { x0: 740, x1: 1024 },
  ];
  const body: string[] = [text(16, 22, `RL runs from the checkpoint — editor ${result.editor}`, `fill="${INK.text}" font-size="15" font-weight="600"`)];
  let lx = 16;
  for (const r of runs) {
    const c = METHOD_BY_ID[r.method].color;
    body.push(`<rect x="${lx}" y="36" width="12" height="12" fill="${c}"/>`);
    body.push(text(lx + 16, 46, label(r.method), `fill="${INK.text}"`));
    lx += 34 + label(r.method).length * 7;
  }

  const dodge = (i: number) => (i - (runs.length - 1) / 2) * 3;
  const xStep = (p: { x0: number; x1: number }) =>
    scaleLinear()
      .domain(updates === 1 ? [0.5, 1.5] : [1, updates])
      .range([p.x0 + 12, p.x1 - 12]);
  const frame = (p: { x0: number; x1: number }, title: string) =>
    `<rect x="${p.x0}" y="${top}" width="${p.x1 - p.x0}" height="${bottom - top}" fill="${INK.panel}"/>` +
    text(p.x0, top - 10, title, `fill="${INK.text}" font-size="12" font-weight="600"`);
  const stepAxis = (p: { x0: number; x1: number }) => {
    const x = xStep(p);
    const ticks = x.ticks(Math.min(updates, 6)).filter((t) => Number.isInteger(t) && t >= 1 && t <= updates);
    return xAxis(x, ticks, bottom, String) + text((p.x0 + p.x1) / 2, bottom + 34, 'update', `fill="${INK.muted}" text-anchor="middle" font-size="11"`);
  };
  /** A panel of one curve per run over the updates: its frame, its grid, the curves, the update axis. */
  const curvePanel = (
    p: { x0: number; x1: number },
    title: string,
    grid: string[],
    y: (v: number) => number,
    points: (r: RunRecord) => [number, number | null][],
  ) => {
    const x = xStep(p);
    const out: string[] = [];
    runs.forEach((r, i) => {
      const c = METHOD_BY_ID[r.method].color;
      const pts = points(r).filter((q): q is [number, number] => q[1] !== null && Number.isFinite(q[1]));
      const path = line<[number, number]>()
        .x((q) => x(q[0]) + dodge(i))
        .y((q) => y(q[1]))(pts);
      if (path && pts.length > 1) out.push(`<path d="${path}" fill="none" stroke="${c}" stroke-width="2" stroke-opacity="0.85"/>`);
      for (const q of pts) out.push(`<circle cx="${(x(q[0]) + dodge(i)).toFixed(1)}" cy="${y(q[1]).toFixed(1)}" r="3" fill="${c}"/>`);
    });
    body.push(frame(p, title), ...grid, out.join('\n'), stepAxis(p));
  };

  // (a) Mean reward of each update's on-policy batch.
  const rewards = runs.flatMap((r) => r.steps.map((s) => s.batch.meanReward));
  const yReward = scaleLinear()
    .domain([Math.min(0, ...rewards), Math.max(1, ...rewards)])
    .range([bottom, top + 6]);
  const rewardGrid = yAxis(yReward, panels[0].x0, panels[0].x1 - panels[0].x0, format('.1f'));
  curvePanel(panels[0], 'batch mean reward (sampled, T = 1)', [rewardGrid], yReward, (r) => r.steps.map((s) => [s.update, s.batch.meanReward]));

  // (b) logdiff per update on a log scale: the exact methods sit orders of magnitude below the naive ones.
  const logdiffs = runs.flatMap((r) => r.steps.map((s) => s.metrics?.logdiff ?? null)).filter((v): v is number => v !== null && Number.isFinite(v));
  const positive = logdiffs.filter((v) => v > 0);
  const lo = positive.length ? Math.max(1e-9, Math.min(...positive) / 2) : 1e-7;
  const hi = Math.max(lo * 100, ...logdiffs.map((v) => v * 2));
  const yLog = scaleLog()
    .domain([lo, hi])
    .range([bottom, top + 6])
    .clamp(true);
  const decades = yLog.ticks().filter((t) => Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9);
  const logGrid = decades.flatMap((t) => [
    `<line x1="${panels[1].x0}" x2="${panels[1].x1}" y1="${yLog(t).toFixed(1)}" y2="${yLog(t).toFixed(1)}" stroke="${INK.grid}"/>`,
    text(panels[1].x0 - 6, yLog(t) + 3, format('.0e')(t), `fill="${INK.muted}" text-anchor="end" font-size="10"`),
  ]);
  const logTitle = 'logdiff |ℓ_train − ℓ_rollout| (log scale)';
  curvePanel(
    panels[1],
    logTitle,
    logGrid,
    (v) => yLog(Math.max(v, lo)),
    (r) => r.steps.map((s) => [s.update, s.metrics?.logdiff ?? null]),
  );

  // (c) Held-out EM after each run; the checkpoint's as a dashed line.
  const p = panels[2];
  const yEm = scaleLinear()
    .domain([0, 1])
    .range([bottom, top + 6]);
  const band = scaleBand<string>()
    .domain(runs.map((r) => r.method))
    .range([p.x0 + 8, p.x1 - 8])
    .padding(0.3);
  const prompts = `${result.baseline.rollouts} prompt${result.baseline.rollouts === 1 ? '' : 's'}`;
  body.push(frame(p, `held-out EM (greedy, ${prompts})`));
  body.push(text(p.x1 - 6, top + 16, `dashed: checkpoint ${result.baseline.em.toFixed(2)}`, `fill="${INK.edit}" text-anchor="end" font-size="11"`));
  body.push(yAxis(yEm, p.x0, p.x1 - p.x0, format('.1f'), 5));
  for (const r of runs) {
    const x = band(r.method)!;
    const c = METHOD_BY_ID[r.method].color;
    const y = yEm(r.final.em);
    body.push(
      `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${band.bandwidth().toFixed(1)}" height="${Math.max(0, bottom - y).toFixed(1)}" fill="${c}"/>`,
    );
    body.push(text(x + band.bandwidth() / 2, y - 4, r.final.em.toFixed(2), `fill="${INK.text}" text-anchor="middle" font-size="10"`));
    body.push(text(x + band.bandwidth() / 2, bottom + 16, METHOD_BY_ID[r.method].short, `fill="${c}" text-anchor="middle" font-size="10"`));
  }
  const yb = yEm(result.baseline.em);
  body.push(`<line x1="${p.x0}" x2="${p.x1}" y1="${yb.toFixed(1)}" y2="${yb.toFixed(1)}" stroke="${INK.edit}" stroke-width="1.5" stroke-dasharray="5,4"/>`);
  return svg(width, height, body);
}
