// `mw import` end to end on files: format detection, the written JSONL read back by the core,
// the report on stderr, and no output file at all when the import fails.

import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../rollout/errors';
import { parseRolloutFile } from '../rollout/parse';
import { fixturePath } from '../rollout/importers/testing';
import { deriveTree } from '../tree/derive';
import { UsageError } from './command';
import { importCommand } from './import';
import { parseCommandArgs } from './shared';

const FIXTURE = (name: string) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));

async function mwImport(argv: string[]) {
  let out = '';
  let err = '';
  const code = await importCommand.run(parseCommandArgs(importCommand, argv), {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
  });
  return { code, out, err };
}

describe('mw import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mw-import-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('detects an agent session, writes one rollout the core reads (K = 3) and reports on stderr', async () => {
    const out = join(dir, 'session.jsonl');
    const { code, out: stdout, err } = await mwImport([fixturePath('agent-session-two-compactions.jsonl'), '--out', out]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(err).toContain('agent-session: 34 records read, 25 imported -> 1 rollout, 24 events (2 compactions, 1 microcompaction)');
    expect(err).toContain('skipped 2: sidechain (sub-agent traffic) [lines 9-10]');
    const text = readFileSync(out, 'utf8');
    expect(text.split('\n')).toHaveLength(2); // one line and the final newline
    const [rollout] = parseRolloutFile(text, out);
    expect(deriveTree(rollout).figures).toMatchObject({ K: 3, branches: 4, targets: 778, divergingLeaves: 36 });
    expect((rollout.meta as { import: { records: number } }).import.records).toBe(34);
  });

  it('detects chat JSONL and writes one rollout per conversation', async () => {
    const out = join(dir, 'chat.jsonl');
    const { err } = await mwImport([fixturePath('chat.jsonl'), '--out', out]);
    expect(err).toContain('chat: 6 records read, 3 imported -> 3 rollouts, 13 events');
    expect(parseRolloutFile(readFileSync(out, 'utf8'), out).map((r) => r.id)).toEqual(['chat-1', 'conv-2', 'chat-3']);
  });

  it('imports a calls log through the core importer, auto-detected or named', async () => {
    const expected = JSON.parse(readFileSync(FIXTURE('calls-example.expected.json'), 'utf8')) as { events: unknown };
    for (const from of ['auto', 'calls']) {
      const out = join(dir, `calls-${from}.jsonl`);
      const { err } = await mwImport([FIXTURE('calls-example.json'), '--from', from, '--out', out]);
      expect(err).toContain('1 rollout');
      expect((JSON.parse(readFileSync(out, 'utf8')) as { events: unknown }).events).toEqual(expected.events);
    }
  });

  it('fails with one clear error and leaves no file when the import fails', async () => {
    const input = join(dir, 'empty-session.jsonl');
    writeFileSync(input, `${JSON.stringify({ type: 'user', uuid: 'u1', parentUuid: null, isMeta: true, message: { role: 'user', content: 'x' } })}\n`);
    const out = join(dir, 'never.jsonl');
    await expect(mwImport([input, '--out', out])).rejects.toThrow(new ValidationError({ file: input }, 'no user or assistant messages on the main chain'));
    await expect(mwImport([fixturePath('chat.jsonl'), '--from', 'agent-session', '--out', out])).rejects.toThrow(
      /chat\.jsonl: not agent-session \(.*\): it looks like chat \(JSON lines, each/,
    );
    await expect(mwImport([join(dir, 'missing.jsonl'), '--out', out])).rejects.toThrow('missing.jsonl: no such file');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('refuses an unread format in one line, and --from X on a file of another format names the format it looks like', async () => {
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, `${JSON.stringify({ timestamp: 't', type: 'turn_start', payload: {} })}\n`.repeat(2));
    const out = join(dir, 'never.jsonl');
    await expect(mwImport([other, '--out', out])).rejects.toThrow(/other\.jsonl: not a format mw reads; it reads: codex \(/);
    await expect(mwImport([fixturePath('agent-session-stream.jsonl'), '--from', 'chat', '--out', out])).rejects.toThrow(
      /agent-session-stream\.jsonl: not chat \(.+\): it looks like agent-session \(JSON lines with "type" user/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('detects a pretty-printed document (Gemini file, OpenHands trajectory, SkyRL columns) and refuses --from X on it naming its format', async () => {
    const cases: [string, string, number][] = [
      ['gemini-session.json', 'gemini: 7 records read, 5 imported -> 1 rollout, 9 events', 1],
      ['openhands-condensation.json', 'openhands: 16 records read, 13 imported -> 1 rollout, 16 events (1 condensation)', 1],
      ['skyrl-generator-output.json', 'turns (skyrl fields): 3 records -> 3 rollouts (one per trajectory)', 3],
    ];
    for (const [name, head, n] of cases) {
      const out = join(dir, `${name}.out.jsonl`);
      const { code, err } = await mwImport([fixturePath(name), '--out', out]);
      expect(code).toBe(0);
      expect(err.split('\n')[0]).toBe(`${fixturePath(name)}: ${head}`);
      expect(parseRolloutFile(readFileSync(out, 'utf8'), out)).toHaveLength(n);
    }
    const out = join(dir, 'never-gemini.jsonl');
    await expect(mwImport([fixturePath('gemini-session.json'), '--from', 'chat', '--out', out])).rejects.toThrow(
      /gemini-session\.json: not chat \(.+\): it looks like gemini \(\{"sessionId"/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a session whose links are of the wrong type or loop, naming the line, and writes nothing', async () => {
    const rec = (n: number, parent: number | null) =>
      JSON.stringify({
        parentUuid: parent === null ? null : `u${parent}`,
        isSidechain: false,
        sessionId: 's',
        type: n % 2 ? 'user' : 'assistant',
        message: { role: n % 2 ? 'user' : 'assistant', content: `m${n}` },
        uuid: `u${n}`,
      });
    const cases: [string, string][] = [
      [`${rec(1, null)}\n${rec(2, 1).replace('"parentUuid":"u1"', '"parentUuid":7')}\n`, ':2: "parentUuid" must be a string or null, got 7'],
      [`${rec(1, null)}\n${rec(2, 1).replace('"isSidechain":false', '"isSidechain":"no"')}\n`, ':2: "isSidechain" must be true or false, got "no"'],
      [`${rec(1, null)}\n${rec(2, 1).replace(/"message":\{[^}]*\}/, '"message":"hi"')}\n`, ':2: "message" must be an object, got "hi"'],
      [`${rec(1, 3)}\n${rec(2, 1)}\n${rec(3, 2)}\n`, ':3: parentUuid links form a loop through uuid "u3"'],
    ];
    for (const [i, [text, reason]] of cases.entries()) {
      const input = join(dir, `bad-session-${i}.jsonl`);
      writeFileSync(input, text);
      const out = join(dir, `bad-session-${i}.out.jsonl`);
      const error = await mwImport([input, '--out', out]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(`${input}${reason}`);
      expect((error as Error).message.split('\n')).toHaveLength(1);
      expect(existsSync(out)).toBe(false);
    }
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('refuses a command line without --out or with an unknown format', async () => {
    await expect(mwImport([fixturePath('chat.jsonl')])).rejects.toThrow(new UsageError('--out OUT.jsonl is required'));
    await expect(mwImport([fixturePath('chat.jsonl'), '--from', 'xml', '--out', join(dir, 'x.jsonl')])).rejects.toThrow(
      'unknown format "xml" (auto, codex, gemini, openhands, verl, agent-session, chat, turns, calls, rollout)',
    );
  });
});

describe('mw import of a chat log whose first conversation is longer than any sniffing window', () => {
  it('detects chat from the whole first line (no whole-file fallback) and imports every line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-import-long-'));
    const long = JSON.stringify({
      messages: [
        { role: 'user', content: 'q'.repeat(300 * 1024) },
        { role: 'assistant', content: 'a' },
      ],
    });
    const file = join(dir, 'chat.jsonl');
    writeFileSync(
      file,
      `${long}\n${JSON.stringify({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'yo' },
        ],
      })}\n`,
    );
    const out = join(dir, 'out.jsonl');
    const { code, err } = await mwImport([file, '--out', out]);
    expect(code).toBe(0);
    expect(err).toContain('chat: 2 records read, 2 imported -> 2 rollouts');
    expect(parseRolloutFile(readFileSync(out, 'utf8'), 'out.jsonl').map((r) => r.targets.length)).toEqual([1, 2]);
    rmSync(dir, { recursive: true, force: true });
  });
});
