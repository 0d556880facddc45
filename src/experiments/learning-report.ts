// The learning experiment as files a person reads: table.md (held-out EM per method, phase and
// editor with the seed range; the training figures beside it, verl's mismatch figures included; the
// SDCC λ sweep) and SVG learning curves (EM vs update, a band over seeds), built as strings with d3's
// scales and shapes in the methods' colours the app uses (src/present/palette.ts).

import { area, format, line, scaleLinear } from 'd3';
import { formatEnvSpec } from '../harness/env';
import { describeConfig } from '../model/config';
import { INK, METHOD_BY_ID } from '../present/palette';
import type { ReferencePoint } from '../run/reference';
import { bandOf, emCurve, summarizeGroups, type GroupSummary, type LearningResults, type Phase, type RunResult } from './learning';
import { mean } from './matrix';
import { duration } from '../present/progress';
import { fixed, formatDrift, label, mdTable, svg, text, xAxis, yAxis } from './report';

const signed = (v: number | null | undefined, digits: number) =>
  v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(digits)}`;
const PHASE_TITLE: Record<Phase, string> = { sft: 'SFT on expert demonstrations', rl: 'on-policy RL (PPO-clipped, GRPO)', sweep: 'SDCC λ sweep (RL)' };

/** "0.31 [0.19–0.44]" */
/** KL_SDCC with the share of updates where it fired; – for a run without SDCC. */
const klCell = (g: GroupSummary) => (g.klSdcc === null ? '–' : `${formatDrift(g.klSdcc)} (${Math.round(100 * (g.klFiredShare ?? 0))}%)`);

function emRange(f: { mean: number; min: number; max: number } | null): string {
  return f ? `${f.mean.toFixed(2)} [${f.min.toFixed(2)}–${f.max.toFixed(2)}]` : '–';
}

export interface LearningMeta {
  command: string;
  /** The machine's load while it ran, e.g. "load average 3.1 on 2 cores". */
  load?: string;
}

export function learningTable(results: LearningResults, meta: LearningMeta): string {
  const c = results.config;
  const groups = summarizeGroups(results);
  const editors = c.editors.map((e) => e.kind);
  const out: string[] = [];
  out.push('# Learning from a weak start\n');
  out.push(`\`${meta.command}\`\n`);
  const base = (editor: string) => {
    const ems = results.baseline.filter((b) => b.editor === editor).map((b) => b.em);
    return ems.length ? `${editor} ${mean(ems)!.toFixed(2)} [${Math.min(...ems).toFixed(2)}–${Math.max(...ems).toFixed(2)}]` : editor;
  };
  out.push(
    `Start \`${c.checkpoint}\` (${describeConfig(results.model)}); task \`${formatEnvSpec(c.env)}\` under ${editors.join(' and ')} ` +
      `(budget ${c.editors.map((e) => (e.kind === 'none' ? 'none' : e.budget)).join(', ')}); seeds ${c.seeds.join(', ')}. ` +
      `SFT: ${c.sft.updates} updates of ${c.sft.prompts} expert demonstrations, lr ${c.sft.lr}, held-out EM every ${c.sft.evalEvery}. ` +
      `RL: ${c.rl.updates} updates of ${c.rl.prompts} prompts × ${c.rl.group} rollouts sampled by the model at temperature 1, lr ${c.rl.lr}, held-out EM every ${c.rl.evalEvery}. ` +
      `Both use the browser's schedule (linear warm-up over min(10, updates), cosine to a tenth) and AdamW from a fresh state; SDCC λ ${c.lambda} ` +
      `(sweep: ${c.sweep.join(', ')}; advantage-gated: ${c.gated.length ? c.gated.join(', ') : 'none'}). ` +
      `Held-out EM: greedy play of ${c.eval.prompts} prompts per seed (the same prompts for every method of a seed) under the editor. ` +
      `The start's held-out EM: ${editors.map(base).join('; ')}. ` +
      `Took ${duration(results.seconds)}${meta.load ? ` (${meta.load})` : ''}.\n`,
  );

  for (const phase of ['sft', 'rl'] as const) {
    const rows = c.methods.map((m) => {
      const cells = editors.flatMap((e) => {
        const g = groups.find((x) => x.phase === phase && x.editor === e && x.method === m);
        // A partial experiment (interrupted, or resumed with runs missing) says how many seeds a cell holds.
        const few = g && g.seeds < c.seeds.length ? ` (${g.seeds} of ${c.seeds.length} seeds)` : '';
        return [emRange(g?.final ?? null) + few, signed(g?.gain, 2)];
      });
      return [label(m), ...cells];
    });
    if (!groups.some((g) => g.phase === phase)) continue;
    out.push(`## Held-out EM after ${PHASE_TITLE[phase]}\n`);
    out.push(
      `EM after the last update: mean [lowest–highest] over ${c.seeds.length} seeds, and the mean gain over the start's EM. Curves: learning-${phase}-<editor>.svg.\n`,
    );
    out.push(mdTable(['method', ...editors.flatMap((e) => [`${e}: EM`, 'Δ'])], rows, 'l' + 'rr'.repeat(editors.length)));
  }

  out.push('## Training figures\n');
  out.push(
    'Means over every update and seed. loss: as optimised (SDCC: task + λ·KL). logdiff = mean |ℓ_train − ℓ_rollout| and μ = mean (ℓ_train − ℓ_rollout) ' +
      "against the on-policy batches' own logprobs (RL only: demonstrations carry logprob 0); cond. drift against the exact live-prefix score. " +
      "k3, χ²_tok and ESS: verl's rollout_corr/k3_kl, rollout_corr/chi2_token and rollout_corr/rollout_is_eff_sample_size of the same scores (RL only). " +
      'KL_SDCC: mean forward KL at diverging leaves (share of updates where it fired). reward: the batches the model played (RL).\n',
  );
  const figureRows = groups
    .filter((g) => g.phase !== 'sweep')
    .map((g) => [
      g.phase,
      g.editor,
      label(g.method),
      fixed(g.loss, 4),
      formatDrift(g.logdiff),
      formatDrift(g.mu),
      formatDrift(g.conditioningDrift),
      formatDrift(g.k3),
      formatDrift(g.chi2Token),
      fixed(g.ess, 4),
      klCell(g),
      fixed(g.reward, 3),
      fixed(g.stepMs, 0),
    ]);
  out.push(
    mdTable(
      ['phase', 'editor', 'method', 'loss', 'logdiff', 'μ', 'cond. drift', 'k3', 'χ²_tok', 'ESS', 'KL_SDCC', 'reward', 'ms/update'],
      figureRows,
      'lllrrrrrrrrrr',
    ),
  );

  const sweep = sweepGroups(groups);
  if (sweep.length) {
    out.push('## SDCC: λ on the RL runs\n');
    out.push(
      `SDCC's RL runs at every λ (λ ${c.lambda} is the RL phase's own), the advantage-gated SDCC (its KL only at the diverging leaves of rollouts ` +
        'with a non-zero advantage), beside Naive-Compressed (λ = 0) and the packed 4D mask; held-out EM after the last update, mean [range] over seeds, ' +
        'and its gain. Curves: sweep-<editor>.svg.\n',
    );
    const rows = sweep.map((g) => [
      g.editor,
      g.method === 'sdcc' ? sdccName(g.lambda!, g.gate) : g.method === 'naive-compressed' ? 'Naive-Compressed (λ 0)' : label(g.method),
      String(g.seeds),
      emRange(g.final),
      signed(g.gain, 2),
      fixed(g.loss, 4),
      klCell(g),
      String(g.stopped),
    ]);
    // The seeds behind each row: a row with fewer (a partial experiment) is a mean over other seeds than its neighbours'.
    out.push(mdTable(['editor', 'run', 'seeds', 'EM', 'Δ', 'loss', 'KL_SDCC (fired)', 'stopped'], rows, 'llrrrrrr'));
  }

  const stopped = results.runs.filter((r) => r.stopped);
  if (stopped.length) {
    out.push('## Runs that stopped early\n');
    out.push(
      stopped.map((r) => `- ${r.phase} ${r.editor} seed ${r.seed} ${r.method === 'sdcc' ? sdccName(r.lambda!, r.gate) : r.method}: ${r.stopped}`).join('\n') +
        '\n',
    );
  }
  return out.join('\n');
}

