// `mw verify` as a user runs it: Theorem 1 and GPU-vs-float64 on log-probabilities and gradients,
// exit 0 within tolerance on the worked example, exit 3 when float32 cannot hold the numbers.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../model/checkpoint';
import { MODEL_PRESETS } from '../model/config';
import { sftLossAndGrads } from '../model/reference/model';
import { readSafetensorsHeader } from '../util/safetensors';
import { buildPlan } from '../plan/build';
import { workedExample } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import { parameterShapes } from '../model/params';
import { randomWeights } from '../model/random-weights';
import { mw, tmpDir, WORKED, writeCheckpoint, writeSmallDataset } from './subprocess.testing';
import type { VerifyReport } from './verify';

const TMP = tmpDir('verify');
const TENSORS = parameterShapes(MODEL_PRESETS.tiny).map((p) => p.name);

function expectWithinTolerance(report: VerifyReport): void {
  expect(report.ok).toBe(true);
  const { logprob, gradient } = report;
  expect(logprob!.treeVsPacked.tolerance).toBe(1e-5);
  expect(logprob!.gpuVsCpu.tolerance).toBe(1e-4);
  expect(gradient!.treeVsPacked.tolerance).toBe(1e-4);
  expect(gradient!.gpuVsCpu.tolerance).toBe(1e-3);
  expect(logprob!.treeVsPacked.maxAbs).toBeLessThanOrEqual(1e-5);
  // float32 against float64: a real comparison leaves round-off, never exactly nothing.
  expect(logprob!.gpuVsCpu.maxAbs).toBeGreaterThan(0);
  expect(logprob!.gpuVsCpu.maxAbs).toBeLessThanOrEqual(1e-4);
  expect(gradient!.treeVsPacked.maxRel).toBeLessThanOrEqual(1e-4);
  expect(gradient!.gpuVsCpu.maxRel).toBeGreaterThan(0);
  expect(gradient!.gpuVsCpu.maxRel).toBeLessThanOrEqual(1e-3);
}

