// gpt2's ranks load on first use (src/rollout/tokenizer.ts `loadTokenizer`): before, a gpt2 rollout's
// text cannot be read and says why; reading a file (loadRolloutFile, the streams) loads what its
// records name, and an import loads the tokenizer it is asked for. Each test that loads imports the
// modules afresh (vi.resetModules), so nothing has loaded gpt2 before it.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { readFixture } from './importers/testing';
import { textSource } from './importers/lines';

beforeEach(() => {
  vi.resetModules();
});

/** A fresh registry and the readers above it. */
async function fresh() {
  const [tokenizer, parse, stream] = await Promise.all([import('./tokenizer'), import('./parse'), import('./stream')]);
  expect(() => tokenizer.getTokenizer('gpt2')).toThrow('not loaded yet');
  return { ...tokenizer, ...parse, ...stream };
}

const gpt2Text = JSON.stringify({
  format: 'memorywalker.rollout/v1',
  id: 'g',
  vocab: 50257,
  tokenizer: 'gpt2',
  events: [
    { op: 'append', role: 'prompt', text: 'Hello' },
    { op: 'append', role: 'act', text: ' world' },
  ],
});

describe('the tokenizer registry', () => {
  it('knows gpt2 before loading it, and refuses to use it unloaded', async () => {
    const { isKnownTokenizer, getTokenizer, readRolloutFile } = await fresh();
    expect(isKnownTokenizer('gpt2')).toBe(true);
    expect(isKnownTokenizer('llama')).toBe(false);
    expect(getTokenizer('byte')?.vocab).toBe(272);
    expect(getTokenizer('llama')).toBeUndefined();
    expect(() => getTokenizer('gpt2')).toThrow('the gpt2 tokenizer is not loaded yet');
    expect(() => readRolloutFile(gpt2Text, 'g.json')).toThrow('the gpt2 tokenizer is not loaded yet');
  });

  it('says which tokenizer a vocabulary reads, from the names alone', async () => {
    const { tokenizerMismatch } = await fresh();
    expect(tokenizerMismatch('gpt2', 50257)).toBeNull();
    expect(tokenizerMismatch('byte', 272)).toBeNull();
    expect(tokenizerMismatch('custom', 50257)).toBeNull();
    expect(tokenizerMismatch('byte', 50257)).toEqual({
      rollout: 'byte',
      model: 'gpt2',
      reason: "is tokenized with byte (vocabulary 272), but the model's vocabulary of 50257 is the gpt2 tokenizer's",
    });
  });

  it('reading a file loads the tokenizer its records name', async () => {
    const { loadRolloutFile, loadTokenizer, getTokenizer } = await fresh();
    const { rollouts } = await loadRolloutFile(gpt2Text, 'g.json');
    expect(Array.from(rollouts[0].tokens.subarray(6))).toEqual([198, 198, 48902, 25, 198, 995]); // "\n\nAssistant:\n", " world"
    expect(await loadTokenizer('gpt2')).toBe(getTokenizer('gpt2'));
    expect(await loadTokenizer('llama')).toBeUndefined();
  });

  it('an import loads the tokenizer it is asked for', async () => {
    const { loadRolloutFile } = await fresh();
    const chat = await loadRolloutFile(readFixture('chat.jsonl'), 'chat.jsonl', { tokenizer: 'gpt2' });
    expect(chat.rollouts.map((r) => [r.tokenizer, r.vocab])).toEqual([
      ['gpt2', 50257],
      ['gpt2', 50257],
      ['gpt2', 50257],
    ]);
  });

  it('a stream of JSON lines loads what each line names', async () => {
    const { openRolloutStream } = await fresh();
    const stream = await openRolloutStream(textSource(`${gpt2Text}\n`), 'g.jsonl');
    const read = [];
    for await (const r of stream.rollouts()) read.push(r.length);
    expect(read).toEqual([12]);
  });
});
