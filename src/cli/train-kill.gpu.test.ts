// Kill during save, with `mw train` itself (issue 19): a tiny run saving a checkpoint after every
// update (--checkpoint-every 1) is SIGKILLed 20 times at random points, half of them aimed at a save
// being written. After every kill the checkpoint on disk must load as a matching pair (read from a
// copy, so the next run meets it as the kill left it); the next run resumes from it with losses
// identical to the uninterrupted run's from that step, and once it has saved, no `.partial` of the
// killed run remains. Each resumed run is the next one killed (two chains of 10 kills side by side,
// one per core); the last run of each chain stops at the same update as the uninterrupted run, with
// its weights and AdamW state bit for bit.

import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCheckpointPair } from '../model/checkpoint-file';
import { createRng } from '../util/prng';
import { mw, MW_ENTRY, ROOT, TEST_CACHE_DIR, tmpDir, writeSmallDataset } from './subprocess.testing';

const TMP = tmpDir('train-kill');
const DATA = writeSmallDataset(join(TMP, 'data.jsonl'));
const CHAINS = 2;
const KILLS_PER_CHAIN = 10;
/** The schedule is fixed by its own flags (never by --steps), so every run of a chain follows the uninterrupted one. */
const FRESH = [
  '--data',
  DATA,
  '--method',
  'packed-4d',
  '--objective',
  'sft',
  '--config',
  'tiny',
  '--batch',
  '2',
  '--seed',
  '7',
  '--lr',
  '5e-3',
  '--warmup',
  '2',
  '--lr-total',
  '200',
  '--checkpoint-every',
  '1',
];
/** A resumed run: the schedule, seed and batch come from the checkpoint. */
const RESUMED = ['--data', DATA, '--method', 'packed-4d', '--objective', 'sft', '--checkpoint-every', '1'];

interface Line {
  step: number;
  loss: number;
  lr: number;
  rollouts: string[];
}

/** The complete lines of a metrics file (a kill may cut the last one short). */
function metricsLines(path: string): Line[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

const partialsOf = (dir: string, pid?: number) => readdirSync(dir).filter((f) => f.endsWith('.partial') && (pid === undefined || f.includes(`.${pid}.`)));

interface Ended {
  pid: number;
  /** Exit status, or null when killed. */
  code: number | null;
  lines: Line[];
  stderr: string;
}

/**
 * Runs `mw train ARGS` into DIR/run.safetensors and SIGKILLs it at a random point: once it has
 * written `armAt` metrics lines, `delayMs` later, or (inSave) `delayMs` after its next `.partial`
 * appears. A run that ends first (it was given a few more updates than that) ends unkilled.
 */
function trainAndKill(dir: string, args: string[], metrics: string, plan: { armAt: number; inSave: boolean; delayMs: number }): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MW_ENTRY, 'train', ...args, '--ckpt-out', join(dir, 'run.safetensors'), '--metrics', metrics], {
      cwd: ROOT,
      env: { ...process.env, MW_CACHE_DIR: TEST_CACHE_DIR },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    let armed = false;
    let fired = false;
    const fire = () => {
      if (fired) return;
      fired = true;
      setTimeout(() => child.kill('SIGKILL'), plan.delayMs);
    };
    const look = (name?: string | null) => {
      if (!armed && metricsLines(metrics).length >= plan.armAt) {
        armed = true;
        if (!plan.inSave) fire();
      }
      if (armed && plan.inSave && name?.endsWith(`.${child.pid}.partial`)) fire();
    };
    const watcher = watch(dir, (_, name) => look(name));
    const poll = setInterval(look, 25);
    child.on('exit', (code) => {
      watcher.close();
      clearInterval(poll);
      resolve({ pid: child.pid!, code, lines: metricsLines(metrics), stderr });
    });
  });
}

/** What one kill left. */
interface Kill {
  /** Updates in the checkpoint on disk. */
  step: number;
  pid: number;
  inSave: boolean;
  /** Whether reading it completed a save cut between its renames, and how many `.partial` files it found. */
  recovered: boolean;
  partials: number;
}

/** Checks the checkpoint a run left in DIR (read from a copy) and returns what it holds; `step`: what it held before the run. */
function checkLeft(dir: string, name: string, step: number, ended: Ended, previous: Kill | undefined): Omit<Kill, 'pid' | 'inSave'> {
  const partials = partialsOf(dir).length;
  const copy = join(dir, name);
  mkdirSync(copy);
  for (const f of readdirSync(dir)) if (f.startsWith('run.')) copyFileSync(join(dir, f), join(copy, f));
  if (!existsSync(join(copy, 'run.safetensors'))) {
    // Killed in the chain's first save, before its weights were renamed into place: nothing saved yet.
    expect([step, ended.lines.length], name).toEqual([0, 1]);
    return { step: 0, recovered: false, partials };
  }
  const pair = readCheckpointPair(join(copy, 'run.safetensors'));
  expect(pair.optimizer, `${name}: the optimizer state is beside the weights`).not.toBeNull();
  const saved = pair.optimizer!.step;
  // One unit: the weights record the step of the optimizer state they were saved with.
  expect(pair.metadata.step, name).toBe(String(saved));
  // --checkpoint-every 1: a kill loses at most the update whose save it cut.
  const done = step + ended.lines.length;
  expect(saved, `${name}: ${ended.lines.length} updates after ${step}`).toBeGreaterThanOrEqual(Math.max(step, done - 1));
  expect(saved, name).toBeLessThanOrEqual(done);
  // Once this run has saved, nothing of the run killed before it is left.
  if (previous && saved > step) expect(partialsOf(dir, previous.pid), name).toEqual([]);
  return { step: saved, recovered: pair.recovered, partials };
}

