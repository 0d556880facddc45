// Live training in the page against the same run in Node. The production build (built into a
// temporary folder) is served on 127.0.0.1; Debian's Chromium trains a default-config run through
// the training panel while Chromium's long-task observer and requestAnimationFrame record the main
// thread; the steps' wall-clock times come from the run's own metric export. Then Node (Dawn on the
// same SwiftShader) trains the same config, seed and steps with the same engine.
// The page runs twice: with the inspection views following the episode being played (the default:
// each update re-renders the staircase, tree and inspector on the main thread) and without.
// Prints: long tasks (count, longest), frame times (median, p95, max), messages from the workers to
// the page, the page's IndexedDB and URL writes per step, steps/s in both and their ratio.
// With --profile, a CPU profile of the page's main thread (CDP Profiler) and a trace of every thread
// (the browser's `toplevel` tasks) cover each page run: the main thread's busy time per step, the
// functions with the most self and total time (mapped to the source through the build's source
// maps), and the CPU time of the busiest threads of every process (the page's main thread and
// compositor, its workers, the display compositor, the browser) per step and per second. The machine
// may be busy with other work: compare shares and counts, not absolute times.
// Run: node --import ./scripts/register.mjs bench/browser-train.ts [--steps N] [--preset default|small|tiny] [--batch B] [--methods a,b]
//      [--browser-only: no Node run] [--following-only: no page run without the views following] [--profile] [--top N] [--trace-dir DIR]
//      [--no-frames: no frame-interval recorder, whose requestAnimationFrame loop makes the page draw every frame]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { createGpu } from '../src/gpu/runtime/device';
import { MODEL_PRESETS, type ModelPreset } from '../src/model/config';
import { initWeights } from '../src/model/params';
import type { Method } from '../src/plan/types';
import { defaultRunConfig, runSpecOf, type RunConfig } from '../src/run/config';
import { createRunEngine, type MetricRecord } from '../src/run/engine';
import { serializeRunFragment } from '../src/app/train/urlSchema';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import { sourceMapLocator, summarizeProfile, type CpuProfile, type ProfileSummary } from './_cpuProfile';
import { serve } from './_serve';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const STEPS = Number(arg('--steps', '12'));
/** Steps left out of the rates at the start (shader compilation, first allocations). */
const WARMUP = 2;
const PROFILE = args.includes('--profile');
/** The frame-interval recorder (requestAnimationFrame every frame) costs the page a little CPU of its own. */
const FRAMES = !args.includes('--no-frames');
const TOP = Number(arg('--top', '25'));
/** With --profile: a folder to keep each page run's trace in (for Perfetto or DevTools' performance panel). */
const TRACE_DIR = args.includes('--trace-dir') ? arg('--trace-dir', '') : null;
const preset = arg('--preset', 'default') as ModelPreset;
const config: RunConfig = {
  ...defaultRunConfig(preset),
  methods: arg('--methods', 'packed-4d').split(',') as Method[],
  batch: Number(arg('--batch', '2')),
  steps: STEPS,
  seed: 7,
  checkpointEvery: 1000,
};

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

/** What the init script counts while recording: the page's frames, long tasks, messages from workers and IndexedDB writes. */
interface PageCounts {
  longTasks: number[];
  frames: number[];
  /** Messages from the workers to the page, by `worker-name type`. */
  messages: Record<string, number>;
  /** Events carried by the train worker's `live` messages, all together. */
  liveEvents: number;
  /** IndexedDB writes (put, add) the page made, by object store. */
  idbWrites: Record<string, number>;
  /** history.replaceState calls (the URL following the view). */
  urlWrites: number;
}

// A string, not a function: the TypeScript loader would add helpers the page does not have.
const INIT_SCRIPT = `
  window.__bench = { longTasks: [], frames: [], messages: {}, liveEvents: 0, idbWrites: {}, urlWrites: 0, recording: false };
  new PerformanceObserver((list) => {
    if (window.__bench.recording) for (const e of list.getEntries()) window.__bench.longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: false });
  let last = 0;
  const frame = (t) => {
    if (window.__bench.recording && last) window.__bench.frames.push(t - last);
    last = t;
    requestAnimationFrame(frame);
  };
  if (${FRAMES}) requestAnimationFrame(frame);
  const PageWorker = window.Worker;
  window.Worker = class extends PageWorker {
    constructor(url, options) {
      super(url, options);
      const name = (options && options.name) || 'worker';
      this.addEventListener('message', (e) => {
        const b = window.__bench;
        if (!b.recording) return;
        const key = name + ' ' + ((e.data && e.data.type) || '?');
        b.messages[key] = (b.messages[key] || 0) + 1;
        if (e.data && e.data.type === 'live') b.liveEvents += e.data.events.length;
      });
    }
  };
  const replaceState = history.replaceState;
  history.replaceState = function (...a) {
    if (window.__bench.recording) window.__bench.urlWrites++;
    return replaceState.apply(this, a);
  };
  for (const method of ['put', 'add']) {
    const write = IDBObjectStore.prototype[method];
    IDBObjectStore.prototype[method] = function (...a) {
      const b = window.__bench;
      if (b.recording) b.idbWrites[this.name] = (b.idbWrites[this.name] || 0) + 1;
      return write.apply(this, a);
    };
  }
`;