/** "SDCC λ 0.1", "SDCC λ 0.1 gated" */
function sdccName(lambda: number, gate: GroupSummary['gate']): string {
  return `SDCC λ ${lambda}${gate === 'advantage' ? ' gated' : ''}`;
}

/** The sweep's rows per editor: naive-compressed (λ 0), SDCC at every λ ascending (the paper's form, then gated), the packed 4D mask. */
function sweepGroups(groups: readonly GroupSummary[]): GroupSummary[] {
  const editors = [...new Set(groups.filter((g) => g.phase === 'sweep').map((g) => g.editor))];
  return editors.flatMap((e) => {
    const rl = groups.filter((g) => g.phase === 'rl' && g.editor === e);
    const sdcc = [...groups.filter((g) => g.editor === e && g.method === 'sdcc' && (g.phase === 'sweep' || g.phase === 'rl'))].sort(
      (a, b) => Number(a.gate === 'advantage') - Number(b.gate === 'advantage') || (a.lambda ?? 0) - (b.lambda ?? 0),
    );
    return [...rl.filter((g) => g.method === 'naive-compressed'), ...sdcc, ...rl.filter((g) => g.method === 'packed-4d')];
  });
}

// ---------------------------------------------------------------------------------------------
// SVG

interface Curve {
  name: string;
  color: string;
  dash?: string;
  band: ReferencePoint[];
  /** Per update, mean over seeds (the loss or reward panels). */
  series: Map<string, [number, number][]>;
}

