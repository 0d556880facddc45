// `mw drift` as a user runs it: per method logdiff / μ against the rollout logprobs (checked against
// `mw score`'s numbers), conditioning drift against logit-tree, the sign split and the histograms.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SamplingOptions } from '../harness/policies/model';
import { expectedTargetDrift } from '../metrics/expected-drift';
import { mismatchFigures } from '../metrics/mismatch';
import { MODEL_PRESETS } from '../model/config';
import { referenceForward } from '../model/reference/model';
import { buildPlan } from '../plan/build';
import type { SequenceMethod } from '../plan/types';
import { parseRolloutFile } from '../rollout/parse';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import type { DriftOutput } from './drift';
import { mw, tmpDir, WORKED, writeCheckpoint, writeSmallDataset } from './subprocess.testing';

const TMP = tmpDir('drift');
const WEIGHTS = randomWeights(MODEL_PRESETS.tiny, 8);
const CKPT = writeCheckpoint(join(TMP, 'tiny.safetensors'), WEIGHTS);
const METHODS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const;
/** The worked example's rollout logprobs by target id. */
const ROLLOUT: Record<number, number> = { 2: -1.5, 3: -0.5, 7: -0.25, 8: -2, 13: -0.75, 14: -1, 15: -0.5, 16: -0.125 };

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('mw drift', () => {
  it('reports every method on the worked example; logdiff and μ match the scores mw score prints', async () => {
    const [run, scored, scoredLive, scoredCompressed] = await Promise.all([
      mw(['drift', '--ckpt', CKPT, '--rollouts', WORKED, '--json', '--bins', '8']),
      mw(['score', '--ckpt', CKPT, WORKED, '--method', 'naive-full', '--json']),
      mw(['score', '--ckpt', CKPT, WORKED, '--method', 'logit-tree', '--json']),
      mw(['score', '--ckpt', CKPT, WORKED, '--method', 'naive-compressed', '--json']),
    ]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report: DriftOutput = JSON.parse(run.stdout);
    expect(report).toMatchObject({ rollouts: 1, targets: 8, withLogprobs: 8, signEpsilon: 1e-4 });
    expect(Object.keys(report.methods)).toEqual([...METHODS]);

    const targets: { id: number; logprob: number }[] = JSON.parse(scored.stdout).targets;
    const diffs = targets.map((t) => t.logprob - ROLLOUT[t.id]);
    const full = report.methods['naive-full'];
    expect(full).toMatchObject({ scored: 8, n: 8 });
    expect(full.logdiff).toBeCloseTo(sum(diffs.map(Math.abs)) / 8, 12);
    expect(full.mu).toBeCloseTo(sum(diffs) / 8, 12);
    expect(full.sign.rollout.diverging).toBe(diffs.filter((d) => Math.abs(d) > 1e-4).length);
    expect(full.sign.rollout.negativeShare).toBeCloseTo(diffs.filter((d) => d < -1e-4).length / full.sign.rollout.diverging, 12);
    // verl's figures of the same scores, one sequence (the rollout); slime's abs diff is logdiff.
    const verl = mismatchFigures([{ train: targets.map((t) => t.logprob), rollout: targets.map((t) => ROLLOUT[t.id]) }])!;
    for (const [name, value] of Object.entries(verl)) expect(full.rollout_corr![name as keyof typeof verl], name).toBeCloseTo(value, 10);
    expect(full.rollout_corr!.train_rollout_logprob_abs_diff).toBeCloseTo(full.logdiff!, 12);
    expect(full.rollout_corr!.kl).toBeCloseTo(-full.mu!, 12);

    // The exact methods are their own live-prefix score (packed-4d up to float reassociation).
    expect(report.methods['logit-tree']).toMatchObject({ scored: 8, conditioningDrift: 0, conditioningMu: 0 });
    expect(report.methods['logit-tree'].sign.conditioning).toEqual({ diverging: 0, negativeShare: null });
    expect(report.methods['packed-4d'].conditioningDrift).toBeLessThan(1e-5);
    // naive-compressed scores the 4 targets of the final walk; only 13 and 14 (the diverging leaves) move.
    const compressed = report.methods['naive-compressed'];
    expect(compressed).toMatchObject({ scored: 4, n: 4 });
    expect(compressed.sign.conditioning.diverging).toBe(2);
    expect(compressed.conditioningDrift).toBeGreaterThan(1e-3);
    // naive-full's stale context reaches 13..16 (evicted ids 2..6 stay in view); 2, 3, 7, 8 see their live prefix.
    expect(full.sign.conditioning.diverging).toBe(4);

    for (const method of METHODS) {
      const m = report.methods[method];
      expect(m.histogram.rollout.counts).toHaveLength(8);
      expect(sum(m.histogram.rollout.counts)).toBe(m.n);
      expect(sum(m.histogram.conditioning.counts)).toBe(m.scored);
      expect(m.histogram.rollout.edges).toEqual(report.methods['naive-full'].histogram.rollout.edges); // one range for all
    }
    const edges = full.histogram.rollout.edges;
    expect(edges.at(-1)).toBe(-edges[0]);
    expect(edges.at(-1)).toBeGreaterThanOrEqual(Math.max(...diffs.map(Math.abs)) - 1e-12);

    // Drift per edit equals a recomputation from mw score's numbers: edit 1 evicts the observation 2..6 (in the
    // live prefixes of 3, 7, 8) and opens the segment of 13, 14; edit 2 evicts 7, 8, 11, 12 (in those of 8, 13, 14)
    // and opens that of 15, 16.
    const byId = (out: string) => new Map<number, number>(JSON.parse(out).targets.map((t: { id: number; logprob: number }) => [t.id, t.logprob]));
    const live = byId(scoredLive.stdout);
    const perMethod = { 'naive-full': byId(scored.stdout), 'naive-compressed': byId(scoredCompressed.stdout), 'logit-tree': live };
    const junctions = [...report.junctions].sort((a, b) => a.edit - b.edit);
    expect(junctions.map((j) => [j.edit, j.targets.before, j.targets.after])).toEqual([
      [1, [3, 7, 8], [13, 14]],
      [2, [8, 13, 14], [15, 16]],
    ]);
    for (const j of junctions) {
      let cost = 0;
      for (const [method, logprobs] of Object.entries(perMethod)) {
        const d = [...j.targets.before, ...j.targets.after].filter((id) => logprobs.has(id)).map((id) => logprobs.get(id)! - live.get(id)!);
        const got = j.methods[method as SequenceMethod];
        expect(got.n, `edit ${j.edit} ${method}`).toBe(d.length);
        expect(got.mu!, `edit ${j.edit} ${method}`).toBeCloseTo(sum(d) / d.length, 12);
        expect(got.logdiff!, `edit ${j.edit} ${method}`).toBeCloseTo(sum(d.map(Math.abs)) / d.length, 12);
        const top = d.map((x, k) => ({ x, k })).sort((a, b) => Math.abs(b.x) - Math.abs(a.x))[0];
        if (top.x !== 0) expect(got.largest[0].drift).toBeCloseTo(top.x, 12);
        cost = Math.max(cost, sum(d.map(Math.abs)));
      }
      expect(j.methods['naive-compressed'].n).toBe(j.edit === 1 ? 2 : 4); // the final walk drops 3, 7, 8
      expect(j.cost).toBeCloseTo(cost, 12);
    }
    expect(report.junctions[0].cost).toBeGreaterThanOrEqual(report.junctions[1].cost);
    // The verdict: made-up rollout logprobs are foreign to this model; against the live prefix the exact methods set the floor.
    expect(report.verdict.rollout!.foreign).toBe(true);
    expect(report.verdict.conditioning.floor).toBe(1e-6);
    // (a random model: the naive methods' signs are whatever their μ says, far beyond 4 floors)
    const signOf = (mu: number) => (mu < 0 ? 'below' : 'above');
    expect(report.verdict.conditioning.methods.map((m) => m.state)).toEqual([
      signOf(compressed.conditioningMu!),
      signOf(full.conditioningMu!),
      'at-floor',
      'at-floor',
    ]);
  });

  it('pools a JSONL file and prints a table by default; rollouts without logprobs count only for conditioning drift', async () => {
    const data = writeSmallDataset(join(TMP, 'data.jsonl'));
    const [json, table] = await Promise.all([mw(['drift', '--ckpt', CKPT, '--rollouts', data, '--json']), mw(['drift', '--ckpt', CKPT, '--rollouts', data])]);
    expect(json.code).toBe(0);
    const report: DriftOutput = JSON.parse(json.stdout);
    expect(report).toMatchObject({ rollouts: 3, targets: 37 });
    expect(report.withLogprobs).toBeLessThan(37);
    expect(report.methods['logit-tree']).toMatchObject({ scored: 37, n: report.withLogprobs });
    expect(report.methods['naive-compressed'].sign.conditioning.diverging).toBe(6); // 2 + 0 + 4 diverging leaves
    expect(report.methods['naive-compressed'].histogram.rollout.counts).toHaveLength(20);

    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^3 rollouts, 37 targets, \d+ with rollout logprobs; conditioning drift against logit-tree/);
    expect(lines[1].split(/\s{2,}/)).toEqual([
      'method',
      'scored',
      'n',
      'logdiff',
      'mu',
      'negative',
      'cond drift',
      'cond mu',
      'cond negative',
      'expected mu',
      'exp negative',
    ]);
    expect(lines.slice(2, 6).map((l) => l.split(/\s+/)[0])).toEqual([...METHODS]);
    expect(lines[4].split(/\s{2,}/).slice(6)).toEqual(['0', '0', '-', '0', '-']); // logit-tree against itself: exactly 0
    // verl's figures: a table of their own, one row per method, the numbers of --json.
    const verl = lines.indexOf('') + 1;
    expect(lines[verl]).toMatch(/^verl's rollout_corr/);
    expect(lines[verl + 1].split(/\s{2,}/)).toEqual([
      'method',
      'kl',
      'k3_kl',
      'log_ppl_diff',
      'log_ppl_abs_diff',
      'ppl_ratio',
      'chi2_token',
      'chi2_seq',
      'rollout_is_eff_sample_size',
    ]);
    expect(lines.slice(verl + 2, verl + 6).map((l) => l.split(/\s+/)[0])).toEqual([...METHODS]);
    // three significant digits (src/present/number.ts)
    const k3 = report.methods['naive-compressed'].rollout_corr!.k3_kl;
    expect(Math.abs(Number(lines[verl + 2].split(/\s+/)[2]) - k3)).toBeLessThanOrEqual(0.005 * k3);
    // The verdicts, against the rollout's logprobs and the live prefix, end in what to conclude; then the costliest edits.
    expect(lines.filter((l) => l.startsWith('verdict against '))).toHaveLength(2);
    expect(lines.some((l) => l === report.verdict.conditioning.conclusion)).toBe(true);
    const perEdit = lines.findIndex((l) => l.startsWith('drift per edit'));
    expect(lines[perEdit]).toContain(`of ${report.junctions.length};`);
    expect(lines[perEdit + 2].split(/\s{2,}/)[0]).toBe(`${report.junctions[0].rollout} edit ${report.junctions[0].edit}`);
  });

  it('expected drift: the float64 reference model gives the same numbers; −KL ≤ 0 at temperature 1 for every target', async () => {
    const sharp: SamplingOptions = { temperature: 0.5, topK: 3 };
    const [full, sharpRun] = await Promise.all([
      mw(['drift', '--ckpt', CKPT, '--rollouts', WORKED, '--json']),
      mw(['drift', '--ckpt', CKPT, '--rollouts', WORKED, '--json', '--temperature', '0.5', '--top-k', '3']),
    ]);
    expect(full.code, full.stderr).toBe(0);
    expect(sharpRun.code, sharpRun.stderr).toBe(0);
    const atOne: DriftOutput = JSON.parse(full.stdout);
    const atSharp: DriftOutput = JSON.parse(sharpRun.stdout);
    expect(atOne.expected.sampling).toEqual({ temperature: 1, topK: 0, topP: 1 });
    expect(atSharp.expected.sampling).toEqual({ temperature: 0.5, topK: 3, topP: 1 });

    // Each target's logits row under a method, from the reference forward of the method's sequences.
    const rollout = parseRolloutFile(readFileSync(WORKED, 'utf8'), 'worked-example.json')[0];
    const tree = deriveTree(rollout);
    const rows = (method: SequenceMethod) => {
      const out = new Map<number, Float64Array>();
      for (const s of buildPlan(tree, method).sequences) {
        const { logits } = referenceForward(WEIGHTS, s);
        const V = WEIGHTS.config.vocabSize;
        for (const t of s.targets) out.set(t.id, logits.slice(t.predictor * V, (t.predictor + 1) * V));
      }
      return out;
    };
    const live = rows('logit-tree');
    for (const method of METHODS) {
      const replay = rows(method);
      for (const [sampling, report] of [
        [{}, atOne],
        [sharp, atSharp],
      ] as const) {
        const drifts = [...replay].map(([id, row]) => expectedTargetDrift(live.get(id)!, row, sampling));
        const e = report.expected.methods[method]!;
        expect(e.n).toBe(replay.size);
        expect(Math.abs(e.mu! - sum(drifts) / drifts.length), `${method} ${JSON.stringify(sampling)}`).toBeLessThan(1e-5);
        expect(e.sign.diverging).toBe(drifts.filter((d) => Math.abs(d) > 1e-4).length);
      }
    }
    // The exact methods expect no drift; at temperature 1 each diverging target of the naive ones expects a loss.
    for (const method of ['logit-tree', 'packed-4d'] as const) expect(Math.abs(atOne.expected.methods[method]!.mu!)).toBeLessThan(1e-6);
    for (const method of ['naive-compressed', 'naive-full'] as const) {
      expect(atOne.expected.methods[method]!.sign.diverging).toBeGreaterThan(0);
      expect(atOne.expected.methods[method]!.sign.negativeShare).toBe(1);
    }
  });

  it("keeps the matmul autotune's choice in the cache directory: measured once, read after, a corrupt file replaced", async () => {
    const cache = tmpDir('cache');
    const file = join(cache, 'matmul-variants.json');
    const run = () => mw(['drift', '--ckpt', CKPT, '--rollouts', WORKED, '--json'], { MW_CACHE_DIR: cache });
    expect((await run()).code).toBe(0);
    const entries = JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['mw.matmulVariant.v1']);
    expect(Object.keys(entries)).toHaveLength(1); // one adapter
    expect(Object.values(entries)[0]).toHaveProperty('kind');
    const written = statSync(file).mtimeMs;
    expect((await run()).code).toBe(0);
    expect(statSync(file).mtimeMs).toBe(written); // read, not measured and written again
    writeFileSync(file, '{not json');
    expect((await run()).code).toBe(0);
    expect(Object.keys(JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['mw.matmulVariant.v1']))).toHaveLength(1);
  });

  it('a bad checkpoint is exit 2, a missing --rollouts exit 1', async () => {
    const [bad, usage] = await Promise.all([mw(['drift', '--ckpt', WORKED, '--rollouts', WORKED, '--json']), mw(['drift', '--ckpt', CKPT, WORKED])]);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(new RegExp(`^${WORKED}: safetensors: .+\\n$`));
    expect(usage).toMatchObject({ code: 1, stdout: '' });
    expect(usage.stderr).toMatch(/^mw drift: --rollouts FILE is required/);
  });
});
