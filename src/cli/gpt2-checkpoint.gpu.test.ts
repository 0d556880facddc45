// A GPT-2 checkpoint as Hugging Face publishes it, vocabulary 50257 (random weights, nothing
// downloaded): no __metadata__ config, names without `transformer.`, the attn.bias buffers, the head
// tied (left out, or stored as lm_head) and an F16 variant. `mw score` loads each and scores every
// method on a gpt2-tokenized rollout with a compaction, matching the float64 CPU reference.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../model/checkpoint';
import { referenceLogprobs } from '../model/reference/model';
import { buildPlan } from '../plan/build';
import type { EventJson, RolloutJson } from '../rollout/format';
import { GPT2_VOCAB, gpt2Tokenizer } from '../rollout/gpt2';
import { createTextRolloutBuilder } from '../rollout/importers/textRollout';
import { loadTokenizer } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import { publishedGpt2Checkpoint, type PublishedLayout } from '../testing/publishedGpt2';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import { SEQUENCE_METHODS } from '../plan/types';
import { mw, tmpDir } from './subprocess.testing';

// The registry loads gpt2's ranks on first use (a dynamic import); validating and labelling gpt2 text needs them.
await loadTokenizer('gpt2');

const TMP = tmpDir('gpt2-checkpoint');
/** C = 64: one head of GPT-2's size 64, which is what a file without config metadata implies. */
const config = { vocabSize: GPT2_VOCAB, nEmbd: 64, nLayer: 2, nHead: 1, nPositions: 128 };
const weights = randomWeights(config, 17);

/** A short agent transcript in GPT-2 tokens: a search, a compaction that keeps the answer, one more turn. */
function transcript(): RolloutJson {
  const events: EventJson[] = [];
  const b = createTextRolloutBuilder<null>((e) => events.push(e), gpt2Tokenizer);
  const prompt = b.append('prompt', 'What is the capital of France?', null);
  b.append('act', 'Let me search for it.', null);
  b.append('obs', 'Paris is the capital and largest city of France.', null);
  const answer = b.append('act', 'The capital of France is Paris.', null);
  b.edit([{ keep: prompt }, { insert: { role: 'summary', text: 'The assistant searched the web.' }, tag: null }, { keep: answer }]);
  b.append('prompt', 'And of Italy?', null);
  b.append('act', 'Rome.', null);
  return { format: 'memorywalker.rollout/v1', id: 'gpt2-transcript', vocab: GPT2_VOCAB, tokenizer: 'gpt2', events };
}

const ROLLOUT = join(TMP, 'transcript.json');
writeFileSync(ROLLOUT, JSON.stringify(transcript()));
const rollout = validateRollout(transcript(), { file: ROLLOUT });
const tree = deriveTree(rollout);

const LAYOUTS: Record<string, PublishedLayout> = {
  'gpt2 (F32, no prefix, head left out)': {},
  'F16, transformer. prefix, tied lm_head, masked_bias': { dtype: 'F16', prefix: true, lmHead: true, maskedBias: true },
};

describe('a published-layout GPT-2 checkpoint (vocabulary 50257)', () => {
  it('the rollout has what the methods tell apart: a compaction, dropped and diverging targets', () => {
    expect(tree.figures).toMatchObject({ K: 1, divergingLeaves: 7 }); // the kept answer's 7 tokens
    expect(tree.figures.droppedTargets).toBeGreaterThan(0);
  });

  it("mw score's table shows each target as its GPT-2 word piece", async () => {
    const path = join(TMP, 'table.safetensors');
    writeFileSync(path, publishedGpt2Checkpoint(weights));
    const run = await mw(['score', '--ckpt', path, ROLLOUT, '--method', 'naive-compressed']);
    expect(run.code, run.stderr).toBe(0);
    const tokens = run.stdout
      .trim()
      .split('\n')
      .slice(2)
      .map((line) => /^\s*\d+\s+('.*'|\S+)\s+-?\d/.exec(line)![1]);
    // The kept answer, then "Rome." after the compaction.
    expect(tokens).toEqual(["'The'", "' capital'", "' of'", "' France'", "' is'", "' Paris'", "'.'", "'R'", "'ome'", "'.'"]);
  });

  for (const [name, layout] of Object.entries(LAYOUTS)) {
    it(`${name}: mw score matches the float64 reference within 2e-4 under every method`, async () => {
      const bytes = publishedGpt2Checkpoint(weights, layout);
      const path = join(TMP, `${layout.dtype ?? 'F32'}.safetensors`);
      writeFileSync(path, bytes);
      // The reference runs on the weights as the file holds them (F16: rounded to half precision).
      const loaded = loadCheckpoint(bytes);
      expect(loaded.config).toEqual(config);
      for (const method of SEQUENCE_METHODS) {
        const run = await mw(['score', '--ckpt', path, ROLLOUT, '--method', method, '--json']);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const scored = new Map((JSON.parse(run.stdout) as { targets: { id: number; logprob: number }[] }).targets.map((t) => [t.id, t.logprob]));
        const want = new Map<number, number>();
        for (const seq of buildPlan(tree, method).sequences) {
          const lp = referenceLogprobs(loaded, seq, seq.targets);
          seq.targets.forEach((t, j) => want.set(t.id, lp[j]));
        }
        expect(
          [...scored.keys()].sort((a, b) => a - b),
          method,
        ).toEqual([...want.keys()].sort((a, b) => a - b));
        let worst = 0;
        for (const [id, w] of want) worst = Math.max(worst, Math.abs(scored.get(id)! - w));
        expect(worst, `${method}: max |GPU − float64|`).toBeLessThanOrEqual(2e-4);
      }
    });
  }
});
