// Gemini CLI sessions (docs/importers.md): the single JSON file and the JSONL recording of the same
// session import with the same actions (text, tool calls, tool results); the recording's rewrite of
// the message list (a /compress) is one edit; rewinds cut the view; bad records name file and line.

import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors';
import { importGeminiText, looksLikeGemini } from './gemini';
import { sampleRecords } from './lines';
import { describeRollout, jsonl, readFixture } from './testing';

const SESSION = [
  ['prompt', 'List the TODO comments in src/ and group them by file.'],
  ['act', "I'll search the source tree for TODO markers."],
  ['act', '{"name":"search_file_content","args":{"pattern":"TODO","path":"src"}}'],
  ['obs', expect.stringMatching(/^Found 3 matches for pattern "TODO"/)],
  ['act', expect.stringMatching(/^Three TODOs in two files:/)],
  ['prompt', 'Fix the retry one.'],
  ['act', 'Reading the request helper first.'],
  ['act', '{"name":"read_file","args":{"absolute_path":"/home/kai/fetchkit/src/http.ts","offset":30,"limit":20}}'],
  ['obs', expect.stringMatching(/^export async function get/)],
];

function refused(text: string): string {
  try {
    importGeminiText(text, 's.jsonl');
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('Gemini CLI sessions', () => {
  it('the single JSON file: user turns, gemini text, tool calls and their results; info messages left out', () => {
    const text = readFixture('gemini-session.json');
    expect(looksLikeGemini([JSON.parse(text)])).toBe(true);
    const { rollout, report } = importGeminiText(text, 'gemini-session.json');
    expect(describeRollout(rollout).events).toEqual(SESSION);
    expect(rollout.id).toBe('7c1e9a52-3b0d-4f6e-a8c1-2d5b9e0f4a37');
    expect(report.skipped.map((s) => `${s.count} ${s.reason} [${s.lines}]`)).toEqual(['1 session metadata [1]', '1 not model context (info) [82]']);
    expect(report.skippedBlocks).toEqual({ 'thoughts (summaries)': 1 });
    expect(report.edits).toEqual({});
  });

  it('the JSONL recording: the same actions (a turn rewritten with its tool result adds the result), then /compress as one edit', () => {
    const text = readFixture('gemini-session.jsonl');
    expect(looksLikeGemini(sampleRecords(text))).toBe(true);
    const { rollout, report } = importGeminiText(text, 'gemini-session.jsonl');
    const { events } = describeRollout(rollout);
    expect(events.slice(0, 9)).toEqual(SESSION);
    expect(events[9]).toEqual({
      edit: [
        { insert: 'summary', text: expect.stringMatching(/^<state_snapshot>/) },
        { insert: 'summary', text: 'Got it. Thanks for the additional context!' },
        'e5',
        'e6',
        'e7',
        'e8',
      ],
    });
    expect(events.slice(10)).toEqual([
      ['act', 'get() now retries once on a 503 before throwing.'],
      ['act', expect.stringMatching(/^\{"name":"replace"/)],
      ['obs', expect.stringMatching(/^Successfully modified file/)],
    ]);
    expect(report.edits).toEqual({ compression: 1 });
    expect(report).toMatchObject({ records: 12, imported: 8 });
  });

  it('a rewind cuts the view back to before the named message', () => {
    const user = (id: string, content: string) => ({ id, type: 'user', content });
    const said = (id: string, content: string) => ({ id, type: 'gemini', content });
    const text = jsonl([
      { sessionId: 's', projectHash: 'p', startTime: 't' },
      user('u1', 'a'),
      said('g1', 'b'),
      user('u2', 'c'),
      said('g2', 'd'),
      { $rewindTo: 'u2' },
      user('u3', 'e'),
    ]);
    expect(describeRollout(importGeminiText(text, 's.jsonl').rollout).events).toEqual([
      ['prompt', 'a'],
      ['act', 'b'],
      ['prompt', 'c'],
      ['act', 'd'],
      { edit: ['e0', 'e1'] },
      ['prompt', 'e'],
    ]);
  });

  it('refuses bad records with one line naming the file and line', () => {
    const head = JSON.stringify({ sessionId: 's', projectHash: 'p', startTime: 't' });
    expect(refused([head, '{"id": "u1", "type": "user", "cont'].join('\n'))).toMatch(/^s\.jsonl:2: invalid JSON/);
    expect(refused([head, JSON.stringify({ id: 7, type: 'user', content: 'x' })].join('\n'))).toBe('s.jsonl:2: message id must be a non-empty string, got 7');
    expect(refused([head, JSON.stringify({ id: 'g', type: 'gemini', content: '', toolCalls: {} })].join('\n'))).toBe(
      's.jsonl:2: toolCalls must be a list, got {}',
    );
    expect(refused([head, JSON.stringify({ $rewindTo: 'nowhere' })].join('\n'))).toBe(
      's.jsonl:2: $rewindTo names message "nowhere", which the session does not hold',
    );
    const call = { id: 'c1', name: 'ls', args: {} };
    expect(
      refused(
        [
          head,
          JSON.stringify({ id: 'g1', type: 'gemini', content: '', toolCalls: [call] }),
          JSON.stringify({ id: 'g2', type: 'gemini', content: '', toolCalls: [call] }),
        ].join('\n'),
      ),
    ).toBe('s.jsonl:3: tool call id "c1" is used by message "g1" too');
    const pretty = readFixture('gemini-session.json');
    expect(refused(pretty.slice(0, pretty.indexOf('"type": "info"')))).toMatch(/^s\.jsonl:85: invalid JSON/);
    expect(refused(JSON.stringify({ id: 'u1', type: 'user', content: 'x' }) + '\n')).toBe(
      's.jsonl:1: expected a Gemini CLI session (sessionId and messages, or a recording whose first line is its metadata)',
    );
  });
});
