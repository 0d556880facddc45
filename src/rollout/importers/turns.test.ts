// The turns importer (docs/importers.md): dumps in TRL/slime, SkyRL and verl field names import to the
// same tree as the equivalent calls log; a turn whose prompt drops an earlier turn is an edit with
// diverging leaves; bad records are one-line errors naming their line.

import { describe, expect, it } from 'vitest';
import { deriveTree } from '../../tree/derive';
import { parseRolloutFile } from '../parse';
import { rolloutToJson } from '../serialize';
import { validateRollout } from '../validate';
import { importCalls } from './calls';
import { importTurnsText, turnsImporter } from './turns';

const jsonl = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** calls-example.json's three calls (call 3's input drops the first output and keeps the second) and an append-only trajectory. */
const EDITED = [
  { input: [10, 11, 12], output: [20, 21], logprobs: [-1.0, -0.5] },
  { input: [10, 11, 12, 20, 21, 30, 31], output: [22], logprobs: [-0.25] },
  { input: [10, 11, 40, 41, 22, 32], output: [23, 24], logprobs: [-2.0, -0.125] },
];
const APPENDED = [
  { input: [1, 2, 3], output: [4, 5], logprobs: [-0.5, -1.5] },
  { input: [1, 2, 3, 4, 5, 6, 7], output: [8], logprobs: [-3.0] },
];
/** The largest token id is 41: the vocabulary from the data is 42. */
const VOCAB = 42;

/** What the calls importer makes of a trajectory's calls: the reference for every convention. */
function reference(id: string, calls: typeof EDITED) {
  const rollout = validateRollout(importCalls({ format: 'memorywalker.calls/v1', id, vocab: VOCAB, calls }, { file: 'calls.json' }), { file: 'calls.json' });
  return { events: rolloutToJson(rollout).events, figures: deriveTree(rollout).figures };
}

function imported(text: string, file = 'dump.jsonl') {
  return importTurnsText(text, file).rollouts.map(({ value, line }) => {
    const rollout = validateRollout(value, { file, line });
    return { rollout, events: rolloutToJson(rollout).events, figures: deriveTree(rollout).figures };
  });
}

