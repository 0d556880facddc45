// The agent-session importer on hand-written session logs: the two-compaction fixture event by
// event and figure by figure, then each variant of the format (preserved segments, streamed
// snake_case records, parallel tool calls, older logs) and each way a record can be refused.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors';
import type { EventJson } from '../format';
import { validateRollout } from '../validate';
import { deriveTree } from '../../tree/derive';
import { CLEARED_TOOL_RESULT, agentSessionImporter, importAgentSessionText, looksLikeAgentSession, streamAgentSession } from './agentSession';
import { textSource } from './lines';
import { chunkedSource, describeRollout, jsonl, readFixture } from './testing';

const TWO = 'agent-session-two-compactions.jsonl';
const SESSION = '3f6c2a1e-8d4b-4c1a-9e2f-5b7d0a9c4e11';
const OPENING = 'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n';
const tool = (name: string, input: unknown) => JSON.stringify({ name, input });
const MATH = '/home/dev/mathlib/src/math.ts';
const UPDATED = `The file ${MATH} has been updated.`;
const SUITE = 'PASS src/math.test.ts\n  add: 1 passed\n  subtract: 1 passed\nTests: 2 passed, 2 total\nTime: 0.84 s';

describe('agent session with two compactions and a microcompaction', () => {
  const { rollout: json, report } = importAgentSessionText(readFixture(TWO), { file: TWO });
  const { rollout, events } = describeRollout(json);

  it('imports the main chain: user text as prompt, tool results as obs, thinking / text / tool calls as act', () => {
    expect(events).toEqual([
      ['prompt', 'The test for add() fails. Please fix it.'],
      ['act', 'The test says add(2, 2) is 5. Read src/math.ts first.'],
      ['act', tool('Read', { file_path: MATH })],
      ['obs', '     1\texport function add(a, b) {\n     2\t  return a + b + 1;\n     3\t}\n'],
      ['act', 'add() returns a + b + 1; the extra 1 is the bug.'],
      ['act', tool('Edit', { file_path: MATH, old_string: 'a + b + 1', new_string: 'a + b' })],
      ['obs', UPDATED],
      ['act', 'Fixed. Running the tests.'],
      ['act', tool('Bash', { command: 'npm test', description: 'Run the tests' })],
      ['obs', 'PASS src/math.test.ts\n  add: 1 passed'],
      ['act', 'The test passes now.'],
      {
        edit: [
          {
            insert: 'summary',
            text: `${OPENING}The user asked to fix add() in src/math.ts. It returned a + b + 1; the extra 1 was removed and npm test passes.`,
          },
        ],
      },
      ['prompt', 'Now add subtract() next to add().'],
      ['act', tool('Edit', { file_path: MATH, old_string: '}\n', new_string: '}\nexport function subtract(a, b) {\n  return a - b;\n}\n' })],
      ['obs', UPDATED],
      ['act', 'subtract() is in src/math.ts.'],
      { edit: [{ insert: 'summary', text: `${OPENING}add() was fixed and subtract() added in src/math.ts; the last test run passed.` }] },
      ['prompt', 'Run the whole test suite and tell me how long it takes.'],
      ['act', tool('Bash', { command: 'npm test -- --verbose', description: 'Run all tests' })],
      ['obs', SUITE],
      ['act', 'The suite passes: 2 tests in 0.84 s.'],
      // The microcompaction keeps everything live but the cleared tool result (event 19).
      { edit: ['e16.0', 'e17', 'e18', { insert: 'obs', text: CLEARED_TOOL_RESULT }, 'e20'] },
      ['prompt', 'Also add multiply() and divide(), with tests.'],
      ['act', 'I will add multiply() and divide(), with a test for each.'],
    ]);
  });

  it('has one junction per compaction: K = 3, four branches, every pre-compaction target dropped', () => {
    const tree = deriveTree(rollout);
    expect(tree.figures).toEqual({
      K: 3,
      branches: 4,
      physicalLength: 1761,
      finalWalkLength: 524,
      packedLength: 1798,
      targets: 778,
      droppedTargets: 596,
      divergingLeaves: 36,
      evictionMassTotal: 3492,
      evictionMassMax: 97,
    });
    // Every assistant message before the second compaction is a target of branch 0 or 1 only.
    const segmentOf = (e: number) => rollout.segments[(rollout.events[e] as { first: number }).first];
    for (const e of [1, 2, 4, 5, 7, 8, 10]) expect(segmentOf(e)).toBe(0);
    for (const e of [13, 15]) expect(segmentOf(e)).toBe(1);
    const lastDropped = (rollout.events[15] as { first: number; count: number }).first + (rollout.events[15] as { count: number }).count;
    for (const t of tree.targets) expect(tree.dropped[t]).toBe(t < lastDropped ? 1 : 0);
    // The diverging leaves are the answer given while the suite's output was still live: each
    // of its 36 bytes lost the 97 ids of that output (marker + 96 bytes) to the placeholder.
    const answer = rollout.events[20] as { first: number; count: number };
    expect(Array.from(tree.divergingLeaves)).toEqual(Array.from({ length: 36 }, (_, i) => answer.first + 1 + i));
    expect(new TextEncoder().encode(SUITE).length + 1).toBe(97);
  });

  it('reports every record: imported, skipped with lines and reason, the other branch', () => {
    expect(report).toEqual({
      format: 'agent-session',
      records: 34,
      imported: 25,
      rollouts: 1,
      events: 24,
      edits: { compaction: 2, microcompaction: 1 },
      skipped: [
        { reason: 'not model context (summary)', count: 1, lines: '1' },
        { reason: 'not model context (file-history-snapshot)', count: 2, lines: '2,27' },
        { reason: 'sidechain (sub-agent traffic)', count: 2, lines: '9-10' },
        { reason: 'meta (harness-injected, isMeta)', count: 1, lines: '15' },
        { reason: 'not on the main chain', count: 2, lines: '30-31' },
        { reason: 'not model context (system/turn_duration)', count: 1, lines: '34' },
      ],
      skippedBlocks: {},
      problems: [],
      problemsOmitted: 0,
      branches: [{ leafLine: 31, forkLine: 29, records: 2, messages: 2 }],
    });
    expect(report.imported + report.skipped.reduce((n, s) => n + s.count, 0)).toBe(report.records);
  });

  it('keeps the report and the session id in the rollout', () => {
    expect(json.id).toBe(SESSION);
    expect(json.tokenizer).toBe('byte');
    expect(json.vocab).toBe(272);
    expect(json.meta).toEqual({ source: 'agent-session', sessionId: SESSION, import: report });
  });

  it('streams the same rollout from bytes cut every 7 bytes', async () => {
    const streamed: EventJson[] = [];
    let started: unknown;
    const head = await streamAgentSession(chunkedSource(readFixture(TWO), 7), (e) => streamed.push(e), {
      file: TWO,
      onStart: (h) => (started = h),
    });
    expect(streamed).toEqual(json.events);
    expect(started).toEqual({ format: json.format, id: json.id, vocab: 272, tokenizer: 'byte' });
    expect({ ...head, events: streamed }).toEqual(json);
  });

  it('is found by content and read from parsed records through the registry entry', () => {
    const records = readFixture(TWO)
      .split('\n')
      .map((text, i) => ({ text, line: i + 1 }))
      .filter(({ text }) => text.trim())
      .map(({ text, line }) => ({ value: JSON.parse(text) as unknown, line }));
    expect(
      agentSessionImporter.detect(
        records.map((r) => r.value),
        TWO,
      ),
    ).toBe(true);
    const [fromText] = agentSessionImporter.readText(readFixture(TWO), TWO).rollouts;
    expect(fromText.value).toEqual(json);
    expect(looksLikeAgentSession([{ messages: [{ role: 'user', content: 'hi' }] }])).toBe(false);
    expect(looksLikeAgentSession([{ format: 'memorywalker.calls/v1', id: 'x', vocab: 272, calls: [] }])).toBe(false);
    expect(looksLikeAgentSession(records.slice(0, 1).map((r) => r.value))).toBe(false); // a title record alone
  });
});