/** Mean over runs of a per-update value, at every update any run has. */
function meanSeries(runs: readonly RunResult[], value: (u: RunResult['updates'][number]) => number | null): [number, number][] {
  const byUpdate = new Map<number, number[]>();
  for (const r of runs)
    for (const u of r.updates) {
      const v = value(u);
      if (v !== null && Number.isFinite(v)) byUpdate.set(u.update, [...(byUpdate.get(u.update) ?? []), v]);
    }
  return [...byUpdate].sort((a, b) => a[0] - b[0]).map(([u, vs]) => [u, mean(vs)!]);
}

function curveOf(results: LearningResults, runs: RunResult[], name: string, color: string, dash?: string): Curve {
  return {
    name,
    color,
    dash,
    band: bandOf(runs.map((r) => emCurve(results, r))),
    series: new Map([
      ['loss', meanSeries(runs, (u) => u.loss)],
      ['reward', meanSeries(runs, (u) => u.reward)],
    ]),
  };
}

interface PanelSpec {
  title: string;
  kind: 'em' | 'loss' | 'reward';
}

function curvesFigure(title: string, subtitle: string, curves: readonly Curve[], updates: number, panels: readonly PanelSpec[]): string {
  const width = Math.max(940, 360 * panels.length + 40);
  const pitch = (width - 56) / panels.length;
  const body: string[] = [
    text(16, 22, title, `fill="${INK.text}" font-size="15" font-weight="600"`),
    text(16, 40, subtitle, `fill="${INK.muted}" font-size="11"`),
  ];
  // The legend, wrapped to the figure's width.
  let lx = 16;
  let ly = 58;
  for (const c of curves) {
    const w = 40 + c.name.length * 7.2;
    if (lx > 16 && lx + w > width - 16) {
      lx = 16;
      ly += 18;
    }
    body.push(
      `<line x1="${lx}" x2="${lx + 18}" y1="${ly}" y2="${ly}" stroke="${c.color}" stroke-width="2.5"${c.dash ? ` stroke-dasharray="${c.dash}"` : ''}/>`,
    );
    body.push(text(lx + 24, ly + 4, c.name, `fill="${INK.text}"`));
    lx += w;
  }
  const top = ly + 38;
  const bottom = top + 244;
  const height = bottom + 60;
  panels.forEach((panel, i) => {
    const x0 = 56 + i * pitch;
    const x1 = x0 + pitch - 60;
    const x = scaleLinear()
      .domain([0, Math.max(1, updates)])
      .range([x0 + 8, x1 - 8]);
    body.push(`<rect x="${x0}" y="${top}" width="${x1 - x0}" height="${bottom - top}" fill="${INK.panel}"/>`);
    body.push(text(x0, top - 10, panel.title, `fill="${INK.text}" font-size="12" font-weight="600"`));
    let values: number[];
    if (panel.kind === 'em') values = [0, 1];
    else values = curves.flatMap((c) => c.series.get(panel.kind)!.map((p) => p[1]));
    const lo = panel.kind === 'loss' ? 0 : Math.min(0, ...values);
    const hi = panel.kind === 'em' || panel.kind === 'reward' ? Math.max(1, ...values) : Math.max(1e-3, ...values) * 1.05;
    const y = scaleLinear()
      .domain([lo, hi])
      .range([bottom, top + 6])
      .nice(5);
    body.push(yAxis(y, x0, x1 - x0, format(hi - lo < 0.1 ? '.3f' : '.1f'), 5));
    const ticks = x.ticks(Math.min(updates, 6)).filter(Number.isInteger);
    if (ticks.length) body.push(xAxis(x, ticks, bottom, String));
    body.push(text((x0 + x1) / 2, bottom + 34, 'update', `fill="${INK.muted}" text-anchor="middle" font-size="11"`));
    for (const c of curves) {
      if (panel.kind === 'em') {
        const pts = c.band;
        const band = area<ReferencePoint>()
          .x((p) => x(p.update))
          .y0((p) => y(p.min))
          .y1((p) => y(p.max))(pts);
        if (band && pts.length > 1) body.push(`<path d="${band}" fill="${c.color}" fill-opacity="0.14" stroke="none"/>`);
        const path = line<ReferencePoint>()
          .x((p) => x(p.update))
          .y((p) => y(p.mean))(pts);
        if (path && pts.length > 1)
          body.push(`<path d="${path}" fill="none" stroke="${c.color}" stroke-width="2.2"${c.dash ? ` stroke-dasharray="${c.dash}"` : ''}/>`);
        for (const p of pts) body.push(`<circle cx="${x(p.update).toFixed(1)}" cy="${y(p.mean).toFixed(1)}" r="2.6" fill="${c.color}"/>`);
      } else {
        const pts = c.series.get(panel.kind)!;
        const path = line<[number, number]>()
          .x((p) => x(p[0]))
          .y((p) => y(p[1]))(pts);
        if (path && pts.length > 1)
          body.push(
            `<path d="${path}" fill="none" stroke="${c.color}" stroke-width="1.6" stroke-opacity="0.9"${c.dash ? ` stroke-dasharray="${c.dash}"` : ''}/>`,
          );
      }
    }
  });
  return svg(width, height, body);
}