interface ThreadTime {
  thread: string;
  /** CPU time of the thread's top-level tasks, milliseconds. */
  cpuMs: number;
}

interface TraceEvent {
  ph: string;
  cat: string;
  name: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string; data?: { url?: string } };
}

/**
 * CPU time per thread from a trace of `toplevel` tasks (the outermost ones: a task's own nested
 * tasks are in its time), threads named by process, thread and the script they ran most.
 */
function threadTimes(trace: { traceEvents: TraceEvent[] }): ThreadTime[] {
  const names = new Map<string, string>();
  const processes = new Map<number, string>();
  const scripts = new Map<string, Map<string, number>>();
  const tasks = new Map<string, TraceEvent[]>();
  for (const e of trace.traceEvents) {
    const key = `${e.pid}/${e.tid}`;
    if (e.ph === 'M' && e.name === 'thread_name') names.set(key, e.args?.name ?? '?');
    else if (e.ph === 'M' && e.name === 'process_name') processes.set(e.pid, e.args?.name ?? '');
    else if (e.ph === 'X' && e.cat.split(',').includes('toplevel')) (tasks.get(key) ?? tasks.set(key, []).get(key)!).push(e);
    else if ((e.name === 'FunctionCall' || e.name === 'EvaluateScript') && e.args?.data?.url) {
      const script = basename(new URL(e.args.data.url, 'http://x').pathname).replace(/-[\w-]{8}\.js$/, '.js');
      const counts = scripts.get(key) ?? scripts.set(key, new Map()).get(key)!;
      counts.set(script, (counts.get(script) ?? 0) + 1);
    }
  }
  const out: ThreadTime[] = [];
  for (const [key, list] of tasks) {
    list.sort((a, b) => a.ts - b.ts);
    let cpu = 0;
    let outerEnd = -Infinity;
    for (const t of list) {
      if (t.ts < outerEnd) continue; // nested in the task before
      outerEnd = t.ts + (t.dur ?? 0);
      cpu += t.tdur ?? t.dur ?? 0;
    }
    const pid = Number(key.split('/')[0]);
    const script = [...(scripts.get(key) ?? [])].sort((a, b) => b[1] - a[1])[0]?.[0];
    out.push({ thread: `${processes.get(pid) || `pid ${pid}`} / ${names.get(key) ?? key}${script ? ` (${script})` : ''}`, cpuMs: cpu / 1000 });
  }
  return out.sort((a, b) => b.cpuMs - a.cpuMs);
}

interface PageRun extends PageCounts {
  records: MetricRecord[];
  profile: ProfileSummary | null;
  threads: ThreadTime[] | null;
}

async function inBrowser(url: string, root: string, follow: boolean): Promise<PageRun> {
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page: Page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.addInitScript(INIT_SCRIPT);
    await page.goto(`${url}${serializeRunFragment(config)}`);
    await page.getByTestId('train-status').and(page.locator('[data-phase=idle]')).waitFor({ timeout: 60_000 });
    if (!follow) await page.getByTestId('train-follow').uncheck();
    const cdp = PROFILE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline'] });
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
      await cdp.send('Profiler.start');
    }
    await page.evaluate('window.__bench.recording = true');
    await page.getByTestId('train-start').click();
    await page
      .getByTestId('train-status')
      .and(page.locator('[data-phase=done]'))
      .waitFor({ timeout: 60 * 60_000 });
    const counts = (await page.evaluate('(window.__bench.recording = false, window.__bench)')) as PageCounts;
    let profile: ProfileSummary | null = null;
    let threads: ThreadTime[] | null = null;
    if (cdp) {
      const stopped = (await cdp.send('Profiler.stop')) as { profile: CpuProfile };
      profile = summarizeProfile(stopped.profile, sourceMapLocator(root));
      const trace = await browser.stopTracing();
      if (TRACE_DIR) writeFileSync(join(TRACE_DIR, `${follow ? 'following' : 'not-following'}.trace.json`), trace);
      threads = threadTimes(JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] });
    }
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-metrics-jsonl').click()]);
    const records = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as MetricRecord);
    if (errors.length) throw new Error(`console errors in the page: ${errors.join(' | ')}`);
    return { ...counts, records, profile, threads };
  } finally {
    await browser.close();
  }
}

