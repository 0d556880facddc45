// One engine, three callers: `mw train --env …` (run as a user runs it) and the browser's run
// controller (driven in Node as the train worker drives it) train the same config and seed to the
// same prompts and bit-identical per-step losses; a lane checkpoint exported by the browser resumes
// in `mw train --ckpt-in` with the next loss of the uninterrupted run; and a `mw train` killed
// mid-run resumes from its last periodic checkpoint as if it had never stopped.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mw, MW_ENTRY, ROOT, tmpDir } from '../cli/subprocess.testing';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { DEFAULT_MATMUL_VARIANT } from '../gpu/kernels/matmul/matmul';
import { adapterKey } from '../gpu/kernels/matmul/matmul-autotune';
import { optimizerStatePath } from '../model/checkpoint-name';
import { readSafetensorsHeader } from '../util/safetensors';
import { defaultRunConfig, type RunConfig } from './config';
import { createRunController, type RunEvent } from './controller';
import { memoryStore } from './store.testing';
import type { MetricRecord } from './engine';

const TMP = tmpDir('callers');
/** The CLI's cache holds the matmul variant the browser's engine runs (it never measures one): the same kernels. */
const CACHE = join(TMP, 'cache');

/** A tiny lookup run under compaction: SFT on the expert's demonstrations, or RL on the model's own episodes. */
const base: RunConfig = {
  ...defaultRunConfig('tiny'),
  env: 'lookup',
  difficulty: 2,
  distractors: 0,
  filler: 0,
  editor: 'compact',
  budget: 50,
  actTokens: 80, // mw train's actions are at most 80 tokens
  methods: ['packed-4d'],
  lr: 3e-3,
  batch: 2,
  seed: 3,
  steps: 6,
  checkpointEvery: 1000,
  evalEvery: 0,
};
const SFT: RunConfig = { ...base, objective: 'sft' };
const RL: RunConfig = { ...base, objective: 'rl', group: 2, steps: 2, methods: ['naive-compressed'] };
const ENV = `lookup:hops=${base.difficulty},distractors=${base.distractors},filler=${base.filler}`;

/** The same run as `mw train` flags: the browser's schedule is a warm-up of min(10, steps) to lr, then a cosine to lr/10 at the last step. */
function cliFlags(config: RunConfig, resumed = false): string[] {
  const player = config.objective === 'sft' ? ['--player', 'expert'] : ['--group', String(config.group)];
  return [
    ...['--env', ENV, '--editor', config.editor, '--budget', String(config.budget)],
    ...['--method', config.methods[0], '--objective', config.objective, ...player],
    ...['--batch', String(config.objective === 'rl' ? config.batch * config.group : config.batch), '--seed', String(config.seed)],
    // A checkpoint to resume fixes the model.
    ...(resumed ? [] : ['--config', config.preset]),
    ...['--lr', String(config.lr), '--warmup', String(Math.min(10, config.steps)), '--lr-total', String(config.steps)],
  ];
}

interface Line {
  step: number;
  loss: number;
  logdiff: number | null;
  targets: number;
  rollouts: string[];
  leftOut: number;
}

const readLines = (path: string): Line[] =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

async function train(name: string, config: RunConfig, ...extra: string[]) {
  const metrics = join(TMP, `${name}.jsonl`);
  const run = await mw(
    ['train', ...cliFlags(config), '--steps', String(config.steps), '--ckpt-out', join(TMP, `${name}.safetensors`), '--metrics', metrics, ...extra],
    { MW_CACHE_DIR: CACHE },
  );
  expect(run.code, run.stderr).toBe(0);
  return readLines(metrics);
}

/** The browser's run, step by step as the page's Step button asks, with what the page is sent. */
async function browserRun(config: RunConfig, exportAfter?: number) {
  const events: RunEvent[] = [];
  const controller = createRunController({ createGpu: () => createGpu(), store: memoryStore(), emit: (e) => void events.push(e) });
  let exported: { name: string; weights: Uint8Array; optimizer: Uint8Array } | null = null;
  for (let step = 1; step <= config.steps; step++) {
    controller.step(config);
    await controller.settled();
    if (step === exportAfter) exported = await controller.exportCheckpoint(config.methods[0]);
  }
  controller.reset();
  await controller.settled();
  const failure = events.find((e) => e.type === 'status' && e.status.reason);
  expect(failure, JSON.stringify(failure)).toBeUndefined();
  const records = events.flatMap((e) => (e.type === 'metrics' ? e.records : [])) as MetricRecord[];
  const batches = events.flatMap((e) => (e.type === 'batch' ? [e.rollouts.map((r) => r.id)] : []));
  return { records, batches, exported };
}

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(
    join(CACHE, 'matmul-variants.json'),
    JSON.stringify({ 'mw.matmulVariant.v1': JSON.stringify({ [adapterKey(gpu.info)]: DEFAULT_MATMUL_VARIANT }) }),
  );
});
afterAll(() => gpu?.destroy());

