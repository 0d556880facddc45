// `mw` fuzz: sizes past a JavaScript call's argument limit (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { type Case, TMP, file, fuzzFamily } from './fuzz.testing';

/** Sizes past a JavaScript call's argument limit (~125k): a spread of them would overflow the stack (exit 70). */
function scaleCases(): Case[] {
  const rows = file(
    'rows-150k.jsonl',
    Array.from(
      { length: 150_000 },
      (_, i) =>
        `{"format":"memorywalker.rollout/v1","id":"r${i}","vocab":272,"events":[{"op":"append","role":"prompt","tokens":[1]},{"op":"append","role":"act","tokens":[2]}]}\n`,
    ).join(''),
  );
  const turns = file(
    'turns-150k.jsonl',
    Array.from({ length: 150_000 }, (_, i) => `{"prompt_ids":[1],"response_ids":[2],"trajectory_ids":"t${i}"}\n`).join(''),
  );
  const output = Array.from({ length: 300_000 }, () => 5);
  const survivor = file(
    'survivor.json',
    JSON.stringify({
      format: 'memorywalker.calls/v1',
      id: 'c',
      vocab: 272,
      calls: [
        { input: [1, 2, 3], output },
        { input: [1, 9, ...output], output: [7] },
      ],
    }),
  );
  return [
    { family: 'a table of 150,000 rollouts', args: ['tree', rows], code: 0 },
    { family: 'a turn dump of 150,000 records', args: ['import', turns, '--out', join(TMP, 'turns-150k.out.jsonl')], code: 0 },
    { family: 'a surviving output of 300,000 tokens', args: ['import', survivor, '--out', join(TMP, 'survivor.out.jsonl')], code: 0 },
  ];
}

fuzzFamily("sizes past a call's argument limit", scaleCases);