describe('compaction with a preserved segment', () => {
  const text = readFixture('agent-session-preserved-segment.jsonl');
  const { rollout: json, report } = importAgentSessionText(text);
  const { rollout, events } = describeRollout(json);

  it('inserts the summary and keeps the preserved messages, splicing in the boundary written after them', () => {
    expect(events.slice(7)).toEqual([
      ['act', 'Quoted fields are handled.'],
      {
        edit: [
          { insert: 'summary', text: `${OPENING}The user asked for a CSV parser in src/csv.ts; it exists and handles quoted fields.` },
          'e4',
          'e5',
          'e6',
          'e7',
        ],
      },
      ['prompt', 'Add a test for an empty line.'],
      ['act', 'Added the test.'],
    ]);
    expect(report.branches).toEqual([]);
    expect(report.imported).toBe(12);
  });

  it('makes the preserved answers diverging leaves (their live prefix held the evicted start)', () => {
    const tree = deriveTree(rollout);
    const bytes = (e: number) => (rollout.events[e] as { count: number }).count - 1;
    expect(tree.figures.K).toBe(1);
    expect(tree.figures.droppedTargets).toBe(bytes(1) + bytes(3));
    expect(tree.figures.divergingLeaves).toBe(bytes(5) + bytes(7));
    expect(tree.figures.evictionMassMax).toBe([0, 1, 2, 3].reduce((n, e) => n + (rollout.events[e] as { count: number }).count, 0));
  });

  it('gives the same rollout when the conversation continues from the summary instead of the tail', () => {
    const relinked = text.replace(
      /"parentUuid":"00000008-5e55-4a11-8000-000000000008"(.*"uuid":"00000011-)/,
      '"parentUuid":"00000010-5e55-4a11-8000-000000000010"$1',
    );
    expect(relinked).not.toBe(text);
    expect(importAgentSessionText(relinked).rollout.events).toEqual(json.events);
  });
});

describe('streamed (SDK) variant: snake_case fields, no parent links', () => {
  const { rollout: json, report } = importAgentSessionText(readFixture('agent-session-stream.jsonl'));
  const { events } = describeRollout(json);

  it('reads the records in file order, sub-agent traffic (parent_tool_use_id) skipped', () => {
    expect(events).toEqual([
      ['prompt', 'Summarise README.md.'],
      ['act', tool('Read', { file_path: 'README.md' })],
      ['obs', '# docs\n## Install\n## Usage\n## Licence'],
      ['act', tool('Task', { description: 'Count sections', prompt: 'How many sections does README.md have?' })],
      ['obs', 'The README has 3 sections.'],
      // compact_metadata (snake_case) boundary; its summary has no flag but opens as the CLI's do.
      { edit: [{ insert: 'summary', text: `${OPENING}The user asked for a summary of README.md (3 sections: Install, Usage, Licence).` }] },
      ['act', 'README.md describes install, usage and licence.'],
    ]);
    expect(json.id).toBe('9b2e4f60-1c3d-4e5f-8a7b-6c5d4e3f2a10');
    expect(report.skipped).toEqual([
      { reason: 'not model context (system/init)', count: 1, lines: '1' },
      { reason: 'sidechain (sub-agent traffic)', count: 2, lines: '6-7' },
      { reason: 'not model context (result)', count: 1, lines: '12' },
    ]);
  });
});

// Small sessions written inline: one record per call, uuids 'u1', 'u2', ... by line.
const SID = 'session-1';
const u = (n: number) => `u${n}`;
function rec(n: number, parent: number | null, type: string, fields: Record<string, unknown> = {}) {
  return { parentUuid: parent === null ? null : u(parent), isSidechain: false, sessionId: SID, type, uuid: u(n), ...fields };
}
const user = (n: number, parent: number | null, content: unknown, extra: Record<string, unknown> = {}) =>
  rec(n, parent, 'user', { message: { role: 'user', content }, ...extra });
const assistant = (n: number, parent: number | null, content: unknown, id = `msg_${n}`, extra: Record<string, unknown> = {}) =>
  rec(n, parent, 'assistant', { message: { id, role: 'assistant', content }, ...extra });
const result = (n: number, parent: number, id: string, content: unknown) => user(n, parent, [{ type: 'tool_result', tool_use_id: id, content }]);
const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
const txt = (text: string) => ({ type: 'text', text });
const boundary = (n: number, logical: number, meta: Record<string, unknown> = {}) =>
  rec(n, null, 'system', {
    subtype: 'compact_boundary',
    content: 'Conversation compacted',
    logicalParentUuid: u(logical),
    compactMetadata: { trigger: 'auto', preTokens: 1000, ...meta },
  });
const micro = (n: number, parent: number, ids: string[]) =>
  rec(n, parent, 'system', { subtype: 'microcompact_boundary', microcompactMetadata: { trigger: 'auto', compactedToolIds: ids } });
const summary = (n: number, parent: number | null, text: string) => user(n, parent, text, { isCompactSummary: true });
const load = (records: unknown[]) => importAgentSessionText(jsonl(records));
const shape = (events: EventJson[]) => events.map((e) => (e.op === 'append' ? `${e.role}:${e.text}` : `edit:${e.view.length}`));

describe('variants of the format', () => {
  const session = [
    user(1, null, 'q1'),
    assistant(2, 1, [use('t1', 'Bash', { command: 'ls' })]),
    result(3, 2, 't1', [txt('a.txt'), { type: 'image', source: {} }]),
    assistant(4, 3, [txt('one file')]),
    micro(5, 4, ['t1']),
    assistant(6, 5, [txt('done')]),
    boundary(7, 6),
    summary(8, 7, 'S'),
    user(9, 8, 'q2'),
  ];

  it('reads snake_case field names as their camelCase twins', () => {
    const snakeKey = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const snake = (r: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [snakeKey(k), k.endsWith('Metadata') ? snake(v as Record<string, unknown>) : v]));
    const camel = load(session);
    const snaked = load([...session.map(snake), { ...snake(user(10, 9, 'side')), is_sidechain: true }, { ...snake(user(11, 9, 'meta')), is_meta: true }]);
    expect(jsonl(session.map(snake))).toContain('"microcompact_metadata":{"trigger":"auto","compacted_tool_ids":["t1"]}');
    expect(jsonl(session.map(snake))).toContain('"is_compact_summary":true');
    expect(snaked.rollout.events).toEqual(camel.rollout.events);
    expect(shape(camel.rollout.events)).toEqual([
      'prompt:q1',
      `act:${tool('Bash', { command: 'ls' })}`,
      'obs:a.txt\n[image]',
      'act:one file',
      'edit:3',
      'act:done',
      'edit:1',
      'prompt:q2',
    ]);
    expect(snaked.report.skipped.map((s) => [s.reason, s.lines])).toEqual([
      ['sidechain (sub-agent traffic)', '10'],
      ['meta (harness-injected, isMeta)', '11'],
    ]);
  });

  it('stitches parallel tool calls stored as sibling records (one response, one message.id) back in', () => {
    // Records 2 and 3 are one response's two tool calls; 4 answers 2 but the chain goes 3 -> 5 -> 6.
    const records = [
      user(1, null, 'read both'),
      assistant(2, 1, [use('ta', 'Read', { file_path: 'a' })], 'msg_p'),
      assistant(3, 1, [use('tb', 'Read', { file_path: 'b' })], 'msg_p'),
      result(4, 2, 'ta', 'A'),
      result(5, 3, 'tb', 'B'),
      assistant(6, 5, [txt('read A and B')]),
    ];
    const { rollout, report } = load(records);
    expect(shape(rollout.events)).toEqual([
      'prompt:read both',
      `act:${tool('Read', { file_path: 'a' })}`,
      `act:${tool('Read', { file_path: 'b' })}`,
      'obs:A',
      'obs:B',
      'act:read A and B',
    ]);
    expect(report.branches).toEqual([]);
    expect(report.imported).toBe(6);
  });

  it('takes an older log without boundary records: a mid-session summary is a compaction, a first one a prompt', () => {
    const { rollout, report } = load([summary(1, null, 'earlier'), assistant(2, 1, [txt('a')]), summary(3, 2, 'S'), user(4, 3, 'q')]);
    expect(shape(rollout.events)).toEqual(['prompt:earlier', 'act:a', 'edit:1', 'prompt:q']);
    expect(rollout.events[2]).toEqual({ op: 'edit', view: [{ insert: { role: 'summary', text: 'S' } }] });
    expect(report.problems).toEqual([{ line: 3, reason: 'compact summary without a compact_boundary record: imported as a compaction' }]);
  });

  it('uses the boundary text when a compaction has no summary record, and says so', () => {
    const { rollout, report } = load([user(1, null, 'q'), assistant(2, 1, [txt('a')]), boundary(3, 2), user(4, 3, 'next')]);
    expect(rollout.events[2]).toEqual({ op: 'edit', view: [{ insert: { role: 'summary', text: 'Conversation compacted' } }] });
    expect(report.problems).toEqual([
      { line: 3, reason: 'compact_boundary is not followed by its summary record; the boundary text stands in for the summary' },
    ]);
  });

  it('makes no edit for a microcompaction whose tool results are no longer live', () => {
    const { rollout, report } = load([
      user(1, null, 'q'),
      assistant(2, 1, [use('t1', 'Bash', {})]),
      result(3, 2, 't1', 'out'),
      boundary(4, 3),
      summary(5, 4, 'S'),
      micro(6, 5, ['t1', 't9']),
      user(7, 6, 'q2'),
    ]);
    expect(rollout.events.filter((e) => e.op === 'edit')).toHaveLength(1);
    expect(report.edits).toEqual({ compaction: 1 });
    expect(report.skipped).toEqual([{ reason: 'microcompaction with nothing live to clear', count: 1, lines: '6' }]);
    expect(report.problems).toEqual([
      { line: 6, reason: 'microcompaction: 2 of 2 compacted tool results are not in the live view (evicted, already cleared, or never imported)' },
    ]);
  });

  it('leaves out synthetic API-error messages, redacted thinking and unknown blocks, naming them', () => {
    const { rollout, report } = load([
      user(1, null, 'q'),
      assistant(2, 1, [txt('API Error: overloaded')], 'msg_x', { isApiErrorMessage: true }),
      assistant(3, 2, [{ type: 'redacted_thinking', data: 'xx' }, { type: 'hologram' }, txt('a')]),
      assistant(4, 3, [{ type: 'web_search_tool_result', tool_use_id: 'srv1', content: [txt('hit')] }]),
    ]);
    expect(shape(rollout.events)).toEqual(['prompt:q', 'act:a', 'obs:hit']);
    expect(report.skippedBlocks).toEqual({ redacted_thinking: 1, hologram: 1 });
    expect(report.problems).toEqual([{ line: 3, reason: 'assistant content block type "hologram" is not understood; left out' }]);
    expect(report.skipped).toEqual([{ reason: 'synthetic assistant message (not generated by the model)', count: 1, lines: '2' }]);
  });

  it('reads a file that begins mid-session: its first message names a parent kept in another file', () => {
    const { rollout, report } = load([user(1, 99, 'go on'), assistant(2, 1, [txt('going on')])]);
    expect(shape(rollout.events)).toEqual(['prompt:go on', 'act:going on']);
    expect(report.problems).toEqual([
      { line: 1, reason: 'parentUuid "u99" names no record in the file: the session continues one kept elsewhere and starts here' },
    ]);
    // A compaction written at the head of a new file: its logical parent is in the old one.
    const compacted = load([boundary(1, 98), summary(2, 1, 'so far'), user(3, 2, 'next'), assistant(4, 3, [txt('ok')])]);
    expect(shape(compacted.rollout.events)).toEqual(['edit:1', 'prompt:next', 'act:ok']);
    expect(compacted.report.problems.map((p) => p.reason)).toEqual([
      'logicalParentUuid "u98" names no record in the file: the session continues one kept elsewhere and starts here',
    ]);
  });

  it('reads a session still being written: its last line, cut and with no newline, is reported and left out', async () => {
    const text = `${jsonl([user(1, null, 'q'), assistant(2, 1, [txt('a')])])}{"parentUuid":"u2","isSidechain":false,"type":"user","mess`;
    const { rollout, report } = importAgentSessionText(text);
    expect(shape(rollout.events)).toEqual(['prompt:q', 'act:a']);
    expect(report.records).toBe(3);
    expect(report.skipped).toEqual([{ reason: 'unfinished last line (the session was still being written)', count: 1, lines: '3' }]);
    expect(report.problems).toEqual([
      { line: 3, reason: expect.stringMatching(/^invalid JSON \(.*\): the last line has no newline, a record still being written; left out$/) },
    ]);
    // Streamed from bytes, the same.
    const streamed: EventJson[] = [];
    const head = await streamAgentSession(chunkedSource(text, 5), (e) => streamed.push(e));
    expect(streamed).toEqual(rollout.events);
    expect(head.meta.import).toEqual(report);
  });
});