describe('mw train --env and the browser engine', () => {
  let browser: Awaited<ReturnType<typeof browserRun>>;
  let cli: Line[];
  beforeAll(async () => {
    [browser, cli] = await Promise.all([browserRun(SFT, 3), train('sft', SFT, '--checkpoint-every', '1000')]);
  });

  it('SFT on demonstrations: the same prompts and bit-identical losses at every step', () => {
    expect(cli.map((l) => l.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(browser.records.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(browser.batches).toEqual(cli.map((l) => l.rollouts));
    // Fresh prompts each step, from the run's seed: step 0 plays `mw generate --seed 3`'s.
    expect(new Set(cli.map((l) => l.rollouts.join())).size).toBe(6);
    for (const id of cli[0].rollouts) expect(id).toMatch(/^s0-lookup-p\d+-compact-r0$/);
    expect(browser.records.map((r) => r.loss)).toEqual(cli.map((l) => l.loss));
    expect(browser.records.map((r) => r.targets)).toEqual(cli.map((l) => l.targets));
    expect(cli[5].loss).toBeLessThan(cli[0].loss); // the losses are real: they fall
  });

  it("a browser lane's exported checkpoint resumes in mw train --ckpt-in with the uninterrupted run's next losses", async () => {
    const { name, weights, optimizer } = browser.exported!;
    // As the page downloads them (src/app/train/Lanes.tsx): NAME.safetensors and its optimizer state beside it.
    const path = join(TMP, `${name}.safetensors`);
    writeFileSync(path, weights);
    writeFileSync(optimizerStatePath(path), optimizer);
    expect(optimizerStatePath(path)).toBe(join(TMP, `${name}.optim.safetensors`));
    const metrics = join(TMP, 'resumed.jsonl');
    const run = await mw(
      ['train', ...cliFlags(SFT, true), '--steps', '3', '--ckpt-in', path, '--ckpt-out', join(TMP, 'resumed.safetensors'), '--metrics', metrics],
      { MW_CACHE_DIR: CACHE },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('updates 4..6');
    const resumed = readLines(metrics);
    expect(resumed.map((l) => l.step)).toEqual([4, 5, 6]);
    expect(resumed.map((l) => l.rollouts)).toEqual(browser.batches.slice(3));
    expect(resumed.map((l) => l.loss)).toEqual(browser.records.slice(3).map((r) => r.loss));
  });

  it('mw train killed mid-run resumes from its last periodic checkpoint as if it had never stopped', async () => {
    const ckpt = join(TMP, 'killed.safetensors');
    const metrics = join(TMP, 'killed.jsonl');
    const args = [MW_ENTRY, 'train', ...cliFlags(SFT), '--steps', '40', '--checkpoint-every', '2', '--ckpt-out', ckpt, '--metrics', metrics];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, MW_CACHE_DIR: CACHE }, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // A crash after update 3: the checkpoint of update 2 is on disk, update 4's not yet.
    while (readLines(metrics).length < 3) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    await exited;
    const saved = Number(readSafetensorsHeader(new Uint8Array(readFileSync(ckpt))).metadata!.step);
    expect(saved % 2).toBe(0);
    expect(saved).toBeGreaterThanOrEqual(2);
    expect(saved).toBeLessThan(SFT.steps);
    // Only --steps, the source and the method are given again: the schedule, seed, batch and player come from the checkpoint.
    const out = join(TMP, 'after-crash.jsonl');
    const resume = ['--env', ENV, '--editor', 'compact', '--budget', '50', '--method', 'packed-4d', '--objective', 'sft'];
    const run = await mw(
      ['train', ...resume, '--steps', String(SFT.steps - saved), '--ckpt-in', ckpt, '--ckpt-out', join(TMP, 'after-crash.safetensors'), '--metrics', out],
      { MW_CACHE_DIR: CACHE },
    );
    expect(run.code, run.stderr).toBe(0);
    const after = readLines(out);
    expect(after.map((l) => l.step)).toEqual(cli.slice(saved).map((l) => l.step));
    expect(after.map((l) => l.rollouts)).toEqual(cli.slice(saved).map((l) => l.rollouts));
    expect(after.map((l) => l.loss)).toEqual(cli.slice(saved).map((l) => l.loss));
  });

  it("RL on the model's own episodes: the same prompts, rollouts left out, targets, losses and drift at every step", async () => {
    const [rl, lines] = await Promise.all([browserRun(RL), train('rl', RL)]);
    expect(lines.map((l) => l.step)).toEqual([1, 2]);
    lines.forEach((l, i) => {
      // The CLI lists the rollouts it trained on; the page is sent the whole batch, left-out ones included.
      expect(rl.batches[i].filter((id) => l.rollouts.includes(id))).toEqual(l.rollouts);
      expect(rl.batches[i]).toHaveLength(l.rollouts.length + l.leftOut);
      expect(rl.records[i].skipped).toBe(l.leftOut);
    });
    expect(rl.records.map((r) => [r.targets, r.loss, r.logdiff])).toEqual(lines.map((l) => [l.targets, l.loss, l.logdiff]));
    // On-policy: the rollouts carry the current weights' logprobs, which naive-compressed's replay leaves (or matches at round-off).
    for (const l of lines) expect(l.logdiff).not.toBeNull();
  });
});
