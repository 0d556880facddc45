// `mw verify --ckpt MODEL-FOLDER` as a user runs it: a model folder is scored, not trained, so its report
// holds the two log-probability checks alone (logit-tree vs packed-4d, GPU vs the family's float64
// reference) and they are the very differences `mw score` and the reference give target by target.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { familyReferenceLogprobs } from '../model/family/reference';
import { buildPlan } from '../plan/build';
import { parseRolloutFile } from '../rollout/parse';
import { writeFamilyFolder } from '../testing/familyFolders';
import { deriveTree } from '../tree/derive';
import { mw, tmpDir, WORKED } from './subprocess.testing';
import { FAMILY_NO_GRADIENT, type VerifyReport } from './verify';

const TMP = tmpDir('verify-family');
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

describe('mw verify --ckpt MODEL-FOLDER', () => {
  it('qwen3 bf16: exit 0, logprobs only, the same differences mw score and the float64 reference give', async () => {
    const folder = writeFamilyFolder(join(TMP, 'qwen3'), 'qwen3', 3);
    const worked = JSON.parse(readFileSync(WORKED, 'utf8'));
    const file = join(TMP, 'rollout.json');
    writeFileSync(file, JSON.stringify({ ...worked, id: 'q', vocab: 320, tokenizer: 'hf:qwen3' }));
    const rollout = parseRolloutFile(readFileSync(file, 'utf8'), file)[0];

    const run = await mw(['verify', file, '--ckpt', folder.dir, '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^mw verify: \[1\/1\] q: GPU [\d.]+ s, float64 CPU reference over 21 packed tokens\.\.\. [\d.]+ s\n$/);
    const report: VerifyReport = JSON.parse(run.stdout);
    expect(report).toMatchObject({ id: 'q', targets: 8, packedLength: 21, gradient: null, ok: true });
    expect(report.model).toMatch(/^\S+qwen3 \(Qwen3ForCausalLM/);

    // The same figures from mw score (both exact methods) and the reference on the packed-4d plan.
    const scores: Record<string, Map<number, number>> = {};
    for (const method of ['logit-tree', 'packed-4d']) {
      const scored = await mw(['score', '--ckpt', folder.dir, file, '--method', method, '--json']);
      scores[method] = new Map(JSON.parse(scored.stdout).targets.map((t: { id: number; logprob: number }) => [t.id, t.logprob]));
    }
    const packed = buildPlan(deriveTree(rollout), 'packed-4d').sequences[0];
    const values = familyReferenceLogprobs({ config: folder.config, tensors: folder.tensors }, packed, packed.targets);
    const maxDiff = (a: Map<number, number>, b: (id: number) => number) => Math.max(...[...a].map(([id, v]) => Math.abs(v - b(id))));
    const treeVsPacked = maxDiff(scores['packed-4d'], (id) => scores['logit-tree'].get(id)!);
    const gpuVsCpu = Math.max(...Object.values(scores).map((s) => maxDiff(s, (id) => values[packed.targets.findIndex((t) => t.id === id)])));
    const { logprob } = report;
    expect(logprob!.treeVsPacked.maxAbs).toBeCloseTo(treeVsPacked, 7);
    expect(logprob!.gpuVsCpu.maxAbs).toBeCloseTo(gpuVsCpu, 7);
    expect(logprob!.gpuVsCpu.maxAbs).toBeGreaterThan(0); // float32 against float64 leaves round-off
    expect(logprob!.gpuVsCpu.maxAbs).toBeLessThanOrEqual(1e-4);
    console.log(`qwen3 verify: tree vs packed ${treeVsPacked.toExponential(2)}, GPU vs float64 ${gpuVsCpu.toExponential(2)}`);

    const table = await mw(['verify', file, '--ckpt', folder.dir]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines.slice(2, 4).map((l) => [l.split(/\s{2,}/)[1], l.endsWith(' ok')])).toEqual([
      ['logit-tree vs packed-4d', true],
      [expect.stringMatching(/^GPU \((logit-tree|packed-4d)\) vs CPU$/), true],
    ]);
    expect(lines[4]).toBe(FAMILY_NO_GRADIENT);
  });

  it('--grad-out and --config do not go with a model folder (exit 1); a rollout of another tokenizer is exit 2', async () => {
    const folder = writeFamilyFolder(join(TMP, 'llama'), 'llama', 2);
    const grad = await mw(['verify', WORKED, '--ckpt', folder.dir, '--grad-out', join(TMP, 'g.safetensors')]);
    expect(grad).toMatchObject({ code: 1, stdout: '' });
    expect(grad.stderr).toMatch(/^mw verify: --grad-out needs a GPT-2 checkpoint: a model folder is scored, not trained/);
    const config = await mw(['verify', WORKED, '--ckpt', folder.dir, '--config', 'tiny']);
    expect(config.stderr).toMatch(/^mw verify: --config does not go with --ckpt/);
    const other = await mw(['verify', WORKED, '--ckpt', folder.dir]);
    expect(other).toEqual({
      code: 2,
      stdout: '',
      stderr: `${WORKED}: rollout "worked-example" is tokenized with byte (vocabulary 272), but the model's vocabulary of 320 is the hf:llama tokenizer's (import the log with mw import --tokenizer MODEL-FOLDER)\n`,
    });
  });
});
