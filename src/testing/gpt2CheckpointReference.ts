// The scene of src/cli/gpt2-checkpoint.gpu.test.ts and its float64 reference, computed once and committed
// (src/cli/fixtures/gpt2-checkpoint.reference.json): the reference forward of every method's sequences
// with 50257-wide logits rows was about 45 % of that file's time. The test rebuilds each layout's bytes
// and the rollout (cheap) and checks their fingerprints against the file's, so a change to either fails
// with the command that regenerates it: node --import ./scripts/register.mjs scripts/gpt2-checkpoint-reference.mjs

import { createHash } from 'node:crypto';
import { loadCheckpoint } from '../model/checkpoint';
import { randomWeights } from '../model/random-weights';
import { referenceLogprobs } from '../model/reference/model';
import { buildPlan } from '../plan/build';
import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { EventJson, RolloutJson } from '../rollout/format';
import { GPT2_VOCAB, gpt2Tokenizer } from '../rollout/gpt2';
import { createTextRolloutBuilder } from '../rollout/importers/textRollout';
import type { ConditioningTree } from '../tree';
import { publishedGpt2Checkpoint, type PublishedLayout } from './publishedGpt2';

export const REGENERATE_GPT2_CHECKPOINT = 'node --import ./scripts/register.mjs scripts/gpt2-checkpoint-reference.mjs';

/** C = 64: one head of GPT-2's size 64, which is what a file without config metadata implies. */
export const GPT2_CHECKPOINT_CONFIG = { vocabSize: GPT2_VOCAB, nEmbd: 64, nLayer: 2, nHead: 1, nPositions: 128 };
export const gpt2CheckpointWeights = () => randomWeights(GPT2_CHECKPOINT_CONFIG, 17);

export const GPT2_LAYOUTS: Record<string, PublishedLayout> = {
  'gpt2 (F32, no prefix, head left out)': {},
  'F16, transformer. prefix, tied lm_head, masked_bias': { dtype: 'F16', prefix: true, lmHead: true, maskedBias: true },
};

/** A short agent transcript in GPT-2 tokens: a search, a compaction that keeps the answer, one more turn. */
export function gpt2Transcript(): RolloutJson {
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

/** The committed file: per layout, its bytes' sha256 and per method [target id, float64 log-probability]. */
export interface Gpt2CheckpointReference {
  regenerate: string;
  /** sha256 of the transcript's JSON. */
  rollout: string;
  layouts: Record<string, { checkpoint: string; logprobs: Record<SequenceMethod, [number, number][]> }>;
}

export const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** Every method's targets scored by the float64 reference on the weights as `bytes` holds them (F16: rounded to half). */
export function gpt2CheckpointLogprobs(bytes: Uint8Array, tree: ConditioningTree): Record<SequenceMethod, [number, number][]> {
  const loaded = loadCheckpoint(bytes);
  const out = {} as Record<SequenceMethod, [number, number][]>;
  for (const method of SEQUENCE_METHODS) {
    const rows: [number, number][] = [];
    for (const seq of buildPlan(tree, method).sequences) {
      const lp = referenceLogprobs(loaded, seq, seq.targets);
      seq.targets.forEach((t, j) => rows.push([t.id, lp[j]]));
    }
    out[method] = rows.sort((a, b) => a[0] - b[0]);
  }
  return out;
}

export function computeGpt2CheckpointReference(tree: ConditioningTree): Gpt2CheckpointReference {
  const weights = gpt2CheckpointWeights();
  const layouts: Gpt2CheckpointReference['layouts'] = {};
  for (const [name, layout] of Object.entries(GPT2_LAYOUTS)) {
    const bytes = publishedGpt2Checkpoint(weights, layout);
    layouts[name] = { checkpoint: sha256(bytes), logprobs: gpt2CheckpointLogprobs(bytes, tree) };
  }
  return { regenerate: REGENERATE_GPT2_CHECKPOINT, rollout: sha256(JSON.stringify(gpt2Transcript())), layouts };
}
