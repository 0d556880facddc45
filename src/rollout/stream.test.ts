// Reading one rollout at a time (stream.ts) gives what reading the whole text (parse.ts) gives:
// the same rollouts in the same order and layout for every format, and the same error message
// for every bad file of the fuzzer.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors';
import { createRng, generateRandomRollout } from './generate-random';
import { chunkedSource, fixturePath } from './importers/testing';
import { readRolloutFile } from './parse';
import { stringifyRollout } from './serialize';
import { openRolloutStream } from './stream';

const WORKED = readFileSync(new URL('../../fixtures/worked-example.json', import.meta.url), 'utf8');
const CALLS = readFileSync(new URL('../../fixtures/calls-example.json', import.meta.url), 'utf8');

async function streamed(text: string, file: string): Promise<{ layout: string; rollouts: string[] } | { error: string }> {
  try {
    const stream = await openRolloutStream(chunkedSource(text, 7919), file);
    const rollouts: string[] = [];
    for await (const r of stream.rollouts()) rollouts.push(stringifyRollout(r));
    return { layout: stream.layout, rollouts };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { error: error.message };
  }
}

function whole(text: string, file: string): { layout: string; rollouts: string[] } | { error: string } {
  try {
    const { layout, rollouts } = readRolloutFile(text, file);
    return { layout, rollouts: rollouts.map((r) => stringifyRollout(r)) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { error: error.message };
  }
}

describe('openRolloutStream', () => {
  it('reads every format as parse.ts does', async () => {
    const random = [1, 2, 3].map((seed) => JSON.stringify(generateRandomRollout({ seed, size: 'small', id: `r${seed}` })));
    const files: [string, string][] = [
      [WORKED, 'worked.json'],
      [JSON.stringify(JSON.parse(WORKED)), 'worked.json'],
      [CALLS, 'calls.json'],
      [`${random.join('\n')}\n`, 'set.jsonl'],
      [`${random.join('\r\n')}\r\n\r\n`, 'set.json'],
      [`\n\n${random[0]}\n\n${random[1]}`, 'gaps.jsonl'],
      [random[0], 'one.jsonl'],
      [`${random[0]}\n`, 'one.json'],
      [readFileSync(fixturePath('chat.jsonl'), 'utf8'), 'chat.jsonl'],
      ...['agent-session-two-compactions.jsonl', 'agent-session-stream.jsonl', 'agent-session-preserved-segment.jsonl'].map((f): [string, string] => [
        readFileSync(fixturePath(f), 'utf8'),
        f,
      ]),
    ];
    for (const [text, file] of files) {
      const want = whole(text, file);
      expect('rollouts' in want, file).toBe(true);
      expect(await streamed(text, file), file).toEqual(want);
      expect(await streamed(`\ufeff${text}`, file), `${file} with a BOM`).toEqual(want);
    }
  });

  it('refuses bad files with the same message', async () => {
    const rng = createRng(5);
    const good = [1, 2, 3].map((seed) => JSON.stringify(generateRandomRollout({ seed, size: 'small', id: `r${seed}` })));
    const bad: [string, string][] = [
      ['', 'empty.jsonl'],
      ['\n \n', 'blank.json'],
      ['{', 'cut.json'],
      [`${good[0]}\n{"format": 1}\n`, 'format.jsonl'],
      [`${good[0]}\n${good[0]}\n`, 'dup.jsonl'],
      [`${good[0]}\n[1]\n`, 'array.json'],
      [`${good[0]}\nnot json\n`, 'line2.json'],
      [`{"messages": 3}\n`, 'chat.jsonl'],
      [`${good[1].slice(0, rng.int(10, good[1].length - 10))}\n${good[2]}`, 'cut.jsonl'],
    ];
    for (const [text, file] of bad) {
      const want = whole(text, file);
      expect('error' in want, file).toBe(true);
      expect(await streamed(text, file), file).toEqual(want);
    }
  });
});
