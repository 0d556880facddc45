// The inspection views on a large rollout: how long after parsing both views have drawn, and the
// frame times while panning (and after zooming in), read from Chromium's performance timeline and
// requestAnimationFrame. A generated rollout of about 20k tokens with 50 edits is loaded through
// the file input of the production build served on 127.0.0.1.
// Then a large JSONL set (default 100 MB) is opened the same way, to show the parsing worker keeps
// the page responsive: the page's answer time to a probe every 50 ms while it loads, Chromium's long
// tasks on the main thread, and the progress values the bar showed.
// Then the context panes: select the last target and scroll its panes with the mouse wheel.
// First, the playground (issue 30): on a rollout of about 500 tokens, each kind of edit (slide, evict,
// summary, fold, append, undo, redo) from its click until every view has redrawn and the next frame
// is painted; the budget is 100 ms.
// Run: node --import ./scripts/register.mjs bench/views.ts [--no-build] [--tokens N] [--edits K] [--big-mb MB] [--scroll-wheels N] [--scroll-step PX]
//      [--play-tokens N] [--only-playground] [--dist DIR: serve another build, e.g. one of an earlier commit to compare] [--profile: a CPU profile of the playground's edits, top functions by self and total time] [--profile-cold: of the first round's only]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { generateRandomRollout } from '../src/rollout/generate-random';
import { validateRollout } from '../src/rollout';
import { deriveTree } from '../src/tree';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import { serve } from './_serve';
import { sourceMapLocator, summarizeProfile, type CpuProfile } from './_cpuProfile';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const TOKENS = arg('--tokens', 20_000);
const EDITS = arg('--edits', 50);
const BIG_MB = arg('--big-mb', 100);
const SCROLL_WHEELS = arg('--scroll-wheels', 150);
const SCROLL_STEP = arg('--scroll-step', 60);
const PLAY_TOKENS = arg('--play-tokens', 500);
const ONLY_PLAYGROUND = args.includes('--only-playground');
const ONLY_BIG = args.includes('--only-big');
const PROFILE = args.includes('--profile') || args.includes('--profile-cold');
/** Profile the first round only (each edit's code run for the first time), not all three. */
const PROFILE_COLD = args.includes('--profile-cold');

