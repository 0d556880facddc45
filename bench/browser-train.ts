// Live training in the page against the same run in Node. The production build (built into a
// temporary folder) is served on 127.0.0.1; Debian's Chromium trains a default-config run through
// the training panel while Chromium's long-task observer and requestAnimationFrame record the main
// thread; the steps' wall-clock times come from the run's own metric export. Then Node (Dawn on the
// same SwiftShader) trains the same config, seed and steps with the same engine.
// The page runs twice: with the inspection views following the episode being played (the default:
// each update re-renders the staircase, tree and inspector on the main thread) and without.
// Prints: long tasks (count, longest), frame times (median, p95, max), steps/s in both and their ratio.
// Run: node --import ./scripts/register.mjs bench/browser-train.ts [--steps N] [--preset default|small|tiny] [--batch B] [--methods a,b]
//      [--browser-only: no Node run]
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium } from '@playwright/test';
import { createGpu } from '../src/gpu/device';
import { MODEL_PRESETS, type ModelPreset } from '../src/model/config';
import { initWeights } from '../src/model/params';
import type { Method } from '../src/plan/types';
import { defaultRunConfig, type RunConfig } from '../src/app/train/engine/config';
import { createRunEngine, type MetricRecord } from '../src/app/train/engine/run';
import { serializeRunFragment } from '../src/app/train/urlSchema';
import { CHROMIUM_ARGS } from '../playwright.config';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const STEPS = Number(arg('--steps', '12'));
/** Steps left out of the rates at the start (shader compilation, first allocations). */
const WARMUP = 2;
const preset = arg('--preset', 'default') as ModelPreset;
const config: RunConfig = {
  ...defaultRunConfig(preset),
  methods: arg('--methods', 'packed-4d').split(',') as Method[],
  batch: Number(arg('--batch', '2')),
  steps: STEPS,
  seed: 7,
  checkpointEvery: 1000,
};
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.map': 'application/json' };

function serve(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    let file = join(root, path);
    if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/` });
    }),
  );
}

function quantiles(values: number[]) {
  const v = [...values].sort((a, b) => a - b);
  const at = (q: number) => v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN;
  return { n: v.length, median: at(0.5), p95: at(0.95), max: v[v.length - 1] ?? NaN };
}

/** Steps per second over the steps after the warm-up, from the records' wall-clock times. */
function stepsPerSecond(records: readonly MetricRecord[]): number {
  const lane = records.filter((r) => r.method === config.methods[config.methods.length - 1]).sort((a, b) => a.step - b.step);
  const from = lane.find((r) => r.step === WARMUP)!;
  const to = lane[lane.length - 1];
  return (to.step - from.step) / ((to.time - from.time) / 1000);
}

async function inBrowser(follow: boolean) {
  const out = mkdtempSync(join(tmpdir(), 'mw-bench-'));
  try {
    const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn', '--outDir', out, '--emptyOutDir'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('vite build failed');
    const { server, url } = await serve(out);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      // A string, not a function: the TypeScript loader would add helpers the page does not have.
      await page.addInitScript(`
        window.__bench = { longTasks: [], frames: [], recording: false };
        new PerformanceObserver((list) => {
          if (window.__bench.recording) for (const e of list.getEntries()) window.__bench.longTasks.push(e.duration);
        }).observe({ type: 'longtask', buffered: false });
        let last = 0;
        const frame = (t) => {
          if (window.__bench.recording && last) window.__bench.frames.push(t - last);
          last = t;
          requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      `);
      await page.goto(`${url}${serializeRunFragment(config)}`);
      await page.getByTestId('train-status').and(page.locator('[data-phase=idle]')).waitFor({ timeout: 60_000 });
      if (!follow) await page.getByTestId('train-follow').uncheck();
      await page.evaluate('window.__bench.recording = true');
      await page.getByTestId('train-start').click();
      await page.getByTestId('train-status').and(page.locator('[data-phase=done]')).waitFor({ timeout: 60 * 60_000 });
      const bench = (await page.evaluate('(window.__bench.recording = false, { longTasks: window.__bench.longTasks, frames: window.__bench.frames })')) as {
        longTasks: number[];
        frames: number[];
      };
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-metrics-jsonl').click()]);
      const records = readFileSync((await download.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as MetricRecord);
      if (errors.length) throw new Error(`console errors in the page: ${errors.join(' | ')}`);
      return { ...bench, records };
    } finally {
      await browser.close();
      server.close();
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function inNode() {
  const gpu = await createGpu();
  const engine = createRunEngine(gpu, config, { weights: initWeights(MODEL_PRESETS[config.preset], config.seed) });
  const records: MetricRecord[] = [];
  try {
    await engine.preflight();
    while (engine.step < STEPS) records.push(...(await engine.next()));
  } finally {
    engine.destroy();
    gpu.destroy();
  }
  return records;
}

const fmt = (x: number) => `${x.toFixed(1)} ms`;
console.log(`run: ${config.preset} model, ${config.env} (difficulty ${config.difficulty}) under ${config.editor} (budget ${config.budget}), ${config.objective}, ` +
  `methods ${config.methods.join(', ')}, batch ${config.batch}, ${STEPS} steps (rates over steps ${WARMUP}..${STEPS})`);

const pages = { following: await inBrowser(true), 'not following': await inBrowser(false) };
const node = args.includes('--browser-only') ? null : await inNode();
const nodeRate = node ? stepsPerSecond(node) : NaN;

for (const [name, page] of Object.entries(pages)) {
  const frames = quantiles(page.frames);
  const longest = page.longTasks.length ? Math.max(...page.longTasks) : 0;
  const rate = stepsPerSecond(page.records);
  console.log(`\npage, views ${name} the live episode:`);
  console.log(`  long tasks (> 50 ms): ${page.longTasks.length}, longest ${fmt(longest)}   target: none over 100 ms -> ${longest <= 100 ? 'met' : 'NOT met'}`);
  console.log(`  frame interval: median ${fmt(frames.median)}, p95 ${fmt(frames.p95)}, max ${fmt(frames.max)} over ${frames.n} frames`);
  console.log(`  steps/s: ${rate.toFixed(3)}` + (node ? `   Node ${nodeRate.toFixed(3)}   page / Node ${(rate / nodeRate).toFixed(3)}   target: >= 0.90 -> ${rate / nodeRate >= 0.9 ? 'met' : 'NOT met'}` : ''));
  if (node) {
    // The same run: the same losses, step by step.
    const gap = Math.max(...node.map((r) => Math.abs(r.loss - (page.records.find((p) => p.step === r.step && p.method === r.method)?.loss ?? NaN))));
    console.log(`  largest |loss(page) - loss(Node)| at the same step: ${gap.toExponential(2)}`);
  }
}
