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

  it("a rollout longer than the folder's max_position_embeddings is scored as far as it reaches; a window restarts RoPE positions at 0", async () => {
    // The Qwen3 folder with 16 positions: the worked example's tape is 17 long, so naive-full cannot reach target 16.
    const folder = writeFamilyFolder(join(TMP, 'qwen3-p16'), 'qwen3', 3);
    const config = JSON.parse(readFileSync(join(folder.dir, 'config.json'), 'utf8'));
    writeFileSync(join(folder.dir, 'config.json'), JSON.stringify({ ...config, max_position_embeddings: 16 }));
    const worked = { ...JSON.parse(readFileSync(WORKED, 'utf8')), vocab: 320, tokenizer: 'hf:qwen3-p16' }; // the folder's own tokenizer
    const events = worked.events as { op: string; tokens?: number[]; logprobs?: number[] }[];
    // Cut where the tape reaches 16 ids (the last act keeps its first token); target 16's window of 4 alone (ids 13, 14, 15, then 16).
    const cut = { ...worked, id: 'cut', events: [...events.slice(0, -1), { op: 'append', role: 'act', tokens: [26], logprobs: [-0.5] }] };
    const alone = {
      ...worked,
      id: 'alone',
      events: [
        { op: 'append', role: 'prompt', tokens: [24, 25, 26] },
        { op: 'append', role: 'act', tokens: [27] },
      ],
    };
    const set = join(TMP, 'qwen3-long.jsonl');
    writeFileSync(set, [worked, cut, alone].map((r) => JSON.stringify(r)).join('\n'));
    const score = async (method: string, extra: string[] = []) => {
      const run = await mw(['score', '--ckpt', folder.dir, set, '--method', method, '--json', ...extra]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      return JSON.parse(run.stdout) as (Scored & { outOfReach?: number[]; windowed?: number[] })[];
    };
    const [full, tree, packed] = await Promise.all([score('naive-full'), score('logit-tree', ['--window', '4']), score('packed-4d', ['--window', '4'])]);
    expect(full[0].outOfReach).toEqual([16]);
    expect(full[0].targets).toEqual(full[1].targets); // bit for bit the cut rollout's
    expect(full[0].targets.map((t) => t.id)).toEqual([2, 3, 7, 8, 13, 14, 15]);
    // Window 4: every target at a live position of 4 or more is scored on its last 3 live-prefix tokens, positions 0 .. 3.
    expect(tree[0].windowed).toEqual([7, 8, 13, 14, 15, 16]);
    tree[0].targets.forEach((t, k) => expect(Math.abs(packed[0].targets[k].logprob - t.logprob), `target ${t.id}`).toBeLessThan(1e-5));
    expect(tree[0].targets.find((t) => t.id === 16)!.logprob).toBe(tree[2].targets[0].logprob);
  });

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
