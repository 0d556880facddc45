// `mw score --ckpt MODEL-FOLDER` and `mw drift --ckpt MODEL-FOLDER` as a user runs them: the three tiny
// family folders (Qwen3 bf16 tied with q/k norms, Llama f32 untied in two shards with an index, Qwen2 f16
// with q/k/v biases) score a token-level rollout with edits, recorded with the folder's tokenizer, under
// every method; each target matches the family's float64 reference on the method's own plan.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { familyReferenceLogprobs } from '../model/family/reference';
import { buildPlan } from '../plan/build';
import { SEQUENCE_METHODS } from '../plan/types';
import { parseRolloutFile } from '../rollout/parse';
import { writeFamilyFolder, type FamilyFolderKind } from '../testing/familyFolders';
import { deriveTree } from '../tree/derive';
import { mw, tmpDir, WORKED } from './subprocess.testing';

const TMP = tmpDir('score-family');
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** The worked example (token-level, two edits) as recorded with `hf:<kind>`: its ids lie in the folders' vocabulary of 320. */
function rolloutFor(kind: FamilyFolderKind): string {
  const worked = JSON.parse(readFileSync(WORKED, 'utf8'));
  const path = join(TMP, `${kind}-rollout.json`);
  writeFileSync(path, JSON.stringify({ ...worked, id: `${kind}-example`, vocab: 320, tokenizer: `hf:${kind}` }));
  return path;
}

interface Scored {
  method: string;
  targets: { id: number; logprob: number }[];
}

describe('mw score --ckpt MODEL-FOLDER', () => {
  for (const kind of ['qwen3', 'llama', 'qwen2'] as const) {
    it(`${kind}: every method's targets match the family's float64 reference within 2e-4`, async () => {
      const folder = writeFamilyFolder(join(TMP, kind), kind, 3);
      const file = rolloutFor(kind);
      const rollout = parseRolloutFile(readFileSync(file, 'utf8'), file)[0];
      const weights = { config: folder.config, tensors: folder.tensors };
      let worst = 0;
      for (const method of SEQUENCE_METHODS) {
        const run = await mw(['score', '--ckpt', folder.dir, file, '--method', method, '--json']);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const scored: Scored = JSON.parse(run.stdout);
        expect(scored.method).toBe(method);
        const reference = new Map<number, number>();
        for (const sequence of buildPlan(deriveTree(rollout), method).sequences) {
          const values = familyReferenceLogprobs(weights, sequence, sequence.targets);
          sequence.targets.forEach((t, j) => reference.set(t.id, values[j]));
        }
        expect(scored.targets.map((t) => t.id)).toEqual([...reference.keys()].sort((a, b) => a - b));
        for (const t of scored.targets) {
          const diff = Math.abs(t.logprob - reference.get(t.id)!);
          worst = Math.max(worst, diff);
          expect(diff, `${method} target ${t.id}`).toBeLessThan(2e-4);
        }
      }
      console.log(`${kind}: max |mw score − reference| over every method ${worst.toExponential(2)}`);
    });
  }

  it('a rollout of another tokenizer is refused in one line (exit 2); mw drift runs on the folder', async () => {
    const qwen3 = writeFamilyFolder(join(TMP, 'qwen3'), 'qwen3', 3);
    const run = await mw(['score', '--ckpt', qwen3.dir, WORKED, '--method', 'logit-tree', '--json']);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `${WORKED}: rollout "worked-example" is tokenized with byte (vocabulary 272), but the model's vocabulary of 320 is the hf:qwen3 tokenizer's (import the log with mw import --tokenizer MODEL-FOLDER)\n`,
    });
    const drift = await mw(['drift', '--ckpt', qwen3.dir, '--rollouts', rolloutFor('qwen3'), '--json']);
    expect(drift.stderr).toBe('');
    expect(drift.code).toBe(0);
    const report = JSON.parse(drift.stdout);
    // logit-tree scores each target under its live prefix: no drift against itself.
    expect(report.methods['logit-tree'].conditioningDrift).toBeLessThan(1e-5);
  });
});
