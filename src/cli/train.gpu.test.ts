// `mw train` as a user runs it: SFT lowers the loss, one metrics line per update, a GPT-2 checkpoint
// with its optimizer state, an exact resume (update count, lr schedule, batch order), SDCC and RL.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint, loadOptimizerState } from '../model/checkpoint';
import { MODEL_PRESETS } from '../model/config';
import { initWeights } from '../model/params';
import { referenceLogprobs } from '../model/reference/model';
import { readSafetensorsHeader } from '../util/safetensors';
import { lrAt } from '../objectives/adamw';
import { mw, tmpDir, WORKED, workedLine, writeSmallDataset } from './subprocess.testing';

const TMP = tmpDir('train');
const DATA = writeSmallDataset(join(TMP, 'data.jsonl'));
const IDS = ['worked-example', 'r301', 'r302'];

interface MetricsLine {
  step: number;
  method: string;
  objective: string;
  lr: number;
  loss: number;
  taskLoss: number;
  klSdcc: number;
  klFired: boolean;
  targets: number;
  logprobs?: unknown;
  rollouts: string[];
  [field: string]: unknown;
}

function readMetrics(path: string): MetricsLine[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

function train(name: string, ...extra: string[]) {
  const ckpt = join(TMP, `${name}.safetensors`);
  const metrics = join(TMP, `${name}.jsonl`);
  const run = mw(['train', '--data', DATA, '--ckpt-out', ckpt, '--metrics', metrics, ...extra]);
  return { ckpt, metrics, run };
}

const bytes = (path: string) => new Uint8Array(readFileSync(path));

describe('mw train', () => {
  it('SFT lowers the loss within 8 updates; writes N metrics lines, a GPT-2 checkpoint and its optimizer state', async () => {
    const { ckpt, metrics, run } = train(
      'sft',
      '--method',
      'packed-4d',
      '--objective',
      'sft',
      '--steps',
      '8',
      '--config',
      'tiny',
      '--lr',
      '1e-2',
      '--order',
      'file',
      '--json',
    );
    const result = await run;
    expect(result.code).toBe(0);
    const lines = readMetrics(metrics);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(lines[7].loss).toBeLessThan(lines[0].loss - 1);
    expect(lines[0].loss).toBeGreaterThan(5); // ≈ ln 272 from GPT-2's init
    for (const l of lines) {
      expect(l).toMatchObject({ method: 'packed-4d', objective: 'sft', targets: 37, klFired: false, rollouts: IDS });
      expect(l.logprobs).toBeUndefined();
      for (const field of [
        'lr',
        'loss',
        'taskLoss',
        'klSdcc',
        'divergingLeaves',
        'tokens',
        'nPacked',
        'nFinal',
        'logdiff',
        'mu',
        'conditioningDrift',
        'conditioningMu',
        'gradNorm',
        'stepMs',
      ]) {
        expect(typeof l[field], field).toBe('number');
      }
    }
    expect(JSON.parse(result.stdout)).toEqual({
      updates: 8,
      firstUpdate: 1,
      lastUpdate: 8,
      loss: { first: lines[0].loss, last: lines[7].loss },
      checkpoint: ckpt,
      optimizer: join(TMP, 'sft.optim.safetensors'),
      metrics,
    });
    // Progress on stderr without a terminal: the header, then a line every ~10 % (here each update).
    const progress = result.stderr.trim().split('\n');
    expect(progress[0]).toBe(`mw train: packed-4d sft on ${DATA}: 3 rollouts, batches of 3 in file order`);
    expect(progress.at(-1)).toMatch(/^mw train: step 8\/8 {2}loss \d+\.\d{4} {2}\d+ tok\/s {2}ETA 0s$/);

    const weights = loadCheckpoint(bytes(ckpt));
    expect(weights.config).toEqual(MODEL_PRESETS.tiny);
    const metadata = readSafetensorsHeader(bytes(ckpt)).metadata!;
    expect(metadata).toMatchObject({ step: '8', lr_peak: '0.01', lr_total: '8', seed: '0', batch: '3', order: 'file', method: 'packed-4d', objective: 'sft' });
    expect(loadOptimizerState(bytes(join(TMP, 'sft.optim.safetensors')), weights.config).step).toBe(8);
  });

  it('a run resumed from its checkpoint continues the update count, lr schedule and batches of the straight run', async () => {
    const common = [
      '--method',
      'logit-tree',
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
      '--lr-total',
      '4',
      '--warmup',
      '1',
    ];
    const straight = train('straight', ...common, '--steps', '4');
    const first = train('first', ...common, '--steps', '2');
    expect((await Promise.all([straight.run, first.run])).map((r) => r.code)).toEqual([0, 0]);
    // Only the checkpoint: schedule, seed, batch size and order come from it.
    const resumed = train('resumed', '--method', 'logit-tree', '--objective', 'sft', '--steps', '2', '--ckpt-in', first.ckpt);
    const run = await resumed.run;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('updates 3..4, lr 0.005 (warm-up 1, cosine to 0.0005 at update 4)');
    const want = readMetrics(straight.metrics);
    const got = readMetrics(resumed.metrics);
    expect(got.map((l) => l.step)).toEqual([3, 4]);
    got.forEach((l, i) => {
      const w = want[i + 2];
      expect(l.rollouts).toEqual(w.rollouts);
      expect(l.lr).toBe(w.lr);
      expect(l.lr).toBeCloseTo(lrAt(i + 2, { peak: 5e-3, warmup: 1, total: 4, min: 5e-4 }), 12);
      expect(Math.abs(l.loss - w.loss)).toBeLessThanOrEqual(1e-6);
    });
    expect(readSafetensorsHeader(bytes(resumed.ckpt)).metadata!.step).toBe('4');
  });

  it('SDCC fires its KL on diverging leaves; RL trains on the rollout logprobs and refuses rollouts without them', async () => {
    const sdcc = train('sdcc', '--method', 'sdcc', '--lambda', '0.5', '--objective', 'sft', '--steps', '2', '--config', 'tiny', '--order', 'file');
    const groupPath = join(TMP, 'group.jsonl');
    const worked = JSON.parse(workedLine());
    writeFileSync(groupPath, [1, 0].map((reward, i) => JSON.stringify({ ...worked, id: `w${i}`, reward, group: 'g' })).join('\n') + '\n');
    const rlCkpt = join(TMP, 'rl.safetensors');
    const rlMetrics = join(TMP, 'rl.jsonl');
    const rl = mw([
      'train',
      '--data',
      groupPath,
      '--method',
      'packed-4d',
      '--objective',
      'rl',
      '--steps',
      '2',
      '--config',
      'tiny',
      '--ckpt-out',
      rlCkpt,
      '--metrics',
      rlMetrics,
    ]);
    const noLogprobs = mw([
      'train',
      '--data',
      DATA,
      '--method',
      'packed-4d',
      '--objective',
      'rl',
      '--steps',
      '2',
      '--ckpt-out',
      join(TMP, 'x.safetensors'),
      '--metrics',
      join(TMP, 'x.jsonl'),
    ]);

    expect((await sdcc.run).code).toBe(0);
    for (const l of readMetrics(sdcc.metrics)) {
      expect(l).toMatchObject({ method: 'sdcc', klFired: true, divergingLeaves: 6 });
      expect(l.klSdcc).toBeGreaterThan(0);
      expect(l.loss).toBeCloseTo(l.taskLoss + 0.5 * l.klSdcc, 6);
    }
    expect((await rl).code).toBe(0);
    const rlLines = readMetrics(rlMetrics);
    expect(rlLines.map((l) => [l.step, l.objective, l.targets])).toEqual([
      [1, 'rl', 16],
      [2, 'rl', 16],
    ]);
    const refused = await noLogprobs;
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(
      new RegExp(`^${DATA}:\\d: rollout "r30\\d": target \\d+ has no logprob; --objective rl needs the rollout-time logprobs\\n$`),
    );
    expect(existsSync(join(TMP, 'x.jsonl'))).toBe(false);
  });

  it('a non-finite gradient stops the run with exit 4 and keeps the checkpoint of the last good update', async () => {
    const worked = JSON.parse(workedLine());
    const overflow = structuredClone(worked);
    overflow.events[8].logprobs = [-1e30, -1e30]; // the PPO ratio exp(ℓ + 1e30) overflows
    const lines = [
      { ...worked, id: 'a', reward: 1, group: 'g1' },
      { ...worked, id: 'b', reward: 0, group: 'g1' },
      { ...overflow, id: 'c', reward: 1, group: 'g2' },
      { ...overflow, id: 'd', reward: 0, group: 'g2' },
    ];
    const data = join(TMP, 'overflow.jsonl');
    writeFileSync(data, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const ckpt = join(TMP, 'overflow.safetensors');
    const metrics = join(TMP, 'overflow-metrics.jsonl');
    const run = await mw([
      'train',
      '--data',
      data,
      '--method',
      'packed-4d',
      '--objective',
      'rl',
      '--steps',
      '3',
      '--batch',
      '2',
      '--order',
      'file',
      '--config',
      'tiny',
      '--ckpt-out',
      ckpt,
      '--metrics',
      metrics,
    ]);
    expect(run).toMatchObject({ code: 4, stdout: '' });
    const last = run.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(/^mw train: stopped: AdamW update 2 was not applied: .*(NaN|overflow).* unchanged\. /);
    expect(last.endsWith(`Wrote the checkpoint of update 1 to ${ckpt}.`)).toBe(true);
    expect(readMetrics(metrics).map((l) => [l.step, l.rollouts])).toEqual([[1, ['a', 'b']]]);
    expect(readSafetensorsHeader(bytes(ckpt)).metadata!.step).toBe('1');
  });

  it('usage errors are exit 1 and invalid data exit 2, before any output file is written', async () => {
    const out = ['--ckpt-out', join(TMP, 'u.safetensors'), '--metrics', join(TMP, 'u.jsonl')];
    const cases: [string[], RegExp][] = [
      [['--method', 'packed-4d', '--objective', 'sft', '--data', DATA, ...out], /--steps N is required/],
      [['--method', 'packed-4d', '--objective', 'sft', '--data', DATA, '--steps', '2', '--lambda', '1', ...out], /--lambda applies to --method sdcc only/],
      [['--method', 'packed-4d', '--objective', 'sft', '--data', DATA, '--steps', '2', '--batch', '4', ...out], /--batch 4 is larger than the 3 rollouts/],
      [['--method', 'packed-4d', '--objective', 'ppo', '--data', DATA, '--steps', '2', ...out], /unknown --objective "ppo" \(sft, rl\)/],
    ];
    // Each run its own checkpoint name (one name has one writer: the runs go at once).
    const runs = await Promise.all(cases.map(([args], i) => mw(['train', ...args.map((a) => a.replace(/([\\/])u\.(safetensors|jsonl)$/, `$1u-${i}.$2`))])));
    runs.forEach((run, i) => {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(cases[i][1]);
    });
    const invalid = await mw([
      'train',
      '--method',
      'packed-4d',
      '--objective',
      'sft',
      '--data',
      WORKED.replace('worked-example', 'missing'),
      '--steps',
      '2',
      ...out,
    ]);
    expect(invalid).toEqual({ code: 2, stdout: '', stderr: `${WORKED.replace('worked-example', 'missing')}: no such file\n` });
    const promptOnly = join(TMP, 'prompt-only.json');
    writeFileSync(
      promptOnly,
      JSON.stringify({ format: 'memorywalker.rollout/v1', id: 'p', vocab: 272, events: [{ op: 'append', role: 'prompt', tokens: [1, 2] }] }),
    );
    const noTargets = await mw(['train', '--method', 'packed-4d', '--objective', 'sft', '--data', promptOnly, '--steps', '2', ...out]);
    expect(noTargets).toEqual({ code: 2, stdout: '', stderr: `${promptOnly}: no rollout has a target that packed-4d scores\n` });
    expect(existsSync(join(TMP, 'u.jsonl'))).toBe(false);
  });
});

describe('mw train --env (on-policy)', () => {
  // Tiny model (P 128): a random init's actions are noise, cut off by the context limit or the
  // action budget; each episode is trained up to its last action, so its plan fits the positions.
  const ENV = ['--env', 'lookup', '--editor', 'compact', '--method', 'logit-tree', '--objective', 'rl'];
  // Every reward is 0 (noise never answers), so the advantages and gradients are 0 and only AdamW's
  // weight decay moves the weights: a large lr makes that move far above the logdiff tolerance.
  const LR = ['--lr', '0.5', '--lr-total', '2', '--warmup', '0'];
  const envTrain = (name: string, ...extra: string[]) => {
    const ckpt = join(TMP, `${name}.safetensors`);
    const metrics = join(TMP, `${name}.jsonl`);
    return {
      ckpt,
      metrics,
      run: mw(['train', ...ENV, '--group', '2', '--batch', '4', '--config', 'tiny', '--ckpt-out', ckpt, '--metrics', metrics, ...extra]),
    };
  };

  it('RL plays a fresh batch with the current weights before each update: logit-tree reproduces its logprobs; a resumed run plays the same prompts', async () => {
    const straight = envTrain('env-rl', ...LR, '--steps', '2', '--json');
    const first = envTrain('env-first', ...LR, '--steps', '1');
    const [s, f] = await Promise.all([straight.run, first.run]);
    expect(s.code, s.stderr).toBe(0);
    expect(f.code, f.stderr).toBe(0);
    const lines = readMetrics(straight.metrics);
    expect(lines.map((l) => [l.step, l.method, l.objective])).toEqual([
      [1, 'logit-tree', 'rl'],
      [2, 'logit-tree', 'rl'],
    ]);
    for (const l of lines) {
      expect(Number.isFinite(l.loss)).toBe(true);
      for (const field of ['reward', 'em'] as const) {
        expect(l[field] as number, field).toBeGreaterThanOrEqual(0);
        expect(l[field] as number, field).toBeLessThanOrEqual(1);
      }
      expect(l.genMs as number).toBeGreaterThan(0);
      expect(l.rollouts.length + (l.leftOut as number)).toBe(4);
      expect(l.rollouts.length).toBeGreaterThan(0);
      for (const id of l.rollouts) expect(id).toMatch(new RegExp(`^s${l.step - 1}-lookup-p\\d+-compact-r[01]$`));
      // The rollouts carry the model's own logprobs at the weights of this update (round-off apart).
      expect(l.logdiff as number).toBeLessThan(1e-4);
      expect(l.targets).toBeGreaterThan(20);
    }
    expect(lines[0].rollouts).not.toEqual(lines[1].rollouts); // fresh prompts each update
    const progress = s.stderr.trim().split('\n');
    expect(progress[0]).toBe(
      'mw train: logit-tree rl on lookup under compact: 2 prompts × 2 rollouts per update, played by the model being trained (temperature 1, seed 0)',
    );
    expect(progress.at(-1)).toMatch(/^mw train: step 2\/2 {2}loss -?\d+\.\d{4} {2}reward [01]\.\d{3} {2}\d+ tok\/s {2}ETA 0s$/);
    expect(JSON.parse(s.stdout).reward).toEqual({ first: lines[0].reward, last: lines[1].reward });
    expect(readSafetensorsHeader(bytes(straight.ckpt)).metadata).toMatchObject({
      step: '2',
      seed: '0',
      batch: '4',
      group: '2',
      temperature: '1',
      env: 'lookup',
      editor: 'compact',
    });

    // Update 1 moved the weights far enough that update 2's logdiff above tells current weights
    // from stale ones: log-probabilities of a fixed text, initial vs trained weights (CPU reference).
    const text = Array.from(new TextEncoder().encode('Q: who is the boss of the boss of ann?\nlookup ann\n'));
    const input = { tokens: text, positions: text.map((_, i) => i), end: text.map(() => text.length) };
    const targets = text.slice(1).map((token, i) => ({ predictor: i, token }));
    const before = referenceLogprobs(initWeights(MODEL_PRESETS.tiny, 0), input, targets);
    const after = referenceLogprobs(loadCheckpoint(bytes(first.ckpt)), input, targets);
    const shift = before.reduce((sum, lp, i) => sum + Math.abs(lp - after[i]), 0) / before.length;
    expect(shift).toBeGreaterThan(1e-3);

    // Resumed after update 1 (seed, batch, group and schedule from the checkpoint): update 2 plays
    // the same prompts and samples with the same weights.
    const resumed = mw([
      'train',
      ...ENV,
      '--steps',
      '1',
      '--ckpt-in',
      first.ckpt,
      '--ckpt-out',
      join(TMP, 'env-resumed.safetensors'),
      '--metrics',
      join(TMP, 'env-resumed.jsonl'),
    ]);
    const r = await resumed;
    expect(r.code, r.stderr).toBe(0);
    const [again] = readMetrics(join(TMP, 'env-resumed.jsonl'));
    expect(again.step).toBe(2);
    for (const field of ['rollouts', 'targets', 'reward', 'em', 'lr'] as const) expect(again[field], field).toEqual(lines[1][field]);
    expect(Math.abs(again.loss - lines[1].loss)).toBeLessThanOrEqual(1e-6);
    expect(Math.abs((again.logdiff as number) - (lines[1].logdiff as number))).toBeLessThanOrEqual(1e-6);
  });

  it('needs exactly one of --data and --env; RL needs groups of 2 or more; --help says what SFT on played rollouts is', async () => {
    const out = ['--steps', '1', '--ckpt-out', join(TMP, 'e.safetensors'), '--metrics', join(TMP, 'e.jsonl')];
    const base = ['--method', 'logit-tree', '--objective', 'rl', '--env', 'lookup', '--editor', 'compact', ...out];
    const cases: [string[], string][] = [
      [['--method', 'logit-tree', '--objective', 'sft', ...out], 'one of --data FILE and --env E is required'],
      [[...base, '--data', DATA], 'only one of --data FILE and --env E is required'],
      [[...base, '--group', '1'], '--objective rl needs --group G ≥ 2 rollouts per prompt (got 1)'],
      [[...base, '--group', '2', '--batch', '3'], '--batch 3 is not a multiple of --group 2'],
      [[...base, '--order', 'file'], '--order applies to --data only'],
      [['--method', 'logit-tree', '--objective', 'sft', '--data', DATA, '--group', '2', ...out], '--group applies to --env only'],
      [[...base.filter((a) => a !== '--editor' && a !== 'compact')], '--editor H'],
      [[...base, '--budget', '0'], '--budget must be an integer ≥ 1'],
      [[...base, '--player', 'expert'], '--player expert plays demonstrations for --objective sft'],
      [[...base, '--player', 'human'], 'unknown --player "human" (model, expert)'],
      [
        ['--method', 'logit-tree', '--objective', 'sft', '--env', 'lookup', '--editor', 'compact', '--player', 'expert', '--temperature', '1', ...out],
        '--temperature applies to --player model only',
      ],
      [['--method', 'logit-tree', '--objective', 'sft', '--data', DATA, '--player', 'expert', ...out], '--player applies to --env only'],
      [[...base, '--checkpoint-every', '0'], '--checkpoint-every must be an integer ≥ 1'],
    ];
    // Each run its own checkpoint name (one name has one writer: the runs go at once).
    const runs = await Promise.all(cases.map(([args], i) => mw(['train', ...args.map((a) => a.replace(/([\\/])e\.(safetensors|jsonl)$/, `$1e-${i}.$2`))])));
    runs.forEach((run, i) => {
      expect(run, cases[i][1]).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toContain(cases[i][1]);
    });
    cases.forEach((_, i) => expect(existsSync(join(TMP, `e-${i}.jsonl`))).toBe(false));
    const help = await mw(['train', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--env E --editor H');
    expect(help.stdout).toContain('self-distillation');
  });
});