/** EM vs update (band: lowest to highest seed), loss and (RL) batch reward, one curve per method. */
function learningSvg(results: LearningResults, phase: 'sft' | 'rl', editor: string): string {
  const c = results.config;
  const runs = results.runs.filter((r) => r.phase === phase && r.editor === editor);
  const curves = c.methods
    .filter((m) => runs.some((r) => r.method === m))
    .map((m) =>
      curveOf(
        results,
        runs.filter((r) => r.method === m),
        label(m),
        METHOD_BY_ID[m].color,
      ),
    );
  const sizes = phase === 'sft' ? c.sft : c.rl;
  const seeds = new Set(runs.map((r) => r.seed)).size;
  const panels: PanelSpec[] =
    phase === 'sft'
      ? [
          { title: `held-out EM (greedy, ${c.eval.prompts} prompts per seed)`, kind: 'em' },
          { title: 'training loss (target NLL; SDCC + λ·KL)', kind: 'loss' },
        ]
      : [
          { title: `held-out EM (greedy, ${c.eval.prompts} prompts per seed)`, kind: 'em' },
          { title: 'batch reward (sampled at T = 1)', kind: 'reward' },
          { title: 'training loss (PPO-clipped; SDCC + λ·KL)', kind: 'loss' },
        ];
  const what = phase === 'sft' ? `${sizes.prompts} demonstrations per update` : `${sizes.prompts} prompts × ${sizes.group} rollouts per update`;
  return curvesFigure(
    `${PHASE_TITLE[phase]} from ${c.checkpoint} — editor ${editor}`,
    `${formatEnvSpec(c.env)}; ${what}, lr ${sizes.lr}; mean over ${seeds} seed${seeds === 1 ? '' : 's'}, band: lowest to highest seed; update 0 is the start`,
    curves,
    sizes.updates,
    panels,
  );
}

