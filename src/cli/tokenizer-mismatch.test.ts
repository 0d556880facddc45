// A rollout and a checkpoint of different tokenizers (docs/tokenizers.md) are refused by every
// command that takes both, before any GPU work: exit 2, one line on stderr naming the rollout,
// nothing on stdout.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gpt2Tokenizer } from '../rollout/gpt2';
import { randomWeights } from '../model/random-weights';
import { WORKED, mw, tmpDir, writeCheckpoint } from './subprocess.testing';

const dir = tmpDir('tokenizer-mismatch');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const byteCkpt = writeCheckpoint(join(dir, 'byte.safetensors'), randomWeights({ vocabSize: 272, nEmbd: 8, nLayer: 1, nHead: 2, nPositions: 64 }, 1));
const gpt2Ckpt = writeCheckpoint(join(dir, 'gpt2.safetensors'), randomWeights({ vocabSize: 50257, nEmbd: 8, nLayer: 1, nHead: 2, nPositions: 64 }, 2));

/** A rollout in GPT-2 tokens whose ids all lie below 272 too: only its tokenizer tells it from a byte rollout. */
const gpt2Rollout = join(dir, 'gpt2.json');
const small = [gpt2Tokenizer.encode('!'), gpt2Tokenizer.encode('$')].flat(); // ids 0 and 3
writeFileSync(
  gpt2Rollout,
  JSON.stringify({
    format: 'memorywalker.rollout/v1',
    id: 'g',
    vocab: 50257,
    tokenizer: 'gpt2',
    events: [
      { op: 'append', role: 'prompt', tokens: small },
      { op: 'append', role: 'act', tokens: small },
    ],
  }),
);

const commands = (ckpt: string, rollouts: string) => ({
  score: ['score', '--ckpt', ckpt, rollouts, '--method', 'logit-tree'],
  drift: ['drift', '--ckpt', ckpt, '--rollouts', rollouts],
  verify: ['verify', rollouts, '--ckpt', ckpt],
  train: [
    'train',
    '--method',
    'logit-tree',
    '--objective',
    'sft',
    '--data',
    rollouts,
    '--steps',
    '1',
    '--ckpt-in',
    ckpt,
    '--ckpt-out',
    join(dir, 'out.safetensors'),
    '--metrics',
    join(dir, 'm.jsonl'),
  ],
});

describe('a rollout and a checkpoint of different tokenizers', () => {
  it('a gpt2 rollout under a byte-vocabulary model: exit 2, one line, in every command', async () => {
    for (const [name, argv] of Object.entries(commands(byteCkpt, gpt2Rollout))) {
      const run = await mw(argv);
      expect({ name, ...run }).toEqual({
        name,
        code: 2,
        stdout: '',
        stderr: `${gpt2Rollout}: rollout "g" is tokenized with gpt2 (vocabulary 50257), but the model's vocabulary of 272 is the byte tokenizer's\n`,
      });
    }
  });

  it('a byte rollout under a GPT-2 model: exit 2, one line that says how to import for it', async () => {
    for (const [name, argv] of Object.entries(commands(gpt2Ckpt, WORKED))) {
      const run = await mw(argv);
      expect({ name, ...run }).toEqual({
        name,
        code: 2,
        stdout: '',
        stderr:
          `${WORKED}: rollout "worked-example" is tokenized with byte (vocabulary 272), but the model's vocabulary of 50257 is the gpt2 tokenizer's ` +
          '(import the log with mw import --tokenizer gpt2)\n',
      });
    }
    // mw generate takes no rollouts: its harness speaks bytes, and says so.
    const generate = await mw([
      'generate',
      '--env',
      'lookup',
      '--editor',
      'none',
      '--n',
      '1',
      '--seed',
      '0',
      '--ckpt',
      gpt2Ckpt,
      '--out',
      join(dir, 'g.jsonl'),
    ]);
    expect(generate).toEqual({ code: 2, stdout: '', stderr: `${gpt2Ckpt}: vocabulary 50257: the harness speaks the byte tokenizer (272 tokens)\n` });
  });
});
