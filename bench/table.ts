// The data-set table of a 10k-rollout JSONL set in Chromium: the figures of every rollout are derived
// in the rollout worker, so the page must stay responsive while they are. Measured from the file
// input to the table's rows: the page's answer time to a probe every 50 ms, Chromium's long tasks on
// the main thread, then the time a sort by D takes to show its first row and the frame intervals
// while the virtualised table scrolls from top to bottom.
// Run: node --import ./scripts/register.mjs bench/table.ts [--no-build] [--rollouts N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { generateRandomRollout } from '../src/rollout/generate-random';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import { serve } from './_serve';

const args = process.argv.slice(2);
const N = args.includes('--rollouts') ? Number(args[args.indexOf('--rollouts') + 1]) : 10_000;

if (!args.includes('--no-build')) {
  const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

function stats(values: number[]) {
  const v = [...values].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN;
  return { n: v.length, median: at(0.5), p95: at(0.95), max: v[v.length - 1] ?? NaN };
}
const ms = (x: number) => `${x.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), 'mw-bench-table-'));
const file = join(dir, `set-${N}.jsonl`);
const lines: string[] = [];
for (let i = 0; i < N; i++) lines.push(JSON.stringify(generateRandomRollout({ seed: 1 + i, tokens: 80 + (i % 11) * 20, edits: i % 6, id: `t${i}` })));
writeFileSync(file, `${lines.join('\n')}\n`);
console.log(`bench/table: ${N} rollouts, ${(lines.reduce((s, l) => s + l.length + 1, 0) / 1e6).toFixed(1)} MB`);

const { server, url } = await serve('dist');
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(url);
  await page.getByTestId('rollout-id').waitFor();
  await page.evaluate(`(() => {
    window.__long = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push(e.duration); }).observe({ type: 'longtask' });
  })()`);
  const started = Date.now();
  await page.getByTestId('rollout-file-input').setInputFiles(file);
  const probes: number[] = [];
  let shownAt = 0;
  for (;;) {
    const t0 = performance.now();
    const state = (await page.evaluate(
      `(() => ({ id: document.querySelector('[data-testid=rollout-id]')?.textContent ?? '', table: document.querySelector('[data-testid=dataset-count]')?.textContent ?? '' }))()`,
    )) as { id: string; table: string };
    probes.push(performance.now() - t0);
    if (!shownAt && state.id === 't0') shownAt = Date.now();
    if (state.table.startsWith(`${N} rollouts`)) break;
    if (Date.now() - started > 300_000) throw new Error('the table did not appear in 5 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
  const tableAt = Date.now();
  const long = stats((await page.evaluate('window.__long')) as number[]);
  const p = stats(probes);
  console.log(`  first rollout shown after ${ms(shownAt - started)}, table of ${N} rows after ${ms(tableAt - started)}`);
  console.log(`  page answered probes in median ${ms(p.median)}, p95 ${ms(p.p95)}, max ${ms(p.max)} (${p.n} probes while loading)`);
  console.log(`  main-thread long tasks (> 50 ms): ${long.n}${long.n ? `, max ${ms(long.max)}, median ${ms(long.median)}` : ''}`);

  // Sort by D: from the click to the first row of the sorted table.
  const sortMs = (await page.evaluate(`new Promise((resolve) => {
    const t0 = performance.now();
    document.querySelector('[data-testid=dataset-sort-divergingLeaves]').click();
    const check = () => document.querySelector('[data-testid=dataset-sort-divergingLeaves]').getAttribute('aria-sort') === 'descending' ? resolve(performance.now() - t0) : requestAnimationFrame(check);
    requestAnimationFrame(check);
  })`)) as number;
  console.log(`  sort by D: ${ms(sortMs)} to the sorted rows`);

  // Scroll the virtualised table to the bottom in 60 frames, recording rAF intervals and the rows in the DOM.
  const scroll = (await page.evaluate(`new Promise((resolve) => {
    const el = document.querySelector('[data-testid=dataset-table]');
    const frames = [];
    let rows = 0;
    let last = performance.now();
    let i = 0;
    const step = () => {
      const now = performance.now();
      frames.push(now - last);
      last = now;
      el.scrollTop = (el.scrollHeight * ++i) / 60;
      rows = Math.max(rows, el.querySelectorAll('[data-testid=dataset-row]').length);
      if (i < 60) requestAnimationFrame(step);
      else resolve({ frames: frames.slice(1), rows });
    };
    requestAnimationFrame(step);
  })`)) as { frames: number[]; rows: number };
  const f = stats(scroll.frames);
  console.log(`  scrolling ${N} rows: frame median ${ms(f.median)}, p95 ${ms(f.p95)}, max ${ms(f.max)}; at most ${scroll.rows} rows in the DOM`);
} finally {
  await browser.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