if (!args.includes('--no-build')) {
  const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// A rollout of at least TOKENS physical tokens and exactly EDITS edits (the generator's budget is approximate).
function makeRollout() {
  for (let budget = TOKENS; ; budget = Math.ceil(budget * 1.15)) {
    const json = generateRandomRollout({ seed: 20_000, tokens: budget, edits: EDITS, textRate: 0.2, id: `bench-${TOKENS}` });
    const tree = deriveTree(validateRollout(json, { file: 'bench.json' }));
    if (tree.figures.physicalLength >= TOKENS) return { json, figures: tree.figures };
  }
}

interface Stats {
  n: number;
  median: number;
  p95: number;
  max: number;
}
function stats(values: number[]): Stats {
  const v = [...values].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN;
  return { n: v.length, median: at(0.5), p95: at(0.95), max: v[v.length - 1] ?? NaN };
}
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** Drags across an element while collecting rAF intervals and the view's own per-frame draw measures. */
async function pan(page: Page, selector: string, view: 'staircase' | 'tree', dx: number, dy: number) {
  await page.locator(selector).scrollIntoViewIfNeeded();
  const box = (await page.locator(selector).boundingBox())!;
  // A string, not a function: the TypeScript loader would wrap named closures in helpers the page lacks.
  await page.evaluate(`(() => {
    performance.clearMeasures('mw:${view}-frame');
    window.__frames = [];
    window.__stop = false;
    const tick = (t) => { window.__frames.push(t); if (!window.__stop) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  })()`);
  const x0 = box.x + box.width * 0.55;
  const y0 = box.y + box.height * 0.55;
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  const steps = 90;
  for (let i = 1; i <= steps; i++) {
    const s = Math.sin((i / steps) * Math.PI * 2);
    await page.mouse.move(x0 + dx * s, y0 + dy * s);
  }
  await page.mouse.up();
  await page.waitForTimeout(100);
  return (await page.evaluate(`(() => {
    window.__stop = true;
    const f = window.__frames;
    return {
      intervals: f.slice(1).map((t, i) => t - f[i]),
      draws: performance.getEntriesByName('mw:${view}-frame').map((e) => e.duration),
    };
  })()`)) as { intervals: number[]; draws: number[] };
}

const { json, figures } = makeRollout();
const text = JSON.stringify(json);
console.log(
  `rollout: L ${figures.physicalLength}, K ${figures.K}, targets ${figures.targets}, N_packed ${figures.packedLength}, final walk ${figures.finalWalkLength}, D ${figures.divergingLeaves}; ${(text.length / 1e6).toFixed(2)} MB`,
);

const DIST = args.includes('--dist') ? args[args.indexOf('--dist') + 1] : 'dist';
const { server, url } = await serve(DIST);
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.addInitScript(() => {
    (window as unknown as { __MW_PERF__: boolean }).__MW_PERF__ = true;
  });
  if (ONLY_BIG) {
    await bigSet(page);
    process.exit(0);
  }
  await playground(page);
  if (ONLY_PLAYGROUND) process.exit(0);
  const runs: { parse: number; staircase: number; tree: number }[] = [];
  for (let run = 0; run < 3; run++) {
    await page.goto(`${url}?src=example:worked-example`);
    await page.getByTestId('rollout-id').filter({ hasText: 'worked-example' }).waitFor();
    await page.evaluate(() => performance.clearMarks());
    const started = await page.evaluate(() => performance.now());
    await page.getByTestId('rollout-file-input').setInputFiles({ name: 'bench.json', mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.waitForFunction(() => ['mw:parsed', 'mw:staircase-drawn', 'mw:tree-drawn'].every((m) => performance.getEntriesByName(m).length > 0), undefined, {
      timeout: 120_000,
    });
    const marks = await page.evaluate(() =>
      Object.fromEntries(['mw:parsed', 'mw:staircase-drawn', 'mw:tree-drawn'].map((m) => [m, performance.getEntriesByName(m)[0].startTime])),
    );
    runs.push({
      parse: marks['mw:parsed'] - started,
      staircase: marks['mw:staircase-drawn'] - marks['mw:parsed'],
      tree: marks['mw:tree-drawn'] - marks['mw:parsed'],
    });
  }
  console.log('\nload → both views drawn (3 runs; "after parsing" = from the worker\'s answer to the first paint of each view)');
  for (const [i, r] of runs.entries()) {
    console.log(`  run ${i + 1}: read + validate in the worker ${ms(r.parse)} · staircase drawn ${ms(r.staircase)} · tree drawn ${ms(r.tree)} after parsing`);
  }
  const best = Math.min(...runs.map((r) => Math.max(r.staircase, r.tree)));
  console.log(`  render after parsing (best of 3, both views): ${ms(best)} — ${best < 1000 ? 'under' : 'OVER'} the 1 s budget`);

  const report = (label: string, r: { intervals: number[]; draws: number[] }) => {
    const f = stats(r.intervals);
    const d = stats(r.draws);
    console.log(
      `  ${label.padEnd(30)} frame interval median ${ms(f.median)} p95 ${ms(f.p95)} max ${ms(f.max)} (${f.n} frames, ${(1000 / f.median).toFixed(0)} fps) · view work per frame median ${ms(d.median)} p95 ${ms(d.p95)} (${d.n})`,
    );
  };
  console.log("\npan frame times (rAF intervals during a mouse drag; view work = the staircase's canvas draw, the tree's React render-to-commit)");
  report('staircase, whole rollout', await pan(page, '[data-testid=staircase-canvas]', 'staircase', 300, 120));
  report('tree, whole rollout', await pan(page, '[data-testid=tree-svg]', 'tree', 300, 120));
  // Zoom in (wheel) and pan again: more, smaller items per frame.
  for (const [selector] of [['[data-testid=staircase-canvas]'], ['[data-testid=tree-svg]']]) {
    await page.locator(selector).scrollIntoViewIfNeeded();
    const box = (await page.locator(selector).boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    for (let i = 0; i < 12; i++) await page.mouse.wheel(0, -240);
    await page.waitForTimeout(200);
  }
  report('staircase, zoomed in', await pan(page, '[data-testid=staircase-canvas]', 'staircase', 300, 120));
  report('tree, zoomed in', await pan(page, '[data-testid=tree-svg]', 'tree', 300, 120));

  await contextPanes(page);

  if (BIG_MB > 0) await bigSet(page);
} finally {
  await browser.close();
  server.close();
}

/**
 * The context panes: select the last target (the longest prefixes: its Naive-Full pane holds the
 * whole tape before it), then scroll each pane through its text with the wheel, collecting rAF
 * intervals and the panes' own render measures.
 */
async function contextPanes(page: Page) {
  await page.locator('[data-testid=context-panel]').scrollIntoViewIfNeeded();
  const before = await page.getByTestId('inspector-target').textContent();
  const t0 = await page.evaluate(() => performance.now());
  await page.keyboard.press('End');
  await page.waitForFunction((prev) => document.querySelector('[data-testid=inspector-target]')?.textContent !== prev, before);
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  const shown = (await page.evaluate(() => performance.now())) - t0;
  const tokens = await page.evaluate(() =>
    ['live', 'naive-compressed', 'naive-full'].map((k) => document.querySelector(`[data-testid=pane-${k}]`)?.getAttribute('data-tokens')),
  );
  console.log(
    `\ncontext panes (select the last target, then scroll each pane with ${SCROLL_WHEELS} wheel events of ${SCROLL_STEP} px; rAF intervals, and the pane's React render per frame)`,
  );
  console.log(
    `  target ${await page.getByTestId('inspector-target').textContent()}: live ${tokens[0]} · Naive-Compressed ${tokens[1]} · Naive-Full ${tokens[2]} tokens; select → panes drawn ${ms(shown)}`,
  );
  // Let the selection settle (the other views follow it) before scrolling.
  await page.waitForTimeout(1000);
  for (const kind of ['live', 'naive-full']) {
    // The pointer rests on the pane and the wheel scrolls it, from the top, as a person reads.
    const box = (await page.locator(`[data-testid=pane-${kind}] .pane-scroll`).boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.evaluate(`(() => {
      document.querySelector('[data-testid=pane-${kind}] .pane-scroll').scrollTop = 0;
      performance.clearMeasures('mw:context-frame');
      window.__frames = [];
      window.__stop = false;
      const tick = (t) => { window.__frames.push(t); if (!window.__stop) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
    })()`);
    for (let i = 0; i < SCROLL_WHEELS; i++) await page.mouse.wheel(0, SCROLL_STEP);
    await page.waitForTimeout(300);
    const r = (await page.evaluate(`(() => {
      window.__stop = true;
      const f = window.__frames;
      const el = document.querySelector('[data-testid=pane-${kind}] .pane-scroll');
      return {
        intervals: f.slice(1).map((t, i) => t - f[i]),
        draws: performance.getEntriesByName('mw:context-frame').map((e) => e.duration),
        scrolled: el.scrollTop,
        height: el.scrollHeight,
      };
    })()`)) as { intervals: number[]; draws: number[]; scrolled: number; height: number };
    const f = stats(r.intervals);
    const d = stats(r.draws);
    console.log(
      `  ${`scroll ${kind} pane`.padEnd(30)} frame interval median ${ms(f.median)} p95 ${ms(f.p95)} max ${ms(f.max)} (${f.n} frames) — p95 ${f.p95 < 33.5 ? 'within' : 'OVER'} 33 ms · pane render median ${ms(d.median)} p95 ${ms(d.p95)} (${d.n} renders) · scrolled ${Math.round(r.scrolled)} of ${r.height} px`,
    );
  }
}

/** A JSONL set of about BIG_MB megabytes: generated rollouts, repeated under fresh ids. */
function bigJsonl(): Buffer {
  const lines: string[] = [];
  for (let seed = 1; seed <= 24; seed++) {
    const r = generateRandomRollout({ seed, tokens: 6000, edits: 20, textRate: 0.2, id: 'x' });
    lines.push(JSON.stringify(r));
  }
  const parts: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < BIG_MB * 1e6; i++) {
    const line = lines[i % lines.length].replace('"id":"x"', `"id":"big-${i}"`);
    parts.push(line);
    bytes += line.length + 1;
  }
  return Buffer.from(parts.join('\n') + '\n');
}

async function bigSet(page: Page) {
  const buffer = bigJsonl();
  const count = buffer.reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
  console.log(`\n${(buffer.length / 1e6).toFixed(0)} MB JSONL set (${count} rollouts), opened through the file input`);
  await page.goto(`${url}?src=example:worked-example`);
  await page.getByTestId('rollout-id').filter({ hasText: 'worked-example' }).waitFor();
  await page.evaluate(`(() => {
    window.__long = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' });
  })()`);
  const started = Date.now();
  const input = page.getByTestId('rollout-file-input');
  // Playwright takes files over 50 MB by path only.
  const dir = mkdtempSync(join(tmpdir(), 'mw-bench-'));
  const file = join(dir, 'big.jsonl');
  writeFileSync(file, buffer);
  // The file stays until the page has read it: the page reads a picked file as it goes, after the upload.
  await input.setInputFiles(file);
  const loadedAt = Date.now();
  const probes: number[] = [];
  const progress = new Set<string>();
  for (;;) {
    const t0 = performance.now();
    const state = (await page.evaluate(`(() => {
      const bar = document.querySelector('[data-testid=load-progress]');
      const id = document.querySelector('[data-testid=rollout-id]')?.textContent ?? '';
      const error = document.querySelector('[data-testid=load-error]')?.textContent ?? null;
      return { bar: bar ? bar.textContent : null, id, error };
    })()`)) as { bar: string | null; id: string; error: string | null };
    probes.push(performance.now() - t0);
    if (state.error) throw new Error(`the big set was refused: ${state.error}`);
    if (state.bar) progress.add(state.bar);
    if (state.id.startsWith('big-')) break;
    if (Date.now() - started > 300_000) throw new Error('the big set did not load in 5 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
  const total = Date.now() - started;
  rmSync(dir, { recursive: true, force: true });
  const long = (await page.evaluate('window.__long')) as number[];
  const p = stats(probes);
  const l = stats(long);
  console.log(`  handed to the page in ${ms(loadedAt - started)} (Playwright's upload), shown after ${ms(total)} in all`);
  console.log(`  page answered probes in median ${ms(p.median)}, p95 ${ms(p.p95)}, max ${ms(p.max)} (${p.n} probes while loading)`);
  console.log(`  main-thread long tasks: ${l.n}${l.n ? `, max ${ms(l.max)}, median ${ms(l.median)}` : ''}`);
  console.log(
    `  progress bar showed ${progress.size} distinct states, e.g. ${[...progress]
      .slice(0, 3)
      .map((s) => JSON.stringify(s))
      .join(', ')}`,
  );
}

/**
 * The playground on a rollout of about PLAY_TOKENS tokens (opened from a file, then "start from the
 * rollout shown"): each edit clicked through the page, timed from the click to the frame painted
 * after it (two requestAnimationFrames: React's commit, the canvases' effects, layout and paint),
 * and checked to have changed the figures the summary shows.
 */
async function playground(page: Page) {
  const json = generateRandomRollout({ seed: 500, tokens: PLAY_TOKENS, edits: 6, textRate: 0, id: 'play-bench' });
  const tree = deriveTree(validateRollout(json, { file: 'play.json' }));
  console.log(
    `playground: a rollout of L ${tree.figures.physicalLength}, K ${tree.figures.K}, ${tree.figures.targets} targets, N_packed ${tree.figures.packedLength}; each edit from its click to the next painted frame (every view redrawn)`,
  );
  await page.goto(`${url}?src=example:worked-example`);
  await page.getByTestId('rollout-id').filter({ hasText: 'worked-example' }).waitFor();
  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'play.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(json)) });
  await page.getByTestId('rollout-id').filter({ hasText: 'play-bench' }).waitFor();
  await page.getByTestId('playground-open').click();
  await page.getByTestId('play-start-from').selectOption('shown');
  await page.getByTestId('play-start').click();
  await page.getByTestId('rollout-id').filter({ hasText: 'playground' }).waitFor();
  await page.getByTestId('play-window').fill('120');
  await page.getByTestId('play-summary').fill('a short summary');
  await page.getByTestId('play-text').fill('an action');
  await page.getByTestId('play-role').selectOption('act');

  // A person reads the page before the first edit: meanwhile the playground rehearses each kind of edit
  // once, at idle (src/app/core/rehearsal.ts), so the first round is timed after that, as a class makes it.
  const rehearsed = await page
    .waitForFunction(`performance.getEntriesByName('mw:play-rehearsed').length > 0`, undefined, { timeout: 10_000 })
    .then(() => true)
    .catch(() => false);
  if (!rehearsed) console.log('  (the playground did not finish its rehearsal within 10 s: the first round is timed without it)');
  // CPU time of the renderer's main thread (and of its whole process: raster, compositor) per edit, from
  // Chromium's own counters: on a machine shared with other work the wall time also counts the waits.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const cpu = async () => {
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    const get = (name: string) => (metrics.find((m) => m.name === name)?.value ?? NaN) * 1000;
    return {
      thread: get('ThreadTime'),
      process: get('ProcessTime'),
      script: get('ScriptDuration'),
      style: get('RecalcStyleDuration'),
      layout: get('LayoutDuration'),
      nodes: get('Nodes') / 1000,
    };
  };
  /** Clicks a button of the page and resolves with the time to the frame painted after it, the CPU it took, and the summary figures then. */
  const timed = async (testId: string, before?: () => Promise<void>) => {
    if (before) await before();
    const c0 = await cpu();
    const r = await timedClick(testId);
    const c1 = await cpu();
    return {
      ...r,
      thread: c1.thread - c0.thread,
      process: c1.process - c0.process,
      script: c1.script - c0.script,
      style: c1.style - c0.style,
      layout: c1.layout - c0.layout,
      nodes: c1.nodes,
    };
  };
  const timedClick = async (testId: string) => {
    return (await page.evaluate(`(async () => {
      const button = document.querySelector('[data-testid=${testId}]');
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const t0 = performance.now();
      button.click();
      const sync = performance.now() - t0;
      await frame();
      await frame();
      const painted = performance.now() - t0;
      const stat = (id) => document.querySelector('[data-testid=stat-' + id + ']')?.textContent;
      const refusal = document.querySelector('[data-testid=play-refusal]')?.textContent ?? null;
      return { sync, painted, K: stat('K'), L: stat('physicalLength'), N: stat('packedLength'), refusal };
    })()`)) as { sync: number; painted: number; K: string; L: string; N: string; refusal: string | null };
  };
  const selectSpan = (from: number, to: number) => async () => {
    const chips = page.locator('[data-testid=play-live] [data-id]');
    await chips.nth(from).click();
    await chips.nth(to).click({ modifiers: ['Shift'] });
  };
  const rows: (Awaited<ReturnType<typeof timed>> & { edit: string; figures: string })[] = [];
  const all: number[] = [];
  const threads: number[] = [];
  const cold: string[] = [];
  if (PROFILE) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  for (let round = 0; round < 3; round++) {
    const steps: [string, string, (() => Promise<void>) | undefined][] = [
      ['slide window (keep 120)', 'play-slide', undefined],
      ['undo', 'play-undo', undefined],
      ['redo', 'play-redo', undefined],
      ['evict a span of 20', 'play-evict', selectSpan(10, 29)],
      [
        'replace a span by a summary',
        'play-summarize',
        async () => {
          await selectSpan(5, 14)();
          await page.getByTestId('play-summary').fill('a short summary');
        },
      ],
      ['append an action', 'play-add', () => page.getByTestId('play-text').fill('an action')],
      ['fold the latest observation', 'play-fold', () => page.getByTestId('play-summary').fill('folded')],
      ['undo', 'play-undo', undefined],
    ];
    for (const [edit, testId, before] of steps) {
      const r = await timed(testId, before);
      if (r.refusal) throw new Error(`${edit}: refused: ${r.refusal}`);
      all.push(r.painted);
      threads.push(r.thread);
      if (round === 0) cold.push(`${edit} ${ms(r.painted)} (CPU ${ms(r.thread)})`);
      if (round === 2) rows.push({ edit, ...r, figures: `K ${r.K}, L ${r.L}, N_packed ${r.N}` });
    }
    if (PROFILE_COLD && round === 0) break;
    // Back to the start for the next round: undo everything.
    while (await page.getByTestId('play-undo').isEnabled()) await page.getByTestId('play-undo').click();
  }
  if (PROFILE) {
    const { profile } = (await cdp.send('Profiler.stop')) as { profile: CpuProfile };
    const summary = summarizeProfile(profile, sourceMapLocator(DIST));
    console.log(`  CPU profile (${PROFILE_COLD ? 'the first round' : '3 rounds and their undos'}): busy ${ms(summary.busyMs)} of ${ms(summary.spanMs)}`);
    const views: [string, (f: { key: string }) => boolean, 'selfMs' | 'totalMs'][] = [
      ['self time', () => true, 'selfMs'],
      ["total time, the app's own functions", (f) => f.key.includes('(src/'), 'totalMs'],
    ];
    for (const [title, keep, by] of views) {
      console.log(`  top by ${title}:`);
      for (const f of summary.functions
        .filter(keep)
        .sort((a, b) => b[by] - a[by])
        .slice(0, 50))
        console.log(`    ${ms(f.selfMs).padStart(10)} self ${ms(f.totalMs).padStart(10)} total  ${f.key}`);
    }
  }
  console.log(`  first round, the code cold, click to painted frame: ${cold.join(' · ')}`);
  if (PROFILE_COLD) return;
  console.log('  third round:');
  for (const r of rows)
    console.log(
      `  ${r.edit.padEnd(30)} click to painted frame ${ms(r.painted)} (handler ${ms(r.sync)}) · main-thread CPU ${ms(r.thread)} (script ${ms(r.script)}, style ${ms(r.style)}, layout ${ms(r.layout)}) · renderer CPU ${ms(r.process)} · ${r.nodes} DOM nodes · then ${r.figures}`,
    );
  const s = stats(all);
  const t = stats(threads);
  const load = loadavg()[0];
  console.log(
    `  all ${s.n} edits (3 rounds): click to painted frame median ${ms(s.median)}, p95 ${ms(s.p95)}, max ${ms(s.max)} — ${s.max < 100 ? 'every one under' : 'OVER'} the 100 ms budget`,
  );
  console.log(
    `  main-thread CPU per edit median ${ms(t.median)}, p95 ${ms(t.p95)}, max ${ms(t.max)} — ${t.max < 100 ? 'every one under' : 'OVER'} 100 ms (load average ${load.toFixed(1)} on ${cpus().length} cores while measured)`,
  );
  // The first round runs each edit's code for the first time (compiled as it goes); the later ones as a class runs it all day.
  const perRound = all.length / 3;
  const warm = stats(all.slice(perRound));
  const warmCpu = stats(threads.slice(perRound));
  console.log(
    `  rounds 2 and 3 (${warm.n} edits, the code warm): click to painted frame median ${ms(warm.median)}, p95 ${ms(warm.p95)}, max ${ms(warm.max)}; main-thread CPU median ${ms(warmCpu.median)}, p95 ${ms(warmCpu.p95)}, max ${ms(warmCpu.max)}\n`,
  );
}
