// `mw experiment learning --quick` from the shipped weak start (issue 20), as a user runs it: wall
// time against its 10-minute budget (with the machine's load beside it: this machine is shared), and
// the figures it wrote, finite for every method, seed and editor, RL's verl figures included.
//   npm run bench -- learning                    (or: node --import ./scripts/register.mjs bench/learning.ts [--keep])
// The experiment's machinery is tested in the GPU tier on a tiny model (src/experiments/learning.gpu.test.ts).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LearningResults } from '../src/experiments/learning';
import { METHODS } from '../src/plan/types';

const BUDGET_S = 600;
const out = mkdtempSync(join(tmpdir(), 'mw-learning-quick-'));
const before = loadavg();
const started = performance.now();
const run = spawnSync('node', ['bin/mw.js', 'experiment', 'learning', '--quick', '--out', out], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
const seconds = (performance.now() - started) / 1000;
const after = loadavg();
const problems: string[] = [];
if (run.status !== 0) problems.push(`mw experiment learning --quick exited ${run.status}`);

let results: LearningResults | null = null;
try {
  results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as LearningResults;
} catch (error) {
  problems.push(`no results.json: ${(error as Error).message}`);
}
if (results) {
  const c = results.config;
  for (const seed of c.seeds)
    for (const editor of c.editors)
      for (const phase of ['sft', 'rl'] as const)
        for (const method of METHODS) {
          const r = results.runs.find((x) => x.seed === seed && x.editor === editor.kind && x.phase === phase && x.method === method);
          const where = `${phase} ${editor.kind} seed ${seed} ${method}`;
          if (!r) {
            problems.push(`${where}: missing`);
            continue;
          }
          if (r.evals.length === 0) problems.push(`${where}: no held-out EM`);
          for (const e of r.evals) if (!(e.em >= 0 && e.em <= 1)) problems.push(`${where}: EM ${e.em}`);
          for (const u of r.updates) {
            const values = [u.loss, u.taskLoss, u.klSdcc, u.gradNorm, u.logdiff, u.mu, u.conditioningDrift, ...Object.values(u.rollout_corr ?? {})];
            if (values.some((v) => v !== null && !Number.isFinite(v))) problems.push(`${where} update ${u.update}: a non-finite figure`);
            if (phase === 'rl' && !u.rollout_corr) problems.push(`${where} update ${u.update}: no rollout_corr`);
          }
        }
  const sweep = results.runs.filter((r) => r.phase === 'sweep').length;
  const files = readdirSync(out).sort();
  console.log(
    `${results.runs.length} runs (${sweep} of the λ sweep) over ${c.seeds.length} seeds × ${c.editors.length} editors × ${c.methods.length} methods; files: ${files.join(', ')}`,
  );
}
console.log(
  `mw experiment learning --quick: ${seconds.toFixed(0)} s of a ${BUDGET_S} s budget (${(seconds / BUDGET_S).toFixed(2)}×), ` +
    `load average ${before[0].toFixed(1)} before, ${after[0].toFixed(1)} after, on ${availableParallelism()} cores`,
);
if (seconds > BUDGET_S) console.log(`over budget${after[0] > availableParallelism() ? ' (the machine was loaded: run it again when it is quiet)' : ''}`);
for (const p of problems) console.log(`FAIL ${p}`);
if (!process.argv.includes('--keep')) rmSync(out, { recursive: true, force: true });
else console.log(`kept ${out}`);
process.exit(problems.length ? 1 : 0);
