// `mw import --tokenizer MODEL-FOLDER` of the text formats other than chats and agent sessions (Codex,
// Gemini both files, OpenHands, verl): each text piece is written as the model's chat template writes one
// message of its role (act as assistant, obs as tool, prompt and summary as user), the ids those of
// @huggingface/tokenizers; checked here against the template and the tokenizer libraries directly. A turns
// dump (TRL, slime, SkyRL, verl ids) carries token ids already: refused in one line.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventJson, Role } from '../rollout/format';
import { formats } from '../rollout/importers/detect';
import { fixturePath } from '../rollout/importers/testing';
import { parseRolloutFile } from '../rollout/parse';
import { THINK_TEMPLATE } from '../testing/chatShares';
import { writeFamilyFolder } from '../testing/familyFolders';
import { importCommand } from './import';
import { parseCommandArgs } from './shared';
import { treeCommand } from './tree';
import { tmpDir } from './subprocess.testing';

const dir = tmpDir('import-family');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const qwen3 = writeFamilyFolder(join(dir, 'qwen3'), 'qwen3', 2);

async function mwImport(argv: string[]) {
  let err = '';
  const code = await importCommand.run(parseCommandArgs(importCommand, argv), { out: () => {}, err: (t) => (err += t) });
  return { code, err };
}