describe('refusals: one clear message, no rollout', () => {
  const refusal = (text: string) => {
    try {
      importAgentSessionText(text, { file: 's.jsonl' });
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).message;
    }
    throw new Error('expected a refusal, the session imported');
  };
  const refusalStreamed = async (text: string) => {
    try {
      await streamAgentSession(chunkedSource(text, 4), () => {}, { file: 's.jsonl' });
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).message;
    }
    throw new Error('expected a refusal, the session imported');
  };
  const head = jsonl([user(1, null, 'q'), assistant(2, 1, [txt('a')])]);

  it('refuses a cut line anywhere but at the very end, naming its line (read whole or streamed)', async () => {
    const cutInside = `${head}{"parentUuid":"u2","type":"user","mess\n${jsonl([user(4, 2, 'again')])}`;
    expect(refusal(cutInside)).toMatch(/^s\.jsonl:3: invalid JSON \(/);
    expect(await refusalStreamed(cutInside)).toBe(refusal(cutInside));
    // A cut record that a newline ends was not being written: the file is damaged.
    const cutThenNewline = `${head}{"parentUuid":"u2","type":"user","mess\n`;
    expect(refusal(cutThenNewline)).toMatch(/^s\.jsonl:3: invalid JSON \(/);
    expect(await refusalStreamed(cutThenNewline)).toBe(refusal(cutThenNewline));
  });

  it('refuses a JSON line that is not a session record, naming its line', () => {
    expect(refusal(`${head}[1, 2]\n`)).toBe('s.jsonl:3: not a session record (an object with a string "type"), got [1,2]');
    expect(refusal(`${head}{"uuid":"u3"}\n`)).toBe('s.jsonl:3: not a session record (an object with a string "type"), got {"uuid":"u3"}');
  });

  it('joins a parent link into nothing after the first message to the record before it, reporting the repair by line', async () => {
    // Claude Code 2.1 writes links into records it never wrote (anthropics/claude-code #58554): read as a break,
    // everything before it would drop out of the context the model saw.
    const broken = [user(1, null, 'old'), assistant(2, 1, [txt('old answer')]), user(3, 99, 'new'), assistant(4, 3, [txt('new answer')])];
    const { rollout, report } = load(broken);
    const whole = load([user(1, null, 'old'), assistant(2, 1, [txt('old answer')]), user(3, 2, 'new'), assistant(4, 3, [txt('new answer')])]);
    expect(shape(rollout.events)).toEqual(shape(whole.rollout.events));
    expect(shape(rollout.events).slice(0, 2)).toEqual(['prompt:old', 'act:old answer']);
    expect(report.problems).toEqual([
      {
        line: 3,
        reason: 'parentUuid "u99" names no record in the file (Claude Code wrote a link to a record it never wrote): joined to the record before it, line 2',
      },
    ]);
    const streamed: EventJson[] = [];
    await streamAgentSession(chunkedSource(jsonl(broken), 5), (e) => streamed.push(e));
    expect(streamed).toEqual(rollout.events);
    // A compaction's logical parent likewise; the file's first message may still name one kept elsewhere.
    const compacted = load([user(1, null, 'q'), assistant(2, 1, [txt('a')]), boundary(3, 55), summary(4, 3, 's'), user(5, 4, 'next')]);
    expect(compacted.report.problems.map((p) => p.reason)).toEqual([
      'logicalParentUuid "u55" names no record in the file (Claude Code wrote a link to a record it never wrote): joined to the record before it, line 2',
    ]);
    expect(shape(compacted.rollout.events).slice(0, 2)).toEqual(['prompt:q', 'act:a']);
  });

  it('refuses a file with no session records', () => {
    expect(() => importAgentSessionText('{"messages":[]}\n', { file: 'chat.jsonl' })).toThrow(
      new ValidationError({ file: 'chat.jsonl' }, 'no agent-session records (JSON lines with "type": "user", "assistant", "system", ...)'),
    );
  });

  it('refuses a session whose main chain has no messages', () => {
    const records = [{ ...user(1, null, 'side'), isSidechain: true }, user(2, null, 'caveat', { isMeta: true })];
    expect(() => importAgentSessionText(jsonl(records), { file: 's.jsonl' })).toThrow('s.jsonl: no user or assistant messages on the main chain');
  });

  it('refuses a file that changes between the two passes', async () => {
    const first = jsonl([user(1, null, 'q'), assistant(2, 1, [txt('a')])]);
    const second = jsonl([user(1, null, 'q'), assistant(7, 1, [txt('a')])]);
    let calls = 0;
    const open = () => textSource(calls++ === 0 ? first : second)();
    await expect(streamAgentSession(open, () => {}, { file: 's.jsonl' })).rejects.toThrow('s.jsonl:2: the file changed while it was being imported');
  });
});

