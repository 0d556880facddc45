// `mw export` of generated rollout sets (medium size: ~160 tokens and up to 10 edits each) of 1,000 and
// 4,000 rollouts, every method, --max-tokens 4096: time, throughput and peak RSS, each export in its
// own process under a V8 heap cap. Bounded memory shows as the peak RSS staying flat from 1,000 to
// 4,000 rollouts while the time and the output grow 4x; an in-memory export of the 4,000 (every tree
// and column held, then written whole) is the contrast.
// Run: node --import ./scripts/register.mjs bench/export.ts [--quick]

import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { METHODS } from '../src/plan/types';
import { generateRandomRollout } from '../src/rollout/generate-random';

const MB = 1024 * 1024;
const HEAP_CAP_MB = 64;
const MAX_TOKENS = '4096';

type ChildResult = { code: number; ms: number; maxRssKB: number; summary: string };

// ------------------------------------------------------------------ child: one export, measured
if (process.argv[2] === '--child') {
  const [file, method, out] = process.argv.slice(3);
  const { main } = await import('../src/cli/main');
  let err = '';
  const started = performance.now();
  const code = await main(['export', file, '--method', method, '--max-tokens', MAX_TOKENS, '--out', out], { out: () => {}, err: (t) => void (err += t) });
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ code, ms, maxRssKB: process.resourceUsage().maxRSS, summary: err.split('\n')[0] }));
  process.exit(0);
}
if (process.argv[2] === '--in-memory') {
  const [file, method, out] = process.argv.slice(3);
  const { readFileSync } = await import('node:fs');
  const { parseRolloutFile } = await import('../src/rollout/parse');
  const { deriveTree } = await import('../src/tree/derive');
  const { exportBatch } = await import('../src/plan/export');
  const started = performance.now();
  const trees = parseRolloutFile(readFileSync(file, 'utf8'), file).map(deriveTree);
  const { bytes, summary } = exportBatch(trees, { method: method as (typeof METHODS)[number], maxTokens: Number(MAX_TOKENS) });
  writeFileSync(out, bytes);
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ code: 0, ms, maxRssKB: process.resourceUsage().maxRSS, summary: `${summary.rows} rows` }));
  process.exit(0);
}
if (process.argv[2] === '--baseline') {
  await import('../src/cli/main');
  process.stdout.write(JSON.stringify({ code: 0, ms: 0, maxRssKB: process.resourceUsage().maxRSS, summary: '' }));
  process.exit(0);
}

// ------------------------------------------------------------------ parent: generate, run, compare
const quick = process.argv.includes('--quick');
const self = fileURLToPath(import.meta.url);
const register = new URL('../scripts/register.mjs', import.meta.url).href;
const dir = join('.bench', 'export');
mkdirSync(dir, { recursive: true });

function runChild(args: string[]): ChildResult {
  const run = spawnSync(process.execPath, ['--import', register, `--max-old-space-size=${HEAP_CAP_MB}`, self, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (run.status !== 0 || !run.stdout) {
    const summary = /heap out of memory/i.test(run.stderr) ? 'JavaScript heap out of memory' : (run.stderr.trim().split('\n').pop() ?? 'failed');
    return { code: run.status ?? -1, ms: NaN, maxRssKB: NaN, summary };
  }
  return JSON.parse(run.stdout) as ChildResult;
}

function writeSet(count: number): { path: string; mb: number } {
  const path = join(dir, `set-${count}.jsonl`);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(generateRandomRollout({ seed: 5000 + i, size: 'medium', id: `r${i}` })));
  writeFileSync(path, lines.join('\n') + '\n');
  return { path, mb: statSync(path).size / MB };
}

const counts = quick ? [100, 400] : [1000, 4000];
const methods = quick ? (['packed-4d', 'sdcc'] as const) : METHODS;
const sets = counts.map(writeSet);
const baseline = runChild(['--baseline']).maxRssKB / 1024;
console.log(
  `every export runs in its own process with --max-old-space-size=${HEAP_CAP_MB}, --max-tokens ${MAX_TOKENS}; bare process (modules loaded): peak RSS ${baseline.toFixed(0)} MB`,
);
console.log(counts.map((n, i) => `${n} rollouts: ${sets[i].mb.toFixed(1)} MB of JSONL`).join(', '));
console.log('method            rollouts   rows        packed seqs  output MB  time s  rollouts/s  rows/s (k)  peak RSS MB (above bare)');
let failed = 0;
const flat: number[] = [];
for (const method of methods) {
  const above: number[] = [];
  counts.forEach((n, i) => {
    const out = join(dir, `out-${method}-${n}.safetensors`);
    const r = runChild(['--child', sets[i].path, method, out]);
    if (r.code !== 0) {
      failed++;
      console.log(`${method.padEnd(17)} ${String(n).padStart(8)}  FAILED: ${r.summary}`);
      return;
    }
    const rows = Number(/(\d+) rows/.exec(r.summary)?.[1] ?? NaN);
    const seqs = Number(/(\d+) packed sequence/.exec(r.summary)?.[1] ?? NaN);
    const rss = r.maxRssKB / 1024;
    above.push(rss - baseline);
    console.log(
      `${method.padEnd(17)} ${String(n).padStart(8)}  ${String(rows).padStart(10)}  ${String(seqs).padStart(11)}  ${(statSync(out).size / MB).toFixed(1).padStart(9)}  ` +
        `${(r.ms / 1000).toFixed(2).padStart(6)}  ${((n * 1000) / r.ms).toFixed(0).padStart(10)}  ${(rows / r.ms).toFixed(0).padStart(10)}  ${rss.toFixed(0).padStart(11)} (${(rss - baseline).toFixed(0)})`,
    );
  });
  if (above.length === 2) flat.push(above[1] - above[0]);
}
const largest = sets[sets.length - 1];
const inMemory = runChild(['--in-memory', largest.path, 'packed-4d', join(dir, 'in-memory.safetensors')]);
console.log(
  `\npeak RSS growth from ${counts[0]} to ${counts[1]} rollouts, streamed: at most ${Math.max(...flat).toFixed(0)} MB per method ` +
    `(4x the rollouts). In-memory export of the ${counts[1]} (packed-4d): ` +
    (inMemory.code === 0
      ? `${(inMemory.maxRssKB / 1024).toFixed(0)} MB peak RSS, ${(inMemory.ms / 1000).toFixed(2)} s`
      : `did not fit the ${HEAP_CAP_MB} MB heap cap (${inMemory.summary})`),
);
rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
