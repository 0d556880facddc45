// The calls importer (docs/importers.md): the fixture imports exactly, plus the alignment's edge cases.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deriveTree } from '../../tree/derive';
import { ValidationError } from '../errors';
import { parseRolloutFile } from '../parse';
import { rolloutToJson } from '../serialize';
import { validateRollout } from '../validate';
import { importCalls } from './calls';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/', import.meta.url));
const read = (name: string) => readFileSync(`${FIXTURES}${name}`, 'utf8');

const calls = (list: unknown[], extra: Record<string, unknown> = {}) => ({
  format: 'memorywalker.calls/v1',
  id: 'c',
  vocab: 272,
  ...extra,
  calls: list,
});
const imported = (list: unknown[], extra?: Record<string, unknown>) => importCalls(calls(list, extra), { file: 'c.json' });
const treeOf = (list: unknown[]) => deriveTree(validateRollout(imported(list), { file: 'c.json' }));

describe('memorywalker.calls/v1 importer', () => {
  it('imports calls-example.json to exactly calls-example.expected.json', () => {
    const expected = JSON.parse(read('calls-example.expected.json'));
    expect(importCalls(JSON.parse(read('calls-example.json')), { file: 'calls-example.json' })).toEqual(expected);
    const [rollout] = parseRolloutFile(read('calls-example.json'), 'calls-example.json');
    expect(rolloutToJson(rollout)).toEqual(expected);
  });

  it('makes the surviving output of call 2 a diverging leaf (fixture README)', () => {
    const tree = deriveTree(parseRolloutFile(read('calls-example.json'), 'calls-example.json')[0]);
    expect(Array.from(tree.livePrefix(7))).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(Array.from(tree.finalPrefix(7)!)).toEqual([0, 1, 8, 9]);
    expect(tree.evictionMass[7]).toBe(5);
    expect(Array.from(tree.divergingLeaves)).toEqual([7]);
  });

  it('appends nothing when a call extends the view with no new tokens', () => {
    expect(
      imported([
        { input: [1, 2], output: [3] },
        { input: [1, 2, 3], output: [4] },
      ]).events,
    ).toEqual([
      { op: 'append', role: 'prompt', tokens: [1, 2] },
      { op: 'append', role: 'act', tokens: [3] },
      { op: 'append', role: 'act', tokens: [4] },
    ]);
  });

  it('edits down to the common prefix when the new input is a strict prefix of the old view', () => {
    const list = [
      { input: [1, 2, 3], output: [4] },
      { input: [1, 2], output: [5] },
    ];
    expect(imported(list).events).toEqual([
      { op: 'append', role: 'prompt', tokens: [1, 2, 3] },
      { op: 'append', role: 'act', tokens: [4] },
      { op: 'edit', view: [{ keep: [0, 2] }] },
      { op: 'append', role: 'act', tokens: [5] },
    ]);
    const tree = treeOf(list);
    expect(tree.dropped[3]).toBe(1);
    expect(Array.from(tree.finalWalk)).toEqual([0, 1, 4]);
  });

  it('keeps the earliest occurrence of an earlier output that appears twice; the other copy is new', () => {
    const list = [
      { input: [1], output: [7, 8] },
      { input: [1, 7, 8, 9], output: [5] },
      { input: [1, 6, 7, 8, 2, 7, 8], output: [3] },
    ];
    expect(imported(list).events).toEqual([
      { op: 'append', role: 'prompt', tokens: [1] },
      { op: 'append', role: 'act', tokens: [7, 8] },
      { op: 'append', role: 'obs', tokens: [9] },
      { op: 'append', role: 'act', tokens: [5] },
      {
        op: 'edit',
        view: [{ keep: [0, 1] }, { insert: { role: 'summary', tokens: [6] } }, { keep: [1, 3] }, { insert: { role: 'summary', tokens: [2, 7, 8] } }],
      },
      { op: 'append', role: 'act', tokens: [3] },
    ]);
    const tree = treeOf(list);
    // ids 1, 2 (the kept output) survive with a summary now before them: diverging, mass 0
    expect(Array.from(tree.finalWalk)).toEqual([0, 5, 1, 2, 6, 7, 8, 9]);
    expect(Array.from(tree.divergingLeaves)).toEqual([1, 2]);
    expect([tree.evictionMass[1], tree.evictionMass[2]]).toEqual([0, 0]);
    expect(tree.dropped[4]).toBe(1);
  });

  it('never keeps an output split by the common prefix, even when its tail reappears', () => {
    const list = [
      { input: [1], output: [2, 3] },
      { input: [1, 2, 9, 3], output: [4] },
    ];
    expect(imported(list).events).toEqual([
      { op: 'append', role: 'prompt', tokens: [1] },
      { op: 'append', role: 'act', tokens: [2, 3] },
      { op: 'edit', view: [{ keep: [0, 2] }, { insert: { role: 'summary', tokens: [9, 3] } }] },
      { op: 'append', role: 'act', tokens: [4] },
    ]);
    const tree = treeOf(list);
    expect(tree.dropped[2]).toBe(1);
    expect(Array.from(tree.finalPrefix(1)!)).toEqual([0]);
  });

  it('never keeps an output that an earlier edit cut in part, though its surviving part reappears verbatim', () => {
    // Call 2's edit keeps only token 20 of call 1's output [20, 21]; call 3 shows that 20 again,
    // after a changed prefix: it is not matched (inserted as summary), while call 2's whole output 22 is.
    const list = [
      { input: [10, 11, 12], output: [20, 21] },
      { input: [10, 11, 12, 20, 99], output: [22] },
      { input: [10, 11, 20, 22, 30], output: [23] },
    ];
    expect(imported(list).events).toEqual([
      { op: 'append', role: 'prompt', tokens: [10, 11, 12] },
      { op: 'append', role: 'act', tokens: [20, 21] },
      { op: 'edit', view: [{ keep: [0, 4] }, { insert: { role: 'summary', tokens: [99] } }] },
      { op: 'append', role: 'act', tokens: [22] },
      {
        op: 'edit',
        view: [{ keep: [0, 2] }, { insert: { role: 'summary', tokens: [20] } }, { keep: [6, 7] }, { insert: { role: 'summary', tokens: [30] } }],
      },
      { op: 'append', role: 'act', tokens: [23] },
    ]);
    const tree = treeOf(list);
    expect(Array.from(tree.finalWalk)).toEqual([0, 1, 7, 6, 8, 9]);
    expect(tree.dropped[3]).toBe(1); // the partial survivor's target 20 is not in the final walk
    expect(Array.from(tree.divergingLeaves)).toEqual([6]);
  });

  it('encodes text calls with the tokenizer, without role markers, and passes header fields through', () => {
    const out = imported([{ input: 'ab', output: 'c', logprobs: [-1] }], { tokenizer: 'byte', reward: 1, meta: { k: 1 } });
    expect(out).toEqual({
      format: 'memorywalker.rollout/v1',
      id: 'c',
      vocab: 272,
      tokenizer: 'byte',
      reward: 1,
      meta: { k: 1 },
      events: [
        { op: 'append', role: 'prompt', tokens: [97, 98] },
        { op: 'append', role: 'act', tokens: [99], logprobs: [-1] },
      ],
    });
  });

  it('rejects malformed calls with the call named', () => {
    const bad = (list: unknown[]) => {
      try {
        imported(list);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).message;
      }
      throw new Error('expected a ValidationError');
    };
    expect(bad([{ input: [1], output: [2], logprobs: [-1, -1] }])).toBe('c.json: calls[0].logprobs must have one number per output token (1)');
    expect(bad([{ input: [], output: [2] }])).toBe('c.json: calls[0]: the output has no token before it (empty input)');
    expect(bad([{ input: [1], output: [300] }])).toBe('c.json: calls[0].output[0] = 300 is not a token id in [0, 272)');
    expect(bad([{ input: [1], output: [2], tools: [] }])).toBe('c.json: unknown field "tools" in calls[0]');
  });
});
