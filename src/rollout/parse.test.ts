// Reading files: JSON vs JSONL, line numbers in errors, unique ids, format dispatch, the
// importer registry, and the round trip back to v1 JSON.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from './errors';
import { generateRandomRollout } from './generate-random';
import { formats } from './importers/detect';
import { parseRolloutFile, readRolloutFile } from './parse';
import { rolloutToJson, stringifyRollout, stringifyRollouts } from './serialize';
import { validateRollout } from './validate';

const WORKED = fileURLToPath(new URL('../../fixtures/worked-example.json', import.meta.url));
const workedText = readFileSync(WORKED, 'utf8');
const line = (id: string, events: unknown[] = [{ op: 'append', role: 'prompt', tokens: [1] }]) =>
  JSON.stringify({ format: 'memorywalker.rollout/v1', id, vocab: 272, events });

function errorOf(text: string, file: string): ValidationError {
  try {
    parseRolloutFile(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('readRolloutFile', () => {
  it('reads a .json file as one rollout', () => {
    const file = readRolloutFile(workedText, 'worked-example.json');
    expect(file.layout).toBe('json');
    expect(file.rollouts.map((r) => [r.id, r.length, r.source])).toEqual([['worked-example', 17, { file: 'worked-example.json' }]]);
  });

  it('reads JSONL in file order, skipping blank lines, with 1-based lines', () => {
    const file = readRolloutFile(`${line('a')}\n\n${line('b')}\n${line('c')}\n`, 'set.jsonl');
    expect(file.layout).toBe('jsonl');
    expect(file.rollouts.map((r) => [r.id, r.source.line])).toEqual([
      ['a', 1],
      ['b', 3],
      ['c', 4],
    ]);
  });

  it('recognises JSONL by content when the name does not say', () => {
    expect(readRolloutFile(`${line('a')}\n${line('b')}`, 'set.txt').layout).toBe('jsonl');
    expect(readRolloutFile(line('a'), 'one.jsonl').layout).toBe('jsonl');
  });

  it('names the JSONL line and event of a violation, and loads nothing', () => {
    const bad = line('b', [
      { op: 'append', role: 'prompt', tokens: [1] },
      { op: 'append', role: 'act', tokens: [999] },
    ]);
    const e = errorOf(`${line('a')}\n${bad}\n${line('c')}`, 'set.jsonl');
    expect([e.file, e.line, e.event]).toEqual(['set.jsonl', 2, 1]);
    expect(e.message).toBe('set.jsonl:2: event 1: append: tokens[0] = 999 is not a token id in [0, 272)');
  });

  it('reports JSON syntax errors with the line for JSONL', () => {
    const e = errorOf(`${line('a')}\n{"format": \n`, 'set.jsonl');
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/^set\.jsonl:2: invalid JSON \(.+\)$/);
    expect(errorOf('{"format":', 'one.json').message).toMatch(/^one\.json: invalid JSON \(.+\)$/);
  });

  it('requires ids unique in their file', () => {
    const e = errorOf(`${line('a')}\n${line('b')}\n${line('a')}`, 'set.jsonl');
    expect(e.message).toBe('set.jsonl:3: id "a" is not unique in its file (also on line 1)');
  });

  it('rejects empty files, non-objects and unknown formats', () => {
    expect(errorOf('  \n', 'x.json').message).toBe('x.json: file is empty');
    expect(errorOf('[1, 2]', 'x.json').message).toBe('x.json: expected a rollout object, got [1,2]');
    expect(errorOf('{"format": "other/v9"}', 'x.json').message).toBe('x.json: unknown format "other/v9"');
    expect(errorOf('{"id": "x"}', 'x.json').message).toBe('x.json: missing "format" (expected "memorywalker.rollout/v1")');
  });

  it('refuses a file no format of the table identifies with one line listing each format and what identifies it', () => {
    // A rollout log of some other agent: records of its own shape, no `format`, no v1 field.
    const other = `${JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type: 'turn_start', payload: { cwd: '/x' } })}\n`;
    const e = errorOf(other.repeat(3), 'other.jsonl');
    expect(e.line).toBeUndefined();
    expect(e.message.split('\n')).toHaveLength(1);
    expect(e.message).toMatch(
      /^other\.jsonl: not a format mw reads; it reads: codex \(.+\); gemini \(.+\); openhands \(.+\); verl \(.+\); agent-session \(.+\); chat \(.+\); turns \(.+\); calls \(.+\); rollout \(records with "format": "memorywalker\.rollout\/v1"\)/,
    );
    for (const row of formats) expect(e.message).toContain(`${row.name} (${row.identifiedBy})`);
    // The same refusal for one pretty-printed JSON document (an array of another tool's steps).
    expect(errorOf(JSON.stringify([{ step: 1, tool: 'shell', output: 'ok' }], null, 2), 'events.json').message).toMatch(
      /^events\.json: not a format mw reads; /,
    );
  });

  it('imports memorywalker.calls/v1 records, also mixed with v1 lines', () => {
    const calls = JSON.stringify({ format: 'memorywalker.calls/v1', id: 'c', vocab: 272, calls: [{ input: [1], output: [2] }] });
    const rollouts = parseRolloutFile(`${line('a')}\n${calls}`, 'mixed.jsonl');
    expect(rollouts.map((r) => [r.id, r.length, Array.from(r.targets)])).toEqual([
      ['a', 1, []],
      ['c', 2, [1]],
    ]);
    const e = errorOf(JSON.stringify({ format: 'memorywalker.calls/v1', id: 'c', vocab: 272, calls: 3 }), 'c.json');
    expect(e.message).toBe('c.json: calls must be an array, got 3');
  });
});

describe('importer registry', () => {
  const registered = [...formats];
  afterEach(() => void formats.splice(0, formats.length, ...registered));

  it('takes a whole-file importer with one line, tried before per-record dispatch', () => {
    formats.unshift({
      kind: 'file',
      name: 'test-chat',
      identifiedBy: 'records with "message"',
      importer: {
        name: 'test-chat',
        detect: (sample) => sample.every((v) => typeof v === 'object' && v !== null && 'message' in v),
        readText: (text) => ({
          rollouts: [
            {
              value: {
                format: 'memorywalker.rollout/v1',
                id: 'chat',
                vocab: 272,
                events: text
                  .trim()
                  .split('\n')
                  .map((line) => ({ op: 'append', role: 'obs', text: String((JSON.parse(line) as { message: string }).message) })),
              },
            },
          ],
          report: { kind: 'core', rollouts: 1 },
        }),
      },
    });
    const [r] = parseRolloutFile('{"message": "hi"}\n{"message": "yo"}\n', 'chat.jsonl');
    expect(Array.from(r.tokens)).toEqual([259, 104, 105, 259, 121, 111]);
    expect(parseRolloutFile(workedText, 'w.json')[0].id).toBe('worked-example');
  });
});

describe('serialization back to v1', () => {
  it('round-trips the worked example exactly', () => {
    const [r] = parseRolloutFile(workedText, WORKED);
    expect(rolloutToJson(r)).toEqual(JSON.parse(workedText));
    expect(JSON.parse(stringifyRollout(r))).toEqual(JSON.parse(workedText));
  });

  it('round-trips random rollouts (text pieces, unknown fields) to the same tape', () => {
    for (let seed = 0; seed < 200; seed++) {
      const json = { ...generateRandomRollout({ seed, size: 'medium' }), extraField: [seed] };
      const r = validateRollout(json, { file: 'x' });
      expect(rolloutToJson(r)).toEqual(json);
      const [again] = parseRolloutFile(stringifyRollouts([r]), 'x.jsonl');
      expect(again.tokens).toEqual(r.tokens);
      expect(again.roles).toEqual(r.roles);
      expect(again.logprobs).toEqual(r.logprobs);
      expect(again.extra).toEqual({ extraField: [seed] });
    }
  });
});
