// Codex CLI rollouts (docs/importers.md): response items become appends, the one `compacted` item of
// the fixture becomes one edit that keeps the three user messages it carries over and inserts the
// summary message; bad records are one-line errors naming file and line.

import { describe, expect, it } from 'vitest';
import { deriveTree } from '../../tree/derive';
import { ValidationError } from '../errors';
import { validateRollout } from '../validate';
import { importCodexText, looksLikeCodex } from './codex';
import { sampleRecords } from './lines';
import { describeRollout, jsonl, readFixture } from './testing';

const FIXTURE = 'codex-rollout-compacted.jsonl';

describe('Codex CLI rollouts', () => {
  it('one compacted item imports to one edit that keeps the surviving user messages and inserts the summary', () => {
    const text = readFixture(FIXTURE);
    expect(looksLikeCodex(sampleRecords(text))).toBe(true);
    const { rollout, report } = importCodexText(text, FIXTURE);
    const { events } = describeRollout(rollout);
    const edits = events.filter((e) => typeof e === 'object' && e !== null && 'edit' in e);
    expect(edits).toHaveLength(1);
    expect(report.edits).toEqual({ compaction: 1 });
    // The environment context (e0), the two user messages (e1, e9) kept; the summary inserted.
    const edit = edits[0] as { edit: unknown[] };
    expect(edit.edit.slice(0, 3)).toEqual(['e0', 'e1', 'e9']);
    expect(edit.edit[3]).toMatchObject({ insert: 'summary' });
    expect((edit.edit[3] as { text: string }).text).toMatch(/^Another language model started/);
    expect(edit.edit).toHaveLength(4);
    // Before the edit: prompt x2, then calls, outputs, patch, message; after it the new work.
    expect(events.slice(0, 3)).toEqual([
      ['prompt', expect.stringMatching(/^<environment_context>/)],
      ['prompt', expect.stringMatching(/^The word counter/)],
      ['act', expect.stringMatching(/^\{"name":"shell","arguments":\{"command":\["bash","-lc","rg -n 'def count' src"\]/)],
    ]);
    expect(events.filter((e) => Array.isArray(e) && e[0] === 'obs')).toHaveLength(6);
    expect(events).toHaveLength(18);
    expect(rollout.id).toBe('0199e2b1-7c3a-7d21-9f4e-2b8c5a1d6e03');
    expect(report).toMatchObject({ format: 'codex', records: 25, imported: 18, skippedBlocks: { 'reasoning (encrypted or summary only)': 1 } });
    expect(report.skipped.map((s) => `${s.count} ${s.reason}`)).toEqual([
      '1 session metadata (session_meta)',
      '1 turn settings (turn_context)',
      '1 not model context (event_msg/user_message)',
      '1 left out of the context (no text the model read or wrote)',
      '1 not model context (event_msg/token_count)',
      '1 not model context (event_msg/agent_message)',
      '1 not model context (event_msg/context_compacted)',
    ]);
    const figures = deriveTree(validateRollout(rollout, { file: FIXTURE })).figures;
    expect(figures.K).toBe(1);
  });

  it('an older compacted item without replacement_history keeps the user messages and inserts its message', () => {
    const user = (text: string) => ({ type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
    const said = (text: string) => ({ type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] } });
    const { rollout } = importCodexText(
      jsonl([user('add 2 and 2'), said('4'), { type: 'compacted', payload: { message: 'user asked a sum; answered 4' } }, said('done')]),
      'old.jsonl',
    );
    expect(describeRollout(rollout).events).toEqual([
      ['prompt', 'add 2 and 2'],
      ['act', '4'],
      { edit: ['e0', { insert: 'summary', text: 'user asked a sum; answered 4' }] },
      ['act', 'done'],
    ]);
  });

  it('the older layout (a {id, timestamp} line, then bare response items and state lines) reads the same', () => {
    const text = jsonl([
      { id: 'sess-1', timestamp: '2025-05-01T10:00:00Z', instructions: null },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
      { record_type: 'state' },
      { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'c1' },
      { type: 'function_call_output', call_id: 'c1', output: '{"output":"a.txt\\n","metadata":{"exit_code":0}}' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'One file: a.txt.' }] },
    ]);
    expect(looksLikeCodex(sampleRecords(text))).toBe(true);
    const { rollout } = importCodexText(text, 'old.jsonl');
    expect(rollout.id).toBe('sess-1');
    expect(describeRollout(rollout).events.map((e) => (e as string[])[0])).toEqual(['prompt', 'act', 'obs', 'act']);
  });

  it('refuses bad records with one line naming the file and line', () => {
    const good = readFixture(FIXTURE).split('\n');
    const bad = (lines: string[]) => {
      try {
        importCodexText(lines.join('\n'), 'r.jsonl');
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(bad([...good.slice(0, 5), good[5].slice(0, 40)])).toMatch(/^r\.jsonl:6: invalid JSON/);
    expect(bad([...good.slice(0, 3), JSON.stringify({ type: 'response_item', payload: { type: 'message', role: 'user', content: 'hi' } })])).toBe(
      'r.jsonl:4: response_item (message): message content must be a list of parts, got "hi"',
    );
    expect(bad([good[0], JSON.stringify({ type: 'response_item', payload: { type: 'function_call_output', call_id: 'call_nowhere', output: 'x' } })])).toBe(
      'r.jsonl:2: function_call_output answers call_id "call_nowhere", which no earlier call has',
    );
    const call = JSON.stringify({ type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c1' } });
    expect(bad([good[0], call, call])).toBe('r.jsonl:3: call_id "c1" is used by two calls (also on line 2)');
    expect(bad([good[0], JSON.stringify({ type: 'compacted', payload: { message: 's', replacement_history: 'all' } })])).toMatch(
      /^r\.jsonl:2: compacted replacement_history must be a list/,
    );
    expect(bad([good[0], JSON.stringify({ type: 'response_item', payload: 7 })])).toBe('r.jsonl:2: record "payload" must be an object, got 7');
  });
});