describe('turns importer: the three field conventions', () => {
  it("TRL/slime turn records (prompt_ids, output_ids, output_log_probs), one trajectory per file: the calls log's tree", () => {
    const text = jsonl(
      EDITED.map((c) => ({
        prompt_ids: c.input,
        output_ids: c.output,
        output_log_probs: c.logprobs,
        prompt: 'text of the prompt',
        output: 'text of the output',
      })),
    );
    const [only, ...rest] = imported(text);
    expect(rest).toHaveLength(0);
    const want = reference('turns-1', EDITED);
    expect(only.events).toEqual(want.events);
    expect(only.figures).toEqual(want.figures);
    expect(only.figures).toMatchObject({ K: 1, divergingLeaves: 1 });
    expect(only.rollout.vocab).toBe(VOCAB);
    expect(only.rollout.meta).toMatchObject({
      import: { format: 'turns', convention: 'trl/slime', records: 3 },
      turns: [{ line: 1, prompt: 'text of the prompt', output: 'text of the output' }, { line: 2 }, { line: 3 }],
    });
  });

  it('SkyRL step-wise outputs (response_ids with the observation after the output, loss_mask, zero-padded rollout_logprobs, trajectory_ids, is_last_step), interleaved and out of order', () => {
    // Step i's response is its output, then the observation the env appended (loss_mask 0, logprob 0).
    const steps = (instance: string, calls: typeof EDITED, tails: number[][]) =>
      calls.map((c, i) => ({
        prompt_ids: c.input,
        response_ids: [...c.output, ...tails[i]],
        loss_mask: [...c.output.map(() => 1), ...tails[i].map(() => 0)],
        rollout_logprobs: [...c.logprobs, ...tails[i].map(() => 0)],
        rewards: [...c.output.map(() => 0), ...tails[i].map(() => 0)].map((r, j, all) => (i === calls.length - 1 && j === all.length - 1 ? 1 : r)),
        trajectory_ids: { instance_id: instance, repetition_id: 0, step: i },
        is_last_step: i === calls.length - 1,
        stop_reason: 'stop',
      }));
    const a = steps('q7', EDITED, [[30, 31], [33], []]); // step 2's observation 33 is what step 3's prompt drops
    const b = steps('q8', APPENDED, [[6, 7], []]);
    // Rollouts come in the order their trajectories end in the file: q8 (line 4), then q7 (line 5).
    const [second, first] = imported(jsonl([a[2], b[0], a[0], b[1], a[1]]));
    expect(first.rollout.id).toBe('q7_0');
    expect(first.rollout.group).toBe('q7');
    expect(first.rollout.reward).toBe(1);
    expect(first.events).toEqual(reference('q7_0', EDITED).events);
    expect(first.figures).toEqual(reference('q7_0', EDITED).figures);
    expect(second.rollout.id).toBe('q8_0');
    expect(second.events).toEqual(reference('q8_0', APPENDED).events);
    expect(first.rollout.meta).toMatchObject({ import: { convention: 'skyrl', records: 3, lines: '3,5,1' } });
  });

  it('verl agent-loop outputs (prompt_ids, response_ids, response_mask, response_logprobs): per turn, and a whole append-only trajectory in one record', () => {
    const perTurn = EDITED.map((c, i) => ({
      prompt_ids: c.input,
      response_ids: c.output,
      response_mask: c.output.map(() => 1),
      response_logprobs: c.logprobs,
      num_turns: 2 * i + 2,
      extra_fields: { trajectory_id: 'edited', turn: i },
    }));
    // One AgentLoopOutput of the append-only trajectory: response = output 1, tool result, output 2 (mask 1, 0, 1).
    const whole = {
      prompt_ids: [1, 2, 3],
      response_ids: [4, 5, 6, 7, 8],
      response_mask: [1, 1, 0, 0, 1],
      response_logprobs: [-0.5, -1.5, 0, 0, -3.0],
      reward_score: 0.5,
      extra_fields: { trajectory_id: 'appended' },
    };
    const [edited, appended] = imported(jsonl([...perTurn, whole]));
    expect(edited.events).toEqual(reference('edited', EDITED).events);
    expect(appended.events).toEqual(reference('appended', APPENDED).events);
    expect(appended.rollout.reward).toBe(0.5);
    expect(edited.rollout.meta).toMatchObject({ import: { convention: 'verl' } });
  });

  it('a turn whose prompt drops an earlier turn becomes an edit, and the kept output a diverging leaf', () => {
    // Turn 3 is prompted with the prompt and turn 2's output only: turn 1 and its observation are gone.
    const text = jsonl([
      { prompt_ids: [1, 2], output_ids: [3, 4] },
      { prompt_ids: [1, 2, 3, 4, 5, 6], output_ids: [7, 8] },
      { prompt_ids: [1, 2, 7, 8, 9], output_ids: [10] },
    ]);
    const [{ rollout, events, figures }] = imported(text);
    // The prompt and turn 2's output keep their ids; the new observation after them is new content.
    expect(events[4]).toEqual({ op: 'edit', view: [{ keep: [0, 2] }, { keep: [6, 8] }, { insert: { role: 'summary', tokens: [9] } }] });
    expect(figures).toMatchObject({ K: 1, targets: 5, droppedTargets: 2, divergingLeaves: 2 });
    const tree = deriveTree(rollout);
    expect(Array.from(tree.divergingLeaves)).toEqual([6, 7]);
    expect(Array.from(tree.livePrefix(6))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Array.from(tree.finalPrefix(6)!)).toEqual([0, 1]);
    expect(rollout.vocab).toBe(11);
  });

  it('every command reads a dump directly: detected from its records', () => {
    const text = jsonl(EDITED.map((c, i) => ({ prompt_ids: c.input, response_ids: c.output, rollout_logprobs: c.logprobs, trajectory_id: 't', step: i })));
    const [rollout] = parseRolloutFile(text, 'dump.jsonl');
    expect(rolloutToJson(rollout).events).toEqual(reference('t', EDITED).events);
  });

  it('a vocab_size field sets the vocabulary', () => {
    const [{ rollout }] = imported(jsonl([{ prompt_ids: [1], output_ids: [2], vocab_size: 151936 }]));
    expect(rollout.vocab).toBe(151936);
  });
  it('--tokenizer gpt2 records the tokenizer and its vocabulary; the ids stay as the trainer wrote them', () => {
    const ids = { prompt_ids: [15496, 995], output_ids: [50256] };
    const [{ value }] = importTurnsText(jsonl([ids]), 'dump.jsonl', { tokenizer: 'gpt2' }).rollouts;
    const rollout = validateRollout(value, { file: 'dump.jsonl' });
    expect([rollout.tokenizer, rollout.vocab]).toEqual(['gpt2', 50257]);
    expect([...rollout.tokens]).toEqual([15496, 995, 50256]);
    expect(() => importTurnsText(jsonl([{ prompt_ids: [1], output_ids: [50257] }]), 'dump.jsonl', { tokenizer: 'gpt2' })).toThrow(
      'dump.jsonl:1: token id 50257 is outside the vocabulary of 50257',
    );
    expect(() => importTurnsText(jsonl([{ prompt_ids: [1], output_ids: [2], vocab_size: 151936 }]), 'dump.jsonl', { tokenizer: 'gpt2' })).toThrow(
      "dump.jsonl: the dump's vocabulary of 151936 is larger than gpt2's 50257",
    );
  });
});

