// The chat-format importer on a hand-written file: one append-only rollout per conversation line,
// each variant of a message (tool calls, content parts, reasoning, weight 0), each refusal.

import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors';
import type { RolloutJson } from '../format';
import { validateRollout } from '../validate';
import { deriveTree } from '../../tree/derive';
import { chatImporter, importChatRecords, importChatText, looksLikeChat, streamChat } from './chat';
import { chunkedSource, readFixture } from './testing';

const FILE = 'chat.jsonl';
const text = readFixture(FILE);
const appends = (r: RolloutJson) => r.events.map((e) => (e.op === 'append' ? [e.role, e.text] : e.op));

describe('chat JSONL', () => {
  const { rollouts, report } = importChatText(text, { file: FILE });

  it('makes one rollout per conversation: system / developer / user prompt, assistant act, tool obs', () => {
    expect(rollouts.map((r) => [r.id, r.reward, r.group, r.meta])).toEqual([
      ['chat-1', undefined, undefined, { source: 'chat', line: 1 }],
      ['conv-2', 1, 'weather', { source: 'chat', line: 2 }],
      ['chat-3', undefined, undefined, { source: 'chat', line: 3 }],
    ]);
    expect(rollouts.map(appends)).toEqual([
      [
        ['prompt', 'You are a calculator.'],
        ['prompt', '2+2?'],
        ['act', '4'],
      ],
      [
        ['prompt', 'Weather in Paris?'],
        ['act', '{"name":"get_weather","arguments":{"city":"Paris"}}'],
        ['obs', '{"temp_c":18}'],
        ['act', '18 °C in Paris.'],
      ],
      [
        ['prompt', 'Answer briefly.'],
        ['prompt', 'Capital of France?\n[image]'],
        ['obs', 'Lyon.'], // weight 0: shown to the model, not learned from
        ['prompt', 'Sure?'],
        ['act', 'Lyon is wrong; it is Paris.'],
        ['act', 'Paris.'],
      ],
    ]);
  });

  it('gives valid append-only rollouts whose targets are the assistant bytes', () => {
    const targets = rollouts.map((r) => {
      const tree = deriveTree(validateRollout(r, { file: FILE }));
      expect(tree.figures.K).toBe(0);
      expect(tree.figures.droppedTargets).toBe(0);
      return tree.figures.targets;
    });
    expect(targets).toEqual([1, 51 + 16, 27 + 6]);
  });

  it('reports the lines it could not read, with the reason', () => {
    expect(report).toEqual({
      format: 'chat',
      records: 6,
      imported: 3,
      rollouts: 3,
      events: 13,
      edits: {},
      skipped: [
        { reason: 'malformed (not JSON)', count: 1, lines: '4' },
        { reason: 'messages not understood', count: 1, lines: '5' },
        { reason: 'not a chat record (no "messages" array)', count: 1, lines: '7' },
      ],
      skippedBlocks: {},
      problems: [
        { line: 4, reason: expect.stringMatching(/^not JSON \(/) },
        { line: 5, reason: 'messages[0]: role "narrator" is not one of system, developer, user, assistant, tool, function, ipython' },
        { line: 7, reason: 'not a chat record (an object with a "messages" array)' },
      ],
      problemsOmitted: 0,
      branches: [],
    });
  });

  it('streams the same rollouts from cut bytes', async () => {
    const streamed: RolloutJson[] = [];
    const streamedReport = await streamChat(chunkedSource(text, 5), (r) => streamed.push(r), { file: FILE });
    expect(streamed).toEqual(rollouts);
    expect(streamedReport).toEqual(report);
  });

  it('is found by content and read through the registry entry', () => {
    const records = [1, 2, 3].map((line) => ({ line, value: JSON.parse(text.split('\n')[line - 1]) as unknown }));
    expect(
      chatImporter.detect(
        records.map((r) => r.value),
        FILE,
      ),
    ).toBe(true);
    expect(chatImporter.readText(text, FILE).rollouts.map((r) => [r.line, r.value])).toEqual(rollouts.map((r, i) => [[1, 2, 3][i], r]));
    expect(looksLikeChat([{ type: 'user', uuid: 'u1', message: { role: 'user', content: 'x' } }])).toBe(false);
    expect(looksLikeChat([{ format: 'memorywalker.rollout/v1', messages: [{ role: 'user' }] }])).toBe(false);
  });

  it('renders legacy function_call and keeps arguments that are not JSON as written', () => {
    const {
      rollouts: [r],
    } = importChatRecords([
      {
        value: {
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{not json' } },
            { role: 'function', name: 'f', content: 'done' },
          ],
        },
      },
    ]);
    expect(appends(r.rollout)).toEqual([
      ['prompt', 'go'],
      ['act', '{"name":"f","arguments":"{not json"}'],
      ['obs', 'done'],
    ]);
  });

  it('makes duplicate ids unique and refuses a file without a single conversation', () => {
    const { rollouts: rs } = importChatText('{"id":"a","messages":[{"role":"user","content":"x"}]}\n{"id":"a","messages":[{"role":"user","content":"y"}]}\n');
    expect(rs.map((r) => r.id)).toEqual(['a', 'a-line2']);
    expect(() => importChatText('{"prompt":"x"}\n', { file: 'p.jsonl' })).toThrow(
      new ValidationError({ file: 'p.jsonl' }, 'no chat conversations (JSON lines with a "messages" array)'),
    );
  });
});