/**
 * Runs into DIR until `kills` of them were killed, each resuming what the last left. Returns the
 * kills, every metrics line of every run, and the update the chain's checkpoint holds.
 */
async function killChain(dir: string, kills: number, seed: number): Promise<{ kills: Kill[]; lines: Line[]; step: number; runs: number }> {
  mkdirSync(dir);
  const rng = createRng(seed);
  const out: Kill[] = [];
  const lines: Line[] = [];
  let step = 0;
  let runs = 0;
  let cut = false; // the last checkpoint was read by completing a cut save
  while (out.length < kills) {
    const armAt = 1 + rng.int(3);
    const inSave = rng.next() < 0.5;
    // A few updates more than the kill needs: a kill that comes late finds the run ended (and the chain goes on).
    const args = [...(step === 0 ? FRESH : [...RESUMED, '--ckpt-in', join(dir, 'run.safetensors')]), '--steps', String(armAt + 3)];
    const ended = await trainAndKill(dir, args, join(dir, `metrics-${runs}.jsonl`), { armAt, inSave, delayMs: inSave ? rng.int(5) : rng.int(150) });
    expect(ended.code === null || ended.code === 0, `${dir} run ${runs} exited ${ended.code}: ${ended.stderr}`).toBe(true);
    // It resumed the checkpoint the last run left, from its step, completing a cut save if there was one.
    expect(ended.lines[0]?.step, `${dir} run ${runs} starts after update ${step}`).toBe(step + 1);
    if (cut) expect(ended.stderr).toContain('completed a save that was cut short');
    lines.push(...ended.lines);
    const left = checkLeft(dir, `after-run-${runs}`, step, ended, out.at(-1));
    if (ended.code === null) out.push({ ...left, pid: ended.pid, inSave });
    ({ step, recovered: cut } = left);
    runs++;
  }
  return { kills: out, lines, step, runs };
}

describe('mw train killed during its saves', () => {
  it(`leaves a matching pair after each of ${CHAINS * KILLS_PER_CHAIN} random kills, which resumes with the uninterrupted run's losses; no .partial survives the next save`, async () => {
    const started = performance.now();
    const chains = await Promise.all(Array.from({ length: CHAINS }, (_, c) => killChain(join(TMP, `chain-${c}`), KILLS_PER_CHAIN, 1919 + c)));

    // The last run of each chain and the uninterrupted run (the oracle) end at the same update.
    const end = Math.max(...chains.map((c) => c.step)) + 2;
    const straight = join(TMP, 'straight');
    mkdirSync(straight);
    const [oracleRun, ...lastRuns] = await Promise.all([
      mw(['train', ...FRESH, '--steps', String(end), '--ckpt-out', join(straight, 'run.safetensors'), '--metrics', join(straight, 'metrics.jsonl')]),
      ...chains.map((c, i) =>
        mw([
          'train',
          ...RESUMED,
          '--ckpt-in',
          join(TMP, `chain-${i}`, 'run.safetensors'),
          '--steps',
          String(end - c.step),
          '--ckpt-out',
          join(TMP, `chain-${i}`, 'run.safetensors'),
          '--metrics',
          join(TMP, `chain-${i}`, 'metrics-last.jsonl'),
        ]),
      ),
    ]);
    for (const r of [oracleRun, ...lastRuns]) expect(r.code, r.stderr).toBe(0);
    const oracle = metricsLines(join(straight, 'metrics.jsonl'));
    expect(oracle.map((l) => l.step)).toEqual(Array.from({ length: end }, (_, i) => i + 1));
    const want = readCheckpointPair(join(straight, 'run.safetensors'));

    let compared = 0;
    chains.forEach((chain, c) => {
      const dir = join(TMP, `chain-${c}`);
      const last = metricsLines(join(dir, 'metrics-last.jsonl'));
      expect(last[0].step).toBe(chain.step + 1);
      // Every update of every run after a kill is the uninterrupted run's: same batch, same lr, the same loss to the bit.
      for (const line of [...chain.lines, ...last]) {
        const w = oracle[line.step - 1];
        expect([line.step, line.rollouts, line.lr, line.loss], `chain ${c}: update ${line.step}`).toEqual([w.step, w.rollouts, w.lr, w.loss]);
        compared++;
      }
      // The last run finished at the oracle's update: no .partial left, its pair is the oracle's.
      expect(partialsOf(dir)).toEqual([]);
      const got = readCheckpointPair(join(dir, 'run.safetensors'));
      expect(got.optimizer!.step).toBe(end);
      for (const [name, t] of want.weights.tensors)
        expect(Buffer.from(got.weights.tensors.get(name)!.buffer).equals(Buffer.from(t.buffer)), `chain ${c}: ${name}`).toBe(true);
      for (const moment of ['m', 'v'] as const) {
        for (const [name, t] of want.optimizer![moment])
          expect(Buffer.from(got.optimizer![moment].get(name)!.buffer).equals(Buffer.from(t.buffer)), `chain ${c}: ${moment} ${name}`).toBe(true);
      }
    });

    const kills = chains.flatMap((c) => c.kills);
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `mw train killed ${kills.length} times in ${chains.reduce((n, c) => n + c.runs, 0)} runs (${kills.filter((k) => k.inSave).length} kills aimed at a save), ${seconds} s: ` +
        `checkpoints at updates ${chains.map((c) => c.kills.map((k) => k.step).join(' ')).join(' | ')}; ${kills.filter((k) => k.partials > 0).length} kills left a .partial, ` +
        `${kills.filter((k) => k.recovered).length} cut saves rolled forward; ${compared} resumed updates equal the uninterrupted run's (update ${end})`,
    );
  }, 600_000);
});