describe('turns importer: bad records', () => {
  const error = (records: unknown[] | string) => {
    try {
      importTurnsText(typeof records === 'string' ? records : jsonl(records), 'dump.jsonl');
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };
  it.each([
    ['not JSON', '{"prompt_ids": [1], "output_ids": [2]}\n{"prompt_ids": [1\n', 'dump.jsonl:2: invalid JSON'],
    ['no output', [{ prompt_ids: [1], output_ids: [2] }, { prompt_ids: [1, 2] }], 'dump.jsonl:2: no output (output_ids, response_ids, completion_ids)'],
    [
      'a token that is not an id',
      [{ prompt_ids: [1, -3], output_ids: [2] }],
      'dump.jsonl:1: prompt_ids[1] = -3 is not a token id (an integer in [0, 2147483647))',
    ],
    [
      'logprobs of the wrong length',
      [{ prompt_ids: [1], output_ids: [2, 3], output_log_probs: [-1] }],
      'dump.jsonl:1: output_log_probs must have one number per token of output_ids (2), got 1',
    ],
    [
      'a positive logprob',
      [{ prompt_ids: [1], response_ids: [2], rollout_logprobs: [0.5] }],
      'dump.jsonl:1: rollout_logprobs[0] = 0.5 is not a finite number <= 0',
    ],
    [
      'a mask of the wrong length',
      [{ prompt_ids: [1], response_ids: [2, 3], loss_mask: [1] }],
      'dump.jsonl:1: loss_mask must have one 0 or 1 per token of response_ids (2)',
    ],
    ['an output with nothing before it', [{ prompt_ids: [], output_ids: [2] }], 'dump.jsonl:1: the output has no token before it (empty prompt)'],
    [
      'a record without the trajectory id others have',
      [
        { prompt_ids: [1], output_ids: [2], trajectory_id: 'a' },
        { prompt_ids: [1], output_ids: [2] },
      ],
      'dump.jsonl:2: no trajectory id',
    ],
    [
      'a step twice',
      [
        { prompt_ids: [1], output_ids: [2], trajectory_id: 'a', step: 0 },
        { prompt_ids: [1, 2], output_ids: [3], trajectory_id: 'a', step: 0 },
      ],
      'dump.jsonl:2: trajectory "a": step 0 appears twice (also on line 1)',
    ],
    [
      'a token outside vocab_size',
      [
        { prompt_ids: [1], output_ids: [2], vocab_size: 8 },
        { prompt_ids: [1, 2], output_ids: [9] },
      ],
      'dump.jsonl:2: token id 9 is outside the vocabulary of 8',
    ],
    ['not an object', ['[1, 2]'], 'dump.jsonl:1: expected a turn record'],
  ])('%s', (_, records, message) => {
    expect(error(records as unknown[])).toContain(message);
  });
});

describe("a turns dump read with a model folder's tokenizer (the page's text-as after a folder is loaded)", () => {
  it('is named hf:<name> with the model vocabulary, ids as written; the byte default and ids beyond the vocabulary are not applied or refused', async () => {
    const { createHfTokenizer } = await import('../tokenizer-hf');
    const { registerTokenizer } = await import('../tokenizer');
    const { tinyTokenizerJson } = await import('../../testing/familyFolders');
    registerTokenizer(createHfTokenizer({ name: 'turns-wide', tokenizer: tinyTokenizerJson([]).json, vocab: 151936 }));
    const text = jsonl([{ prompt_ids: [151644, 5, 6], output_ids: [7, 151645] }]);
    const named = turnsImporter.readText(text, 'dump.jsonl', { tokenizer: 'hf:turns-wide' as never }).rollouts[0].value;
    expect([named.tokenizer, named.vocab]).toEqual(['hf:turns-wide', 151936]);
    const plain = turnsImporter.readText(text, 'dump.jsonl', { tokenizer: 'byte' }).rollouts[0].value;
    expect([plain.tokenizer, plain.vocab]).toEqual([undefined, 151646]);
    expect({ ...named, tokenizer: undefined, vocab: undefined }).toEqual({ ...plain, tokenizer: undefined, vocab: undefined });
    registerTokenizer(createHfTokenizer({ name: 'turns-small', tokenizer: tinyTokenizerJson([]).json }));
    expect(() => turnsImporter.readText(text, 'dump.jsonl', { tokenizer: 'hf:turns-small' as never })).toThrow(
      /token id 151645 is outside the vocabulary of \d+/,
    );
  });
});