describe('random sessions', () => {
  // A session is a list of steps on one chain; sidechain, meta, branch and noise records are
  // interleaved. Whatever the mix, the rollout validates, K counts the compactions plus the
  // effective microcompactions, and every line is accounted for exactly once.
  const step = fc.oneof(
    fc.record({ kind: fc.constant('prompt' as const), text: fc.string({ maxLength: 12 }) }),
    fc.record({ kind: fc.constant('answer' as const), text: fc.string({ maxLength: 12 }), thinking: fc.boolean() }),
    fc.record({ kind: fc.constant('tool' as const), output: fc.string({ maxLength: 12 }) }),
    fc.record({ kind: fc.constant('compact' as const), summary: fc.string({ minLength: 1, maxLength: 12 }), withSummary: fc.boolean() }),
    fc.record({ kind: fc.constant('micro' as const), back: fc.nat({ max: 3 }) }),
    fc.record({ kind: fc.constant('noise' as const), what: fc.constantFrom('sidechain', 'meta', 'branch', 'malformed', 'system') }),
  );

  it('always imports to a valid rollout with every line accounted for', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        const lines: unknown[] = [user(1, null, 'start')];
        let n = 1;
        let last = 1;
        let tools = 0;
        const liveTools: string[] = [];
        let compactions = 0;
        let micros = 0;
        let cut = false;
        const add = (make: (n: number, parent: number) => unknown, onChain = true) => {
          n++;
          lines.push(make(n, last));
          if (onChain) last = n;
        };
        for (const s of steps) {
          if (s.kind === 'prompt') add((k, p) => user(k, p, s.text));
          else if (s.kind === 'answer') {
            add((k, p) => assistant(k, p, [...(s.thinking ? [{ type: 'thinking', thinking: 'hm' }] : []), txt(s.text)]));
          } else if (s.kind === 'tool') {
            const id = `t${++tools}`;
            add((k, p) => assistant(k, p, [use(id, 'Bash', { n: tools })]));
            add((k, p) => result(k, p, id, s.output));
            liveTools.push(id);
          } else if (s.kind === 'compact') {
            add((k, p) => boundary(k, p));
            if (s.withSummary) add((k, p) => summary(k, p, s.summary));
            compactions++;
            liveTools.length = 0;
          } else if (s.kind === 'micro') {
            const ids = liveTools.splice(Math.max(0, liveTools.length - 1 - s.back), 1);
            add((k, p) => micro(k, p, ids.length ? ids : ['gone']));
            if (ids.length) micros++;
          } else if (s.what === 'sidechain') add((k) => ({ ...user(k, null, 'sub'), isSidechain: true }), false);
          else if (s.what === 'meta') add((k, p) => user(k, p, 'caveat', { isMeta: true }));
          else if (s.what === 'branch') add((k, p) => user(k, p, 'abandoned'), false);
          else if (s.what === 'malformed')
            cut = true; // a session still being written: its last line cut
          else add((k, p) => rec(k, p, 'system', { subtype: 'turn_duration' }), false);
        }
        lines.push(user(n + 1, last, 'end'));
        const { rollout, report } = importAgentSessionText(jsonl(lines) + (cut ? '{"type":"user",' : ''));
        const valid = validateRollout(rollout, { file: 'random' });
        expect(valid.K).toBe(compactions + micros);
        expect(report.records).toBe(lines.length + (cut ? 1 : 0));
        expect(report.imported + report.skipped.reduce((k, s) => k + s.count, 0)).toBe(report.records);
      }),
      { numRuns: 300 },
    );
  });
});

