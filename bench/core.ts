// Benchmark of the conditioning-tree core: validation, derivation and all five scoring plans for
// generated rollouts of 100k tokens / 200 edits and 1M tokens / 1000 edits. Each case runs in its
// own Node process so its peak memory (max RSS) is its own; stage times are the best of a few runs.
//   node --import ./scripts/register.mjs bench/core.ts        (add --expose-gc for heap-after-GC figures)

import { execFileSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildPlan } from '../src/plan/build';
import { METHODS, type Plan } from '../src/plan/types';
import { generateRandomRollout } from '../src/rollout/generate-random';
import { validateRollout } from '../src/rollout/validate';
import { deriveTree } from '../src/tree/derive';

interface Case {
  tokens: number;
  edits: number;
  /** Context budget of the simulated harness: edits shrink the live view past it. */
  maxLive: number;
}

const CASES: Case[] = [
  { tokens: 100_000, edits: 200, maxLive: 8192 },
  { tokens: 1_000_000, edits: 1000, maxLive: 8192 },
];

interface Result {
  tokens: number;
  edits: number;
  L: number;
  /** Edit size: keep and insert pieces over all edits. */
  pieces: number;
  finalWalk: number;
  packed: number;
  branchTokens: number;
  targets: number;
  diverging: number;
  planTokens: Record<string, number>;
  ms: Record<string, number>;
  peakRssMiB: number;
  heapMiB: number;
}

const mib = (bytes: number) => bytes / 2 ** 20;
const gc = (globalThis as { gc?: () => void }).gc;

function heapNow(): number {
  gc?.();
  const m = process.memoryUsage();
  return mib(m.heapUsed + m.arrayBuffers);
}

/** What the last run built, held where the optimiser cannot drop it before the heap is measured. */
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose (it keeps the last run's objects reachable)
let alive: unknown[] = [];

/** Runs the pipeline `repeats` times; each stage's time is its best run (the machine is shared). */
function runCase(c: Case, repeats: number): Result {
  const json = generateRandomRollout({ seed: 1, size: 'large', tokens: c.tokens, edits: c.edits, maxLive: c.maxLive, textRate: 0.02 });
  const ms: Record<string, number> = {};
  const time = <T>(name: string, f: () => T): T => {
    const t0 = performance.now();
    const out = f();
    ms[name] = Math.min(ms[name] ?? Infinity, performance.now() - t0);
    return out;
  };
  let result: Result | undefined;
  const baseHeap = heapNow();
  for (let r = 0; r < repeats; r++) {
    alive = [];
    const rollout = time('validate', () => validateRollout(json, { file: 'bench' }));
    const tree = time('derive', () => deriveTree(rollout));
    const plans: Plan[] = [];
    const planTokens: Record<string, number> = {};
    for (const method of METHODS) {
      const plan = time(method, () => buildPlan(tree, method));
      plans.push(plan);
      const seqs = plan.method === 'sdcc' ? [plan.student, ...plan.teachers] : plan.sequences;
      planTokens[method] = seqs.reduce((n, s) => n + s.ids.length, 0);
    }
    alive = [rollout, tree, plans];
    // Heap is measured on the first run only: later ones would count earlier runs' unswept buffers.
    const heapMiB = r === 0 ? heapNow() - baseHeap : result!.heapMiB; // rollout, tree and all five plans are alive here
    result = {
      tokens: c.tokens,
      edits: c.edits,
      L: rollout.length,
      pieces: rollout.events.reduce((n, e) => n + (e.op === 'edit' ? e.view.length : 0), 0),
      finalWalk: tree.finalWalk.length,
      packed: tree.figures.packedLength,
      branchTokens: tree.branches.reduce((n, b) => n + b.length, 0),
      targets: tree.figures.targets,
      diverging: tree.figures.divergingLeaves,
      planTokens,
      ms,
      peakRssMiB: 0,
      heapMiB,
    };
  }
  return { ...result!, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
}

const caseArg = process.argv.find((a) => a.startsWith('--case='));
if (caseArg) {
  runCase({ tokens: 20_000, edits: 40, maxLive: 8192 }, 2); // warm the JIT so both cases time steady-state code
  const i = Number(caseArg.slice(7));
  process.stdout.write(JSON.stringify(runCase(CASES[i], i === 0 ? 5 : 3)));
} else {
  const self = fileURLToPath(import.meta.url);
  const results: Result[] = CASES.map((_, i) =>
    JSON.parse(execFileSync(process.execPath, [...process.execArgv, self, `--case=${i}`], { encoding: 'utf8', maxBuffer: 1 << 24 })),
  );
  const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const stages = ['validate', 'derive', ...METHODS];
  const rows: string[][] = [
    ['', ...results.map((r) => `${fmt(r.tokens)} tok / ${r.edits} edits`), 'ratio'],
    ['L (physical)', ...results.map((r) => fmt(r.L)), fmt(results[1].L / results[0].L, 2)],
    ['edit pieces', ...results.map((r) => fmt(r.pieces)), fmt(results[1].pieces / results[0].pieces, 2)],
    ['N_packed', ...results.map((r) => fmt(r.packed)), fmt(results[1].packed / results[0].packed, 2)],
    ['final walk', ...results.map((r) => fmt(r.finalWalk)), ''],
    ['sum of branches', ...results.map((r) => fmt(r.branchTokens)), fmt(results[1].branchTokens / results[0].branchTokens, 2)],
    ['targets / D', ...results.map((r) => `${fmt(r.targets)} / ${fmt(r.diverging)}`), ''],
    ...stages.map((s) => [`${s} ms`, ...results.map((r) => fmt(r.ms[s], 1)), fmt(results[1].ms[s] / results[0].ms[s], 2)]),
    [
      'derive + 5 plans ms',
      ...results.map((r) =>
        fmt(
          stages.slice(1).reduce((n, s) => n + r.ms[s], 0),
          1,
        ),
      ),
      fmt(stages.slice(1).reduce((n, s) => n + results[1].ms[s], 0) / stages.slice(1).reduce((n, s) => n + results[0].ms[s], 0), 2),
    ],
    ['plan tokens (all 5)', ...results.map((r) => fmt(Object.values(r.planTokens).reduce((a, b) => a + b, 0))), ''],
    ['live heap MiB', ...results.map((r) => fmt(r.heapMiB, 1)), fmt(results[1].heapMiB / results[0].heapMiB, 2)],
    ['peak RSS MiB', ...results.map((r) => fmt(r.peakRssMiB, 1)), fmt(results[1].peakRssMiB / results[0].peakRssMiB, 2)],
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  console.log('conditioning-tree core: validate, derive, plans (naive-compressed, naive-full, logit-tree, packed-4d, sdcc)');
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('   '));
  const perNode = results.map((r) => (stages.slice(1).reduce((n, s) => n + r.ms[s], 0) * 1e6) / (r.packed + r.planTokens['logit-tree']));
  console.log(
    `ns per (N_packed + logit-tree tokens): ${perNode.map((x) => fmt(x, 1)).join(' -> ')}` +
      ` (flat = linear; derivation alone: ${results.map((r) => fmt((r.ms.derive * 1e6) / r.packed, 1)).join(' -> ')} ns per packed node)`,
  );
  console.log(`(load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores; times are the best of 5 / 3 runs)`);
  if (!gc) console.log('(heap figures without --expose-gc include garbage)');
}