/** SDCC's RL runs at every λ, Naive-Compressed (λ = 0) and the packed 4D mask beside them. */
function sweepSvg(results: LearningResults, editor: string): string {
  const c = results.config;
  const rl = results.runs.filter((r) => r.editor === editor && (r.phase === 'rl' || r.phase === 'sweep'));
  const sdcc = rl.filter((r) => r.method === 'sdcc');
  const lambdas = [...new Set(sdcc.filter((r) => r.gate !== 'advantage').map((r) => r.lambda!))].sort((a, b) => a - b);
  const gated = [...new Set(sdcc.filter((r) => r.gate === 'advantage').map((r) => r.lambda!))].sort((a, b) => a - b);
  // Light to dark violet as λ grows; the gated form in green.
  const shade = (i: number) => `hsl(276, 70%, ${Math.round(82 - (46 * i) / Math.max(1, lambdas.length - 1))}%)`;
  const curves: Curve[] = [];
  const nc = rl.filter((r) => r.phase === 'rl' && r.method === 'naive-compressed');
  if (nc.length) curves.push(curveOf(results, nc, 'Naive-Compressed (λ 0)', METHOD_BY_ID['naive-compressed'].color, '5,3'));
  lambdas.forEach((lambda, i) =>
    curves.push(
      curveOf(
        results,
        sdcc.filter((r) => r.gate !== 'advantage' && r.lambda === lambda),
        `SDCC λ ${lambda}`,
        shade(i),
      ),
    ),
  );
  gated.forEach((lambda, i) =>
    curves.push(
      curveOf(
        results,
        sdcc.filter((r) => r.gate === 'advantage' && r.lambda === lambda),
        `SDCC λ ${lambda} gated`,
        `hsl(${150 - 20 * i}, 60%, 55%)`,
      ),
    ),
  );
  const p4 = rl.filter((r) => r.phase === 'rl' && r.method === 'packed-4d');
  if (p4.length) curves.push(curveOf(results, p4, 'Packed 4D mask', METHOD_BY_ID['packed-4d'].color, '5,3'));
  return curvesFigure(
    `SDCC's λ on the RL runs — editor ${editor}`,
    `${formatEnvSpec(c.env)}; ${c.rl.prompts} prompts × ${c.rl.group} rollouts per update, lr ${c.rl.lr}; mean over seeds, band: lowest to highest seed`,
    curves,
    c.rl.updates,
    [
      { title: `held-out EM (greedy, ${c.eval.prompts} prompts per seed)`, kind: 'em' },
      { title: 'training loss (PPO-clipped + λ·KL)', kind: 'loss' },
    ],
  );
}

/** The SVG files of a result set, by name. */
export function learningFigures(results: LearningResults): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of results.config.editors) {
    for (const phase of ['sft', 'rl'] as const)
      if (results.runs.some((r) => r.phase === phase && r.editor === e.kind)) out.set(`learning-${phase}-${e.kind}.svg`, learningSvg(results, phase, e.kind));
    if (results.runs.some((r) => r.phase === 'sweep' && r.editor === e.kind)) out.set(`sweep-${e.kind}.svg`, sweepSvg(results, e.kind));
  }
  return out;
}