describe('through the core reader (file loader, mw commands)', () => {
  it("is what the app's loader reads on drop: detected by content, its report naming the format", async () => {
    const { loadRolloutFile } = await import('../parse');
    const { formatFileReport } = await import('./report');
    const name = 'claude-code-2.1-session.jsonl';
    const file = await loadRolloutFile(readFixture(name), name);
    expect(file.rollouts.map((r) => [r.id, r.K])).toEqual([['7b1e4c2a-93d0-4f6e-a1b8-2c5d9e0f3a47', 2]]);
    expect(formatFileReport(file.report, name).split('\n')[0]).toBe(
      `${name}: agent-session: 31 records read, 25 imported -> 1 rollout, 24 events (1 microcompaction, 1 compaction)`,
    );
    // A file of a format mw does not read: the same one-line refusal as the CLI's.
    const other = `${JSON.stringify({ timestamp: 't', type: 'turn_start', payload: { id: 'x' } })}\n`;
    await expect(loadRolloutFile(other, 'rollout-x.jsonl')).rejects.toThrow(/^rollout-x\.jsonl: not a format mw reads; it reads: codex \(/);
  });

  it('detects the session by content, passes over a cut last line (still being written) and derives K = 3', async () => {
    const { parseRolloutFile } = await import('../parse');
    const [rollout] = parseRolloutFile(`${readFixture(TWO)}{"parentUuid":"00000034-5e55-4a11-8000-000000000034","type":"us`, TWO);
    const figures = deriveTree(rollout).figures;
    expect(figures.K).toBe(3);
    expect(figures.branches).toBe(4);
    expect(figures.divergingLeaves).toBe(36);
    expect((rollout.meta as { import: { problems: { line: number }[] } }).import.problems.map((p) => p.line)).toEqual([35]);
  });
});

describe('a Claude Code 2.1 session as it is written (parallel calls, rewind, microcompactions, a preserved segment)', () => {
  const CC = 'claude-code-2.1-session.jsonl';
  const text = readFixture(CC);
  const records = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const { rollout: json, report } = importAgentSessionText(text, { file: CC });
  const { rollout, events } = describeRollout(json);
  const appended = (role: string) => json.events.flatMap((e) => (e.op === 'append' && e.role === role ? [e.text as string] : []));
  const read = (file: string) => tool('Read', { file_path: `/home/ana/tidepool/${file}` });

  it('lands the results of three parallel tool calls as observations in the order of their tool_use blocks', () => {
    // One response written as four chained records (text, then three tool_use); each result hangs off its own
    // tool_use record and the results were written south, north, calibrate; the chain goes on from the last one.
    expect(events.slice(1, 9)).toEqual([
      ['act', 'I will read the three gauge files side by side.'],
      ['act', read('data/north.csv')],
      ['act', read('data/south.csv')],
      ['act', read('calibrate.py')],
      ['obs', 'time,level_cm\n06:00,201.7\n12:00,87.9\n18:00,204.2'],
      ['obs', 'time,level_cm\n06:00,212.4\n12:00,98.1\n18:00,215.0'],
      ['obs', 'OFFSET_CM = 0.0\ndef correct(level, day):\n    return level + OFFSET_CM + 0.03 * day'],
      ['act', 'calibrate.py adds 0.03 cm per day on top of the offset: that is the drift.'],
    ]);
    // Observations are never targets; the action after them is.
    const targetsIn = (i: number) => {
      const e = rollout.events[i] as { first: number; count: number };
      return rollout.targets.filter((t) => t >= e.first && t < e.first + e.count).length;
    };
    expect([5, 6, 7].map(targetsIn)).toEqual([0, 0, 0]);
    expect(targetsIn(8)).toBeGreaterThan(0);
  });

  it('imports the chain up to logicalParentUuid, then one edit that inserts the summary and keeps the preserved records, then what follows', () => {
    const boundary = records.findIndex((r) => r.subtype === 'compact_boundary');
    const segment = (records[boundary].compactMetadata as { preservedSegment: { headUuid: string; tailUuid: string } }).preservedSegment;
    expect(records[boundary].logicalParentUuid).toBe(segment.tailUuid);
    const compaction = events.filter((e) => !Array.isArray(e)).at(-1) as { edit: unknown[] };
    const at = events.indexOf(compaction);
    // The head (a call) and the tail (its result) were appended before the compaction, and are kept by it.
    expect(events[at - 2]).toEqual([
      'act',
      tool('Edit', { file_path: '/home/ana/tidepool/calibrate.py', old_string: 'OFFSET_CM = 0.0', new_string: 'OFFSET_CM = 0.0\nDRIFT_CM_PER_DAY = 0.03' }),
    ]);
    expect(events[at - 1]).toEqual(['obs', 'The file /home/ana/tidepool/calibrate.py has been updated.']);
    expect(compaction.edit).toEqual([{ insert: 'summary', text: expect.stringMatching(/^This session is being continued/) }, `e${at - 2}`, `e${at - 1}`]);
    expect(events.slice(at + 1).map((e) => (e as string[])[0])).toEqual(['prompt', 'act', 'obs', 'act']);
    // No action appended twice.
    const acts = appended('act');
    expect(new Set(acts).size).toBe(acts.length);
  });

  it('holds every tool_result text of the main chain, and one edit per compaction and per microcompaction that clears something', () => {
    const results = records.flatMap((r) =>
      r.type === 'user' && Array.isArray((r.message as { content: unknown }).content)
        ? (r.message as { content: { type: string; content: string }[] }).content.filter((b) => b.type === 'tool_result').map((b) => b.content)
        : [],
    );
    expect(results).toHaveLength(7);
    const obs = appended('obs');
    for (const r of results) expect(obs).toContain(r);
    const calls = new Set(
      records.flatMap(
        (r) =>
          (((r.message as { content?: unknown } | undefined)?.content as { type: string; id: string }[] | undefined) ?? [])
            .filter?.((b) => b.type === 'tool_use')
            .map((b) => b.id) ?? [],
      ),
    );
    const clearing = records.filter(
      (r) => r.subtype === 'microcompact_boundary' && (r.microcompactMetadata as { compactedToolIds: string[] }).compactedToolIds.some((id) => calls.has(id)),
    );
    const compactions = records.filter((r) => r.subtype === 'compact_boundary');
    expect([compactions.length, clearing.length]).toEqual([1, 1]);
    expect(rollout.K).toBe(compactions.length + clearing.length);
    expect(report.edits).toEqual({ microcompaction: 1, compaction: 1 });
  });

  it('reports the rest: the rewound branch, the sidechain, meta and synthetic records, a microcompaction of ids before the file', () => {
    expect(report.branches).toEqual([{ leafLine: 14, forkLine: 12, records: 2, messages: 2 }]);
    expect(report.skipped.map((s) => [s.reason, s.lines])).toEqual([
      ['meta (harness-injected, isMeta)', '10'],
      ['synthetic assistant message (not generated by the model)', '12'],
      ['not on the main chain', '13-14'],
      ['sidechain (sub-agent traffic)', '20'],
      ['microcompaction with nothing live to clear', '23'],
    ]);
    expect(report.problems).toEqual([
      { line: 23, reason: 'microcompaction: 1 of 1 compacted tool results are not in the live view (evicted, already cleared, or never imported)' },
    ]);
    expect(report.imported + report.skipped.reduce((k, s) => k + s.count, 0)).toBe(report.records);
  });

  it('streams to the same events, cut into any chunks (results read before their turn wait for it)', async () => {
    for (const size of [7, 4096]) {
      const streamed: EventJson[] = [];
      await streamAgentSession(chunkedSource(text, size), (e) => streamed.push(e), { file: CC });
      expect(streamed).toEqual(json.events);
    }
  });

  it('reads the same when the preserved records are written again after the summary, the head under it', () => {
    const b = records.findIndex((r) => r.subtype === 'compact_boundary');
    const { headUuid, anchorUuid, tailUuid } = (records[b].compactMetadata as { preservedSegment: Record<string, string> }).preservedSegment;
    const head = records.find((r) => r.uuid === headUuid)!;
    const tail = records.find((r) => r.uuid === tailUuid)!;
    const again = [...records.slice(0, b + 2), { ...head, parentUuid: anchorUuid }, tail, { ...records[b + 2], parentUuid: tailUuid }, ...records.slice(b + 3)];
    const { rollout: other, report: otherReport } = importAgentSessionText(jsonl(again), { file: CC });
    expect(other.events).toEqual(json.events);
    expect(otherReport.skipped.at(-1)).toEqual({ reason: 'duplicate uuid (an earlier record has it)', count: 2, lines: `${b + 3}-${b + 4}` });
  });
});