/** Builds the production app into a temporary folder and runs the page once per setting of the views. */
async function inBrowsers(settings: { name: string; follow: boolean }[]): Promise<Record<string, PageRun>> {
  const out = mkdtempSync(join(tmpdir(), 'mw-bench-'));
  try {
    const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn', '--outDir', out, '--emptyOutDir'], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('vite build failed');
    const { server, url } = await serve(out);
    try {
      const runs: Record<string, PageRun> = {};
      for (const { name, follow } of settings) runs[name] = await inBrowser(url, out, follow);
      return runs;
    } finally {
      server.close();
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function inNode() {
  const gpu = await createGpu();
  const engine = createRunEngine(gpu, runSpecOf(config), { weights: initWeights(MODEL_PRESETS[config.preset], config.seed) });
  const records: MetricRecord[] = [];
  try {
    await engine.preflight();
    while (engine.step < STEPS) records.push(...(await engine.next()).flatMap((s) => (s.record ? [s.record] : [])));
  } finally {
    engine.destroy();
    gpu.destroy();
  }
  return records;
}

const fmt = (x: number) => `${x.toFixed(1)} ms`;

function printProfile(profile: ProfileSummary, threads: ThreadTime[]) {
  const share = (ms: number) => `${((100 * ms) / profile.busyMs).toFixed(1)}%`;
  console.log(
    `  main thread (CPU profile): busy ${fmt(profile.busyMs)} of ${fmt(profile.spanMs)} (${((100 * profile.busyMs) / profile.spanMs).toFixed(1)}%), ${fmt(profile.busyMs / STEPS)} per step`,
  );
  const table = (title: string, by: 'selfMs' | 'totalMs', only: (key: string) => boolean = () => true) => {
    console.log(`  top ${TOP} ${title} (share of busy time):`);
    for (const f of profile.functions
      .filter((f) => only(f.key))
      .sort((a, b) => b[by] - a[by])
      .slice(0, TOP)) {
      console.log(`    ${share(f[by]).padStart(6)}  ${fmt(f[by] / STEPS).padStart(10)}/step  ${f.key}`);
    }
  };
  table('by self time', 'selfMs');
  table('by total time', 'totalMs');
  table("of the workbench's own functions (src/) by total time", 'totalMs', (key) => key.includes(' (src/'));
  // Per second too: what the page does continuously (frames, animations) grows with a step's wall time.
  console.log('  CPU time per thread (trace of top-level tasks), per step and per second of the run:');
  const seconds = profile.spanMs / 1000;
  for (const t of threads.slice(0, 10)) console.log(`    ${fmt(t.cpuMs / STEPS).padStart(10)}/step ${fmt(t.cpuMs / seconds).padStart(9)}/s  ${t.thread}`);
}
console.log(
  `run: ${config.preset} model, ${config.env} (difficulty ${config.difficulty}) under ${config.editor} (budget ${config.budget}), ${config.objective}, ` +
    `methods ${config.methods.join(', ')}, batch ${config.batch}, ${STEPS} steps (rates over steps ${WARMUP}..${STEPS})`,
);

const pages = await inBrowsers([{ name: 'following', follow: true }, ...(args.includes('--following-only') ? [] : [{ name: 'not following', follow: false }])]);
const node = args.includes('--browser-only') ? null : await inNode();
const nodeRate = node ? stepsPerSecond(node) : NaN;

for (const [name, page] of Object.entries(pages)) {
  const frames = quantiles(page.frames);
  const longest = page.longTasks.length ? Math.max(...page.longTasks) : 0;
  const rate = stepsPerSecond(page.records);
  console.log(`\npage, views ${name} the live episode:`);
  console.log(`  long tasks (> 50 ms): ${page.longTasks.length}, longest ${fmt(longest)}   target: none over 100 ms -> ${longest <= 100 ? 'met' : 'NOT met'}`);
  if (FRAMES) console.log(`  frame interval: median ${fmt(frames.median)}, p95 ${fmt(frames.p95)}, max ${fmt(frames.max)} over ${frames.n} frames`);
  const perStep = (n: number) => (n / STEPS).toFixed(n / STEPS < 10 ? 2 : 1);
  const messages = Object.entries(page.messages).sort((a, b) => b[1] - a[1]);
  const messageCount = messages.reduce((n, [, c]) => n + c, 0);
  console.log(`  messages from the workers to the page per step: ${perStep(messageCount)} (${messages.map(([k, c]) => `${k} ${perStep(c)}`).join(', ')})`);
  console.log(
    `  live events carried per step: ${perStep(page.liveEvents)}; the page's IndexedDB writes per step: ${perStep(Object.values(page.idbWrites).reduce((n, c) => n + c, 0))} ${JSON.stringify(page.idbWrites)}; URL writes per step: ${perStep(page.urlWrites)}`,
  );
  if (page.profile) printProfile(page.profile, page.threads ?? []);
  console.log(
    `  steps/s: ${rate.toFixed(3)}` +
      (node
        ? `   Node ${nodeRate.toFixed(3)}   page / Node ${(rate / nodeRate).toFixed(3)}   target: >= 0.90 -> ${rate / nodeRate >= 0.9 ? 'met' : 'NOT met'}`
        : ''),
  );
  if (node) {
    // The same run: the same losses, step by step.
    const gap = Math.max(...node.map((r) => Math.abs(r.loss - (page.records.find((p) => p.step === r.step && p.method === r.method)?.loss ?? NaN))));
    console.log(`  largest |loss(page) - loss(Node)| at the same step: ${gap.toExponential(2)}`);
  }
}
