// A session longer than the model (docs/methods.md, "Long sessions"), as `mw score` and `mw drift` read it with
// a model of 16 positions: the targets within reach score exactly as they do in the rollout cut there, the rest
// are counted per method; with --window every target is scored, on the last N − 1 tokens of its own context.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../model/config';
import { randomWeights } from '../model/random-weights';
import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { DriftOutput } from './drift';
import type { ScoredRollout } from './score';
import { mw, tmpDir, writeCheckpoint } from './subprocess.testing';

const TMP = tmpDir('long-session');
const P = 16;
const CKPT = writeCheckpoint(join(TMP, 'p16.safetensors'), randomWeights({ ...MODEL_PRESETS.tiny, nPositions: P }, 5));

const tokens = (n: number, from: number) => Array.from({ length: n }, (_, i) => (from + 7 * i) % 256);
const act = (n: number, from: number) => ({ op: 'append', role: 'act', tokens: tokens(n, from), logprobs: tokens(n, 3).map((t) => -t / 64) });
const HEAD = [
  { op: 'append', role: 'prompt', tokens: tokens(4, 1) },
  act(3, 2),
  { op: 'append', role: 'obs', tokens: tokens(4, 3) },
  act(3, 4),
  { op: 'edit', view: [{ keep: [0, 4] }, { insert: { role: 'summary', tokens: tokens(2, 5) } }, { keep: [11, 14] }] },
];
const TAIL = [act(4, 6), { op: 'append', role: 'obs', tokens: tokens(3, 7) }];
const rollout = (id: string, events: unknown[]) => ({ format: 'memorywalker.rollout/v1', id, vocab: 272, events });
const write = (name: string, value: unknown) => {
  const path = join(TMP, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};
const TAPE = [...tokens(4, 1), ...tokens(3, 2), ...tokens(4, 3), ...tokens(3, 4), ...tokens(2, 5), ...tokens(4, 6), ...tokens(3, 7), ...tokens(7, 8)];
const lines = (...values: unknown[]) => values.map((v) => JSON.stringify(v)).join('\n');
/**
 * Branch 0 of 14 ids, edit 1 keeps 7 and inserts 2, the final branch grows to 23 live ids: a tape of 30. Beside
 * it, the rollout cut where the final branch reaches 16 live ids (what the live and final prefixes reach), and
 * where the tape does (naive-full's reach).
 */
const LONG = rollout('long', [...HEAD, ...TAIL, act(7, 8)]);
const SET = write('long.jsonl', lines(LONG, rollout('cut-branch', [...HEAD, ...TAIL]), rollout('cut-tape', HEAD)));
const LONG_FILE = write('long.json', LONG);
/** Target 27's window of 6 alone: the five tape ids before it (also the last five of its live prefix), then itself. */
const WINDOW_SET = write(
  'window.jsonl',
  lines(
    LONG,
    rollout('window-27', [
      { op: 'append', role: 'prompt', tokens: TAPE.slice(22, 27) },
      { op: 'append', role: 'act', tokens: [TAPE[27]] },
    ]),
  ),
);

async function score(file: string, method: SequenceMethod, extra: string[] = []): Promise<ScoredRollout[]> {
  const run = await mw(['score', '--ckpt', CKPT, file, '--method', method, '--json', ...extra]);
  expect(run, `${method} ${file}`).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(run.stdout);
}
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The long rollout's scores of the first test, reused by the second (each still runs alone). */
let scoredLong: ScoredRollout[] | undefined;

describe('a session longer than the model', () => {
  it('mw score scores the targets within reach exactly as in the rollout cut there, and lists the rest', async () => {
    const runs = await Promise.all(SEQUENCE_METHODS.map((m) => score(SET, m)));
    SEQUENCE_METHODS.forEach((method, i) => {
      const [long, cutBranch, cutTape] = runs[i];
      const cut = method === 'naive-full' ? cutTape : cutBranch;
      // Bit for bit: the same rows, the same positions.
      expect(long.targets, method).toEqual(cut.targets);
      expect(long.outOfReach, method).toEqual(method === 'naive-full' ? [...range(16, 20), ...range(23, 30)] : range(23, 30));
      expect(cut.outOfReach).toBeUndefined();
    });
    // naive-full reaches ids 0 .. 15 (targets 4, 5, 6, 11, 12, 13); the others the final branch's first 16 live ids.
    expect(runs[1][0].targets.map((t) => t.id)).toEqual([4, 5, 6, 11, 12, 13]);
    expect(runs[2][0].targets.map((t) => t.id)).toEqual([4, 5, 6, 11, 12, 13, 16, 17, 18, 19]);
    scoredLong = runs.map((r) => r[0]);
  });

  it('mw drift reports the drift of the targets within reach and counts the rest per method', async () => {
    const run = await mw(['drift', '--ckpt', CKPT, '--rollouts', LONG_FILE, '--json']);
    const scored = scoredLong ?? (await Promise.all(SEQUENCE_METHODS.map(async (m) => (await score(SET, m))[0])));
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report: DriftOutput = JSON.parse(run.stdout);
    expect(report.reach).toEqual({
      positions: 16,
      window: null,
      methods: {
        'naive-compressed': { targets: 14, outOfReach: 7, windowed: 0 }, // 4, 5, 6 are not in the final walk
        'naive-full': { targets: 17, outOfReach: 11, windowed: 0 },
        'logit-tree': { targets: 17, outOfReach: 7, windowed: 0 },
        'packed-4d': { targets: 17, outOfReach: 7, windowed: 0 },
      },
    });
    // The figures are those of mw score's numbers of the same targets.
    const rolloutLogprob = new Map<number, number>();
    const live = new Map(scored[2].targets.map((t) => [t.id, t.logprob]));
    const ids = [4, 5, 6, 11, 12, 13, 16, 17, 18, 19, 23, 24, 25, 26, 27, 28, 29];
    const values = [...tokens(3, 3), ...tokens(3, 3), ...tokens(4, 3), ...tokens(7, 3)].map((t) => -t / 64);
    ids.forEach((id, k) => rolloutLogprob.set(id, values[k]));
    SEQUENCE_METHODS.forEach((method, i) => {
      const targets = scored[i].targets;
      const m = report.methods[method];
      expect(m.scored, method).toBe(targets.length);
      expect(m.mu!, method).toBeCloseTo(mean(targets.map((t) => t.logprob - rolloutLogprob.get(t.id)!)), 12);
      expect(m.conditioningMu!, method).toBeCloseTo(mean(targets.map((t) => t.logprob - live.get(t.id)!)), 12);
    });
  });

  it('with --window every target is scored on the last N − 1 tokens of its context, at positions from 0', async () => {
    const [[tree, single], [packed], [full], drift] = await Promise.all([
      score(WINDOW_SET, 'logit-tree', ['--window', '6']),
      score(WINDOW_SET, 'packed-4d', ['--window', '6']),
      score(WINDOW_SET, 'naive-full', ['--window', '6']),
      mw(['drift', '--ckpt', CKPT, '--rollouts', LONG_FILE, '--json', '--window', '6']),
    ]);
    expect(tree.targets).toHaveLength(17);
    expect(tree.outOfReach).toBeUndefined();
    // The targets at live positions 6 and beyond: 6, 11 .. 13 (branch 0, where ids are positions), all of the final branch's.
    expect(tree.windowed).toEqual([6, 11, 12, 13, 16, 17, 18, 19, ...range(23, 30)]);
    // The exact methods still agree: the same windows of the same live prefixes.
    tree.targets.forEach((t, k) => expect(packed.targets[k].logprob, `target ${t.id}`).toBeCloseTo(t.logprob, 5));
    // A windowed target scores as a rollout of its window alone: positions restart at 0. Target 27's live prefix ends
    // with ids 22 .. 26 (the obs' last token and four of the act); naive-full sees the same five tape ids.
    expect(single.windowed).toBeUndefined();
    expect(tree.targets.find((t) => t.id === 27)!.logprob).toBe(single.targets[0].logprob);
    expect(full.targets.find((t) => t.id === 27)!.logprob).toBe(single.targets[0].logprob);

    expect(drift).toMatchObject({ code: 0, stderr: '' });
    const report: DriftOutput = JSON.parse(drift.stdout);
    expect(report.reach.window).toBe(6);
    expect(report.reach.methods['logit-tree']).toEqual({ targets: 17, outOfReach: 0, windowed: 15 });
    expect(report.methods['naive-full'].scored).toBe(17);

    const wide = await mw(['drift', '--ckpt', CKPT, '--rollouts', LONG_FILE, '--window', '17']);
    expect(wide).toMatchObject({ code: 1, stdout: '' });
    expect(wide.stderr).toMatch(/--window 17: the window of 17 positions exceeds the model's 16/);
  });
});
