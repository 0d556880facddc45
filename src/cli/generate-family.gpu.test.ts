// `mw generate --ckpt MODEL-FOLDER` as a user runs it: the family decoder (KV cache, attention-decode-gqa)
// writes the actions, the harness frames its turns with the folder's chat template in its tokenizer's ids,
// and greedy decoding picks, token by token, the argmax of the family's float64 forward on the view so far;
// the recorded logprobs are that forward's log-softmax (Qwen3 bf16 tied; Llama f32 untied, two shards).

import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventJson, RolloutJson } from '../rollout/format';
import { familyLogits } from '../model/family/reference';
import { createEnv } from '../harness/env';
import { writeFamilyFolder } from '../testing/familyFolders';
import { mw, tmpDir } from './subprocess.testing';

const TMP = tmpDir('generate-family');
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

describe('mw generate --ckpt MODEL-FOLDER', () => {
  for (const kind of ['qwen3', 'llama'] as const) {
    it(`${kind}: greedy tokens are the float64 reference's argmax step by step; "tokenizer": "hf:${kind}"`, async () => {
      const folder = writeFamilyFolder(join(TMP, kind), kind, 4);
      const out = join(TMP, `${kind}.jsonl`);
      const run = await mw([
        'generate',
        '--ckpt',
        folder.dir,
        '--env',
        'lookup',
        '--editor',
        'none',
        '--n',
        '1',
        '--seed',
        '3',
        '--temperature',
        '0',
        '--out',
        out,
      ]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`, hf:${kind}\n`);
      const rollout: RolloutJson = JSON.parse(readFileSync(out, 'utf8'));
      expect([rollout.tokenizer, rollout.vocab]).toEqual([`hf:${kind}`, 320]);

      // The prompt is the environment's task as a user turn of the template, then its assistant header.
      const appends = rollout.events.filter((e): e is Extract<EventJson, { op: 'append' }> => e.op === 'append');
      expect(appends.length).toBe(rollout.events.length); // editor none: no edits
      const tape = appends.flatMap((e) => e.tokens!);
      const [prompt] = appends;
      const task = createEnv('lookup').reset((rollout.meta as { seed: number }).seed).prompt;
      const bos = kind === 'llama' ? { bos_token: '<|begin_of_text|>' } : {};
      const rendered = new Template(folder.chatTemplate).render({ messages: [{ role: 'user', content: task }], add_generation_prompt: true, ...bos });
      const library = new LibraryTokenizer(JSON.parse(readFileSync(join(folder.dir, 'tokenizer.json'), 'utf8')), {});
      expect(prompt.tokens).toEqual(library.encode(rendered, { add_special_tokens: false }).ids);

      // One causal forward over the tape: row p − 1 predicts the token at p.
      const logits = familyLogits(
        { config: folder.config, tensors: folder.tensors },
        { tokens: tape, positions: tape.map((_, i) => i), end: tape.map(() => tape.length) },
      );
      const V = folder.config.vocabSize;
      let at = 0;
      let steps = 0;
      let worst = 0;
      for (const e of appends) {
        if (e.role === 'act') {
          e.tokens!.forEach((token, j) => {
            const row = logits.subarray((at + j - 1) * V, (at + j) * V);
            let best = 0;
            for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
            expect(token, `step ${steps}`).toBe(best);
            const lse = Math.log(row.reduce((s, x) => s + Math.exp(x - row[best]), 0)) + row[best];
            worst = Math.max(worst, Math.abs(e.logprobs![j] - (row[token] - lse)));
            steps++;
          });
        }
        at += e.tokens!.length;
      }
      expect(steps).toBeGreaterThanOrEqual(20);
      expect(worst).toBeLessThan(2e-4);
      console.log(`${kind}: ${steps} greedy steps equal the reference's argmax; recorded logprobs within ${worst.toExponential(2)}`);
    });
  }

  it('refusals before any GPU work: --config with a folder (exit 1), a folder without tokenizer.json (exit 2)', async () => {
    const folder = writeFamilyFolder(join(TMP, 'qwen2'), 'qwen2', 1);
    const base = ['generate', '--ckpt', folder.dir, '--env', 'lookup', '--editor', 'none', '--n', '1', '--seed', '1', '--out', join(TMP, 'x.jsonl')];
    const config = await mw([...base, '--config', 'tiny']);
    expect(config).toMatchObject({ code: 1, stdout: '' });
    expect(config.stderr).toMatch(/^mw generate: --config does not go with --ckpt/);
    rmSync(join(folder.dir, 'tokenizer.json'));
    expect(await mw(base)).toEqual({
      code: 2,
      stdout: '',
      stderr: `${folder.dir}: no tokenizer.json: the harness writes its turns in the model's own tokenizer\n`,
    });
  });
});
