// A positive Naive-Compressed on expert data, as `mw drift` reports it (docs/metrics.md, "The verdict"): the expert
// example's rollouts (the app's "Expert · fold": lookup, fold, 4 prompts, seed 1) scored by a checkpoint SFT'd under
// Naive-Compressed on the expert's demonstrations of other prompts (fixtures/models/expert-fold-nc.safetensors).
// The model learned the final walk's targets in the final walk's context, never under their live prefix: against the
// live prefix Naive-Compressed is above zero, and the verdict reads it as that, not as stale context or leakage.
// The shipped demo model on the same rollouts: −0.160 (src/app/load/examples-verdict.gpu.test.ts); on the expert's
// rollouts under `stack` (seed 1) it is above zero too, without any training on final walks: the expert's tokens are
// not this model's samples (at the points where the live prefix leaves it unsure what to do next, "lookup" after an
// observation, the final walk's later summaries settle it).

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DriftOutput } from './drift';
import { mw, ROOT, tmpDir } from './subprocess.testing';

const TMP = tmpDir('expert-drift');
const CKPT = join(ROOT, 'fixtures/models/expert-fold-nc.safetensors');

describe('mw drift: a model trained under Naive-Compressed on expert demonstrations, on the expert example', () => {
  it('Naive-Compressed μ +2.78 against the live prefix, "above zero" with the trained-on-final-walks reading, in the JSON and the table', async () => {
    const file = join(TMP, 'expert-fold.jsonl');
    const gen = await mw(['generate', '--policy', 'expert', '--env', 'lookup', '--editor', 'fold', '--n', '4', '--seed', '1', '--out', file]);
    expect(gen.code, gen.stderr).toBe(0);
    const json = await mw(['drift', '--ckpt', CKPT, '--rollouts', file, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const report: DriftOutput = JSON.parse(json.stdout);
    const compressed = report.methods['naive-compressed'];
    expect(report.rollouts).toBe(4);
    expect(compressed.n).toBe(88); // the final walk's "lookup <3rd name>" and "answer <name>" of each rollout
    expect(compressed.conditioningMu!).toBeCloseTo(2.78, 1);
    // Nearly every target the final walk moves goes up (43 of 44 at the time of writing).
    expect(compressed.sign.conditioning.diverging).toBe(44);
    expect(compressed.sign.conditioning.negativeShare!).toBeLessThan(0.1);
    // The expert's logprobs are 0: against them every method is below zero by the model's own loss (foreign).
    expect(report.verdict.rollout!.foreign).toBe(true);

    const live = report.verdict.conditioning;
    const nc = live.methods.find((m) => m.method === 'naive-compressed')!;
    expect(nc.state).toBe('above');
    expect(nc.meaning).toMatch(/trained on final walks/);
    expect(nc.meaning).toMatch(/not stale context/);
    expect(nc.meaning).not.toMatch(/^(stale context|time-travel leakage)/);
    expect(live.methods.filter((m) => m.method === 'logit-tree' || m.method === 'packed-4d').map((m) => m.state)).toEqual(['at-floor', 'at-floor']);
    expect(live.conclusion).toMatch(/^naive-compressed \(μ \+2\.7\d/);

    // The table says the same on Naive-Compressed's verdict line.
    const table = await mw(['drift', '--ckpt', CKPT, '--rollouts', file]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    const start = lines.findIndex((l) => l.startsWith('verdict against the live prefix'));
    const line = lines.slice(start).find((l) => l.startsWith('naive-compressed '))!;
    expect(line).toMatch(/^naive-compressed\s+above zero\s+2\.\de6\s+the final walk makes the policy’s tokens likelier/);
    expect(line).toContain(nc.meaning);
    expect(lines).toContain(live.conclusion);
  }, 300_000);

  it("the shipped demo model on the expert's stack rollouts: Naive-Compressed μ +0.979, above zero with the same reading", async () => {
    const file = join(TMP, 'expert-stack.jsonl');
    const gen = await mw(['generate', '--policy', 'expert', '--env', 'lookup', '--editor', 'stack', '--n', '4', '--seed', '1', '--out', file]);
    expect(gen.code, gen.stderr).toBe(0);
    const json = await mw(['drift', '--ckpt', join(ROOT, 'public/models/demo.safetensors'), '--rollouts', file, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const report: DriftOutput = JSON.parse(json.stdout);
    const compressed = report.methods['naive-compressed'];
    expect(compressed.n).toBe(176);
    expect(compressed.conditioningMu!).toBeCloseTo(0.979, 2);
    const nc = report.verdict.conditioning.methods.find((m) => m.method === 'naive-compressed')!;
    expect(nc.state).toBe('above');
    expect(nc.meaning).toMatch(/an expert’s demonstrations \(tokens chosen knowing the outcome, not sampled from this model\)/);
    expect(nc.meaning).toMatch(/not stale context/);
  }, 300_000);
});
