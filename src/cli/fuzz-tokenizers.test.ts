// `mw` fuzz, `mw import --tokenizer` and `--from` (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { WORKED } from './subprocess.testing';
import { type Case, TMP, file, fuzzFamily } from './fuzz.testing';

function tokenizerCases(): Case[] {
  const calls = (vocab: number, output: number[]) => JSON.stringify({ format: 'memorywalker.calls/v1', id: 'c', vocab, calls: [{ input: [1, 2], output }] });
  return [
    {
      family: 'import --tokenizer bogus',
      args: ['import', WORKED, '--tokenizer', 'bogus', '--out', join(TMP, 't.jsonl')],
      code: 1,
      line: /^mw import: unknown tokenizer "bogus" \(byte, gpt2, or a model folder with a tokenizer\.json\)/,
    },
    {
      family: 'import --tokenizer byte of a turn dump with ids past 272',
      args: ['import', file('turns-gpt2.jsonl', '{"prompt_ids":[15496,995],"response_ids":[50256]}\n'), '--tokenizer', 'byte', '--out', join(TMP, 't.jsonl')],
      code: 2,
      line: /turns-gpt2\.jsonl:1: token id 50256 is outside the vocabulary of 272$/,
    },
    {
      family: 'import --tokenizer gpt2: an id past GPT-2',
      args: ['import', file('calls-gpt2.json', calls(50257, [60000])), '--tokenizer', 'gpt2', '--out', join(TMP, 't.jsonl')],
      code: 2,
      line: /calls-gpt2\.json: calls\[0\]\.output\[0\] = 60000 is not a token id in \[0, 50257\)$/,
    },
    {
      family: 'import --tokenizer gpt2: a chat log with a BOM',
      args: [
        'import',
        file('chat-bom.jsonl', '\ufeff{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}\n'),
        '--tokenizer',
        'gpt2',
        '--out',
        join(TMP, 'chat-bom.out.jsonl'),
      ],
      code: 0,
    },
    {
      family: 'import --from bogus',
      args: ['import', WORKED, '--from', 'bogus', '--out', join(TMP, 't.jsonl')],
      code: 1,
      line: /^mw import: unknown format "bogus"/,
    },
  ];
}

fuzzFamily('tokenizers', tokenizerCases, (f) => f === 't.jsonl');