describe('mw verify', () => {
  it('exits 0 on the worked example (default config, wide random weights) and reports every difference', async () => {
    const run = await mw(['verify', WORKED, '--json']);
    expect(run.code).toBe(0);
    const report: VerifyReport = JSON.parse(run.stdout);
    expect(report).toMatchObject({ id: 'worked-example', targets: 8, packedLength: 21 });
    expect(report.model).toBe('random init wide, seed 0 (default: V 272, C 128, 4 layers, 4 heads, P 1024)');
    expectWithinTolerance(report);
    expect([2, 3, 7, 8, 13, 14, 15, 16]).toContain(report.logprob!.gpuVsCpu.target);
    expect(['logit-tree', 'packed-4d']).toContain(report.gradient!.gpuVsCpu.method);
    expect(run.stderr).toMatch(/^mw verify: \[1\/1\] worked-example: GPU [\d.]+ s, float64 CPU reference over 21 packed tokens\.\.\. [\d.]+ s\n$/);
  });

  it('checks every rollout of a JSONL file (tiny config), and prints a table by default', async () => {
    const data = writeSmallDataset(join(TMP, 'data.jsonl'));
    const run = await mw(['verify', data, '--config', 'tiny', '--seed', '4', '--json']);
    expect(run.code).toBe(0);
    const reports: VerifyReport[] = JSON.parse(run.stdout);
    expect(reports.map((r) => [r.id, r.targets])).toEqual([
      ['worked-example', 8],
      ['r301', 9],
      ['r302', 20],
    ]);
    for (const r of reports) {
      expectWithinTolerance(r);
      expect(TENSORS).toContain(r.gradient!.gpuVsCpu.tensor);
    }
    expect(run.stderr.trim().split('\n')).toHaveLength(3);

    const table = await mw(['verify', WORKED, '--config', 'tiny']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toBe('worked-example: 8 targets, 21 packed tokens; random init wide, seed 0 (tiny: V 272, C 32, 2 layers, 2 heads, P 128)');
    expect(lines.slice(2).map((l) => l.split(/\s{2,}/)[1])).toEqual([
      'logit-tree vs packed-4d',
      expect.stringMatching(/^GPU \((logit-tree|packed-4d)\) vs CPU$/),
      'logit-tree vs packed-4d',
      expect.stringMatching(/^GPU \((logit-tree|packed-4d)\) vs CPU$/),
    ]);
    expect(lines.slice(2).every((l) => l.endsWith(' ok'))).toBe(true);
  });

  it('exits 3 when a difference exceeds its tolerance: logits of ~1e4 leave float32 ~1e-3 off in log-probability', async () => {
    const weights = randomWeights(MODEL_PRESETS.tiny, 3);
    const gain = weights.tensors.get('ln_f.weight')!;
    gain.forEach((v, i) => (gain[i] = v * 1e4));
    const ckpt = writeCheckpoint(join(TMP, 'extreme.safetensors'), weights);
    const run = await mw(['verify', WORKED, '--ckpt', ckpt, '--json']);
    expect(run.code).toBe(3);
    const report: VerifyReport = JSON.parse(run.stdout);
    expect(report.ok).toBe(false);
    expect(report.model).toBe(`${ckpt} (V 272, C 32, 2 layers, 2 heads, P 128)`);
    expect(report.logprob!.gpuVsCpu.maxAbs).toBeGreaterThan(1e-4);
    expect(report.logprob!.treeVsPacked.maxAbs).toBeLessThanOrEqual(1e-5); // Theorem 1 still holds
  });

  it('--grad-out writes the GPU packed-4d SFT gradient as a GPT-2-named file, equal to the float64 reference', async () => {
    const weights = randomWeights(MODEL_PRESETS.tiny, 5);
    const ckpt = writeCheckpoint(join(TMP, 'grad.safetensors'), weights);
    const out = join(TMP, 'grad-out.safetensors');
    const run = await mw(['verify', WORKED, '--ckpt', ckpt, '--grad-out', out, '--json']);
    expect(run.code).toBe(0);
    const bytes = new Uint8Array(readFileSync(out));
    expect(readSafetensorsHeader(bytes).metadata).toMatchObject({
      kind: 'gradient',
      method: 'packed-4d',
      objective: 'sft',
      rollout: 'worked-example',
      n_embd: '32',
    });
    const grads = loadCheckpoint(bytes).tensors;
    const packed = buildPlan(deriveTree(workedExample()), 'packed-4d').sequences[0];
    const cpu = sftLossAndGrads(weights, packed, packed.targets).grads;
    for (const [name, want] of cpu) {
      const got = grads.get(name)!;
      const scale = Math.max(...Array.from(want, Math.abs));
      const diff = Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));
      expect(diff / scale, name).toBeLessThan(1e-4);
    }
    const two = await mw(['verify', writeSmallDataset(join(TMP, 'two.jsonl')), '--config', 'tiny', '--grad-out', out]);
    expect(two).toMatchObject({ code: 1, stdout: '' });
    expect(two.stderr).toMatch(/^mw verify: --grad-out needs a file of one rollout, this one has 3/);
  });

  it('usage and input errors: --config with --ckpt is exit 1, an invalid file exit 2', async () => {
    const both = await mw(['verify', WORKED, '--ckpt', join(TMP, 'x.safetensors'), '--config', 'tiny']);
    expect(both).toMatchObject({ code: 1, stdout: '' });
    expect(both.stderr).toMatch(/^mw verify: --config does not go with --ckpt/);
    const missing = await mw(['verify', join(TMP, 'none.json')]);
    expect(missing).toEqual({ code: 2, stdout: '', stderr: `${join(TMP, 'none.json')}: no such file\n` });
    const init = await mw(['verify', WORKED, '--init', 'xavier']);
    expect(init).toMatchObject({ code: 1, stdout: '' });
    expect(init.stderr).toMatch(/^mw verify: unknown --init "xavier" \(gpt2, wide\)/);
  });
});