// The oracle: the folder's template and tokenizer through the libraries, not through src/rollout/tokenizer-hf.ts.
const template = new Template(qwen3.chatTemplate);
const library = new LibraryTokenizer(
  JSON.parse(readFileSync(join(qwen3.dir, 'tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(join(qwen3.dir, 'tokenizer_config.json'), 'utf8')),
);
const encode = (text: string) => (text ? library.encode(text, { add_special_tokens: false }).ids : []);
const TEMPLATE_ROLE: Record<Role, string> = { prompt: 'user', obs: 'tool', act: 'assistant', summary: 'user' };

/** A piece as the template writes a message of its role after a first user turn: its opening (ids on their own), then text and closing. */
function pieceIds(role: Role, text: string): { open: number[]; rest: number[] } {
  const first = { role: 'user', content: 'x' };
  const before = template.render({ messages: [first], add_generation_prompt: false });
  const message = { role: TEMPLATE_ROLE[role], content: text, ...(role === 'obs' ? { tool_call_id: '0', name: 'tool' } : {}) };
  const after = template.render({ messages: [first, message], add_generation_prompt: false });
  let start = 0;
  while (before[start] === after[start]) start++;
  const at = text ? after.indexOf(text, start) : after.length - (after.endsWith('<|im_end|>\n') ? '<|im_end|>\n'.length : 0);
  return { open: encode(after.slice(start, at)), rest: encode(text + after.slice(at + text.length)) };
}

const tokensOf = (events: readonly EventJson[]) => events.flatMap((e) => (e.op === 'append' ? (e.tokens ?? []) : []));

const FIXTURES = [
  ['codex', 'codex-rollout-compacted.jsonl', 1],
  ['gemini', 'gemini-session.json', 1],
  ['gemini', 'gemini-session.jsonl', 1],
  ['openhands', 'openhands-condensation.json', 1],
  ['verl', 'verl-rollout-data-12.jsonl', 6],
] as const;

describe('mw import --tokenizer MODEL-FOLDER: Codex, Gemini, OpenHands, verl', () => {
  for (const [format, fixture, count] of FIXTURES) {
    it(`${fixture}: every text piece is the template's message of its role, in the library's ids; hf:qwen3, ids only`, async () => {
      const out = join(dir, `${fixture}.out.jsonl`);
      const { code, err } = await mwImport([fixturePath(fixture), '--tokenizer', qwen3.dir, '--out', out]);
      expect(code).toBe(0);
      expect(err).toContain(`wrote ${out}`);
      const written = readFileSync(out, 'utf8');
      expect(written).not.toContain('"text"');
      const rollouts = parseRolloutFile(written, out); // validated
      expect(rollouts.map((r) => [r.tokenizer, r.vocab])).toEqual(Array(count).fill(['hf:qwen3', 320]));
      // The importer's text pieces (the tokenizer registered by the import: spans sized in its ids).
      const row = formats.find((r) => r.name === format)!;
      if (row.kind !== 'file') throw new Error(format);
      const text = row.importer.readText(readFileSync(fixturePath(fixture), 'utf8'), fixture, { tokenizer: 'hf:qwen3' as never }).rollouts;
      expect(text).toHaveLength(count);
      let pieces = 0;
      written
        .trim()
        .split('\n')
        .forEach((line, r) => {
          const events: EventJson[] = JSON.parse(line).events;
          let j = 0;
          for (const e of text[r].value.events) {
            if (e.op === 'edit') {
              const got = events[j++];
              expect(got.op).toBe('edit');
              if (got.op !== 'edit') return;
              expect(got.view).toHaveLength(e.view.length);
              e.view.forEach((piece, k) => {
                if ('keep' in piece || piece.insert.text === undefined) expect(got.view[k]).toEqual(piece);
                else {
                  const { open, rest } = pieceIds(piece.insert.role, piece.insert.text);
                  expect(got.view[k]).toEqual({ insert: { role: piece.insert.role, tokens: [...open, ...rest] } });
                  pieces++;
                }
              });
            } else if (e.text === undefined) expect(events[j++]).toEqual(e);
            else {
              const { open, rest } = pieceIds(e.role, e.text);
              // An act piece: its opening a prompt append (never a target), its text and closing the act append.
              const split = e.role === 'act' && open.length > 0;
              const got = events.slice(j, j + (split ? 2 : 1));
              j += got.length;
              expect(got.map((g) => (g.op === 'append' ? g.role : 'edit'))).toEqual(split ? ['prompt', 'act'] : [e.role]);
              expect(tokensOf(got)).toEqual([...open, ...rest]);
              pieces++;
            }
          }
          expect(j).toBe(events.length);
        });
      expect(pieces).toBeGreaterThan(count);
      // Targets are what the model wrote and its end marker, never a role header.
      const targets = rollouts.flatMap((r) => Array.from(r.targets, (i) => r.tokens[i]));
      expect(targets.length).toBeGreaterThan(0);
      expect(targets).not.toContain(qwen3.ids.get('<|im_start|>'));
      expect(targets).toContain(qwen3.ids.get('<|im_end|>'));
    });
  }

  it("a turns dump (SkyRL generator output) keeps its ids and is named after the folder: hf:qwen3, the model's vocabulary", async () => {
    const file = fixturePath('skyrl-generator-output.json');
    // The fixture holds Qwen ids (up to 151,645): the tiny folder's vocabulary of 320 cannot read them, one line.
    await expect(mwImport([file, '--tokenizer', qwen3.dir, '--out', join(dir, 'skyrl-tiny.jsonl')])).rejects.toThrow(
      /skyrl-generator-output\.json:1: row 0: token id 151645 is outside the vocabulary of 320$/,
    );
    // A folder with Qwen3's vocabulary (config.json vocab_size 151,936) names them: the ids exactly as the trainer wrote them.
    const wide = writeFamilyFolder(join(dir, 'qwen3-wide'), 'qwen3', 2);
    const configFile = join(wide.dir, 'config.json');
    writeFileSync(configFile, JSON.stringify({ ...JSON.parse(readFileSync(configFile, 'utf8')), vocab_size: 151936 }));
    const out = join(dir, 'skyrl.jsonl');
    expect((await mwImport([file, '--tokenizer', wide.dir, '--out', out])).code).toBe(0);
    const named = parseRolloutFile(readFileSync(out, 'utf8'), 'skyrl.jsonl').map((r) => [r.tokenizer, r.vocab]);
    const plain = join(dir, 'skyrl-plain.jsonl');
    expect((await mwImport([file, '--out', plain])).code).toBe(0);
    const byIds = parseRolloutFile(readFileSync(plain, 'utf8'), 'skyrl-plain.jsonl');
    expect(named).toEqual(byIds.map(() => ['hf:qwen3-wide', 151936]));
    const strip = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const { tokenizer, vocab, ...rest } = JSON.parse(line);
          return rest;
        });
    expect(strip(readFileSync(out, 'utf8'))).toEqual(strip(readFileSync(plain, 'utf8')));
  });
});

describe('mw import --tokenizer MODEL-FOLDER: a chat under a template that hides earlier reasoning', () => {
  it("the template's edits recorded: mw tree shows K = 2 for three user queries, every answer's reasoning a target", async () => {
    // The Qwen3-shaped folder with a template that shows reasoning only after the last user query.
    const folder = join(dir, 'think');
    const think = writeFamilyFolder(folder, 'qwen3', 3);
    const configFile = join(think.dir, 'tokenizer_config.json');
    writeFileSync(configFile, JSON.stringify({ ...JSON.parse(readFileSync(configFile, 'utf8')), chat_template: THINK_TEMPLATE }));
    const messages = [
      { role: 'system', content: 'Be brief.' },
      ...['one', 'two', 'three'].flatMap((word, q) => [
        { role: 'user', content: `Say ${word}.` },
        { role: 'assistant', reasoning_content: `Query ${q + 1}.`, content: word },
      ]),
    ];
    const chat = join(dir, 'think-chat.jsonl');
    writeFileSync(chat, `${JSON.stringify({ messages })}\n`);
    const out = join(dir, 'think.out.jsonl');
    expect((await mwImport([chat, '--tokenizer', think.dir, '--out', out])).code).toBe(0);
    const [rollout] = parseRolloutFile(readFileSync(out, 'utf8'), out);
    let printed = '';
    expect(await treeCommand.run(parseCommandArgs(treeCommand, [out, '--json']), { out: (t) => (printed += t), err: () => {} })).toBe(0);
    expect(JSON.parse(printed)).toMatchObject([{ K: 2, branches: 3 }]);
    // Every answer's tokens are targets, reasoning included: the targets spell the three turns as each was written last.
    const targets = library.decode(
      Array.from(rollout.targets, (i) => rollout.tokens[i]),
      { skip_special_tokens: false },
    );
    const turn = (q: number, word: string) => `<think>\nQuery ${q}.\n</think>\n\n${word}<|im_end|>\n`;
    expect(targets).toBe(turn(1, 'one') + turn(2, 'two') + turn(3, 'three'));
  });
});
