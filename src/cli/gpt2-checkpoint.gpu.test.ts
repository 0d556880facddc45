// A GPT-2 checkpoint as Hugging Face publishes it, vocabulary 50257 (random weights, nothing
// downloaded): no __metadata__ config, names without `transformer.`, the attn.bias buffers, the head
// tied (left out, or stored as lm_head) and an F16 variant. `mw score` loads each and scores every
// method on a gpt2-tokenized rollout with a compaction, matching the float64 CPU reference (committed:
// fixtures/gpt2-checkpoint.reference.json, src/testing/gpt2CheckpointReference.ts).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../model/checkpoint';
import { buildPlan } from '../plan/build';
import { loadTokenizer } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import {
  GPT2_CHECKPOINT_CONFIG as config,
  GPT2_LAYOUTS as LAYOUTS,
  type Gpt2CheckpointReference,
  gpt2CheckpointWeights,
  gpt2Transcript as transcript,
  sha256,
} from '../testing/gpt2CheckpointReference';
import { publishedGpt2Checkpoint } from '../testing/publishedGpt2';
import { deriveTree } from '../tree/derive';
import { SEQUENCE_METHODS } from '../plan/types';
import { mw, tmpDir } from './subprocess.testing';

// The registry loads gpt2's ranks on first use (a dynamic import); validating and labelling gpt2 text needs them.
await loadTokenizer('gpt2');

const TMP = tmpDir('gpt2-checkpoint');
const weights = gpt2CheckpointWeights();

const ROLLOUT = join(TMP, 'transcript.json');
writeFileSync(ROLLOUT, JSON.stringify(transcript()));
const rollout = validateRollout(transcript(), { file: ROLLOUT });
const tree = deriveTree(rollout);
/** The float64 reference of each layout and method, computed once (scripts/gpt2-checkpoint-reference.mjs) from the same bytes. */
const REFERENCE = JSON.parse(readFileSync(new URL('./fixtures/gpt2-checkpoint.reference.json', import.meta.url), 'utf8')) as Gpt2CheckpointReference;

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
      // The reference ran on the weights as the file holds them (F16: rounded to half precision): these bytes, this transcript.
      const loaded = loadCheckpoint(bytes);
      expect(loaded.config).toEqual(config);
      const committed = REFERENCE.layouts[name];
      const regenerate = `the checkpoint or the transcript changed: regenerate the reference (${REFERENCE.regenerate})`;
      expect([sha256(bytes), sha256(JSON.stringify(transcript()))], regenerate).toEqual([committed.checkpoint, REFERENCE.rollout]);
      for (const method of SEQUENCE_METHODS) {
        const run = await mw(['score', '--ckpt', path, ROLLOUT, '--method', method, '--json']);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        const scored = new Map((JSON.parse(run.stdout) as { targets: { id: number; logprob: number }[] }).targets.map((t) => [t.id, t.logprob]));
        const want = new Map(committed.logprobs[method]);
        // The committed reference names the targets the plan scores.
        expect([...want.keys()], method).toEqual(
          buildPlan(tree, method)
            .sequences.flatMap((q) => q.targets.map((t) => t.id))
            .sort((a, b) => a - b),
        );
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
