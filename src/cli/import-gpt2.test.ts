// `mw import --tokenizer gpt2` end to end: chat and agent-session logs become rollouts of GPT-2 word
// pieces whose every count (`mw tree`) is what GPT-2's tokenizer makes of their text, and whose
// views hold the same text as the byte import of the same log, edits included.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode as gpt2Encode } from 'gpt-tokenizer/encoding/r50k_base';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventJson, RolloutJson } from '../rollout/format';
import { GPT2_MARKER_TEXT, gpt2Tokenizer } from '../rollout/gpt2';
import { fixturePath } from '../rollout/importers/testing';
import { parseRolloutFile } from '../rollout/parse';
import { loadTokenizer, ROLE_MARKER, byteTokenizer, tokenText } from '../rollout/tokenizer';
import { deriveTree } from '../tree/derive';
import { WORKED, mw, tmpDir } from './subprocess.testing';

// The registry loads gpt2's ranks on first use (a dynamic import); validating and labelling gpt2 text needs them.
await loadTokenizer('gpt2');

const dir = tmpDir('import-gpt2');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** GPT-2's own count for a text piece: its 5 marker tokens and the text's tokens (the library itself, not our tokenizer). */
const pieceCount = (text: string) => 5 + gpt2Encode(text, { disallowedSpecial: new Set() }).length;

/** Tokens every text piece of a v1 rollout creates, as the file describes them. */
function countTokens(events: EventJson[]): { length: number; targets: number } {
  let length = 0;
  let targets = 0;
  for (const e of events) {
    if (e.op === 'append') {
      length += e.text !== undefined ? pieceCount(e.text) : e.tokens.length;
      if (e.role === 'act') targets += e.text !== undefined ? pieceCount(e.text) - 5 : e.tokens.length;
    } else for (const p of e.view) if ('insert' in p) length += p.insert.text !== undefined ? pieceCount(p.insert.text) : p.insert.tokens.length;
  }
  return { length, targets };
}

async function importWith(fixture: string, tokenizer: string): Promise<string> {
  const out = join(dir, `${fixture}.${tokenizer}.jsonl`);
  const run = await mw(['import', fixturePath(fixture), '--tokenizer', tokenizer, '--out', out]);
  expect(run.code, run.stderr).toBe(0);
  return out;
}

describe('mw import --tokenizer gpt2', () => {
  it('turns a chat log into word-piece tokens that mw tree counts as GPT-2 does', async () => {
    const out = await importWith('chat.jsonl', 'gpt2');
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutJson);
    expect(lines.map((r) => [r.tokenizer, r.vocab])).toEqual([
      ['gpt2', 50257],
      ['gpt2', 50257],
      ['gpt2', 50257],
    ]);

    const tree = await mw(['tree', out, '--json']);
    expect(tree.code, tree.stderr).toBe(0);
    const figures = JSON.parse(tree.stdout) as { physicalLength: number; targets: number }[];
    expect(figures.map((f) => [f.physicalLength, f.targets])).toEqual(lines.map((r) => Object.values(countTokens(r.events))));
    // The first conversation: system, user, assistant "4".
    expect(figures[0]).toMatchObject({ physicalLength: pieceCount('You are a calculator.') + pieceCount('2+2?') + pieceCount('4'), targets: 1 });

    const rollouts = parseRolloutFile(readFileSync(out, 'utf8'), out);
    const targetText = (i: number) => Array.from(rollouts[i].targets, (id) => tokenText('gpt2', rollouts[i].tokens[id]));
    expect(targetText(0)).toEqual(['4']);
    // conv-2: the tool call as JSON, then the answer, in GPT-2's word pieces.
    expect(targetText(1).slice(-6)).toEqual(['18', ' °', 'C', ' in', ' Paris', '.']);
    expect(targetText(1).join('')).toBe('{"name":"get_weather","arguments":{"city":"Paris"}}18 °C in Paris.');
  });

  it('imports an agent session with its compactions: the same views as the byte import, in GPT-2 tokens', async () => {
    const [byteOut, gptOut] = [
      await importWith('agent-session-two-compactions.jsonl', 'byte'),
      await importWith('agent-session-two-compactions.jsonl', 'gpt2'),
    ];
    const [byteRollout] = parseRolloutFile(readFileSync(byteOut, 'utf8'), byteOut);
    const [gptRollout] = parseRolloutFile(readFileSync(gptOut, 'utf8'), gptOut);
    const gptJson = JSON.parse(readFileSync(gptOut, 'utf8')) as RolloutJson;

    const tree = await mw(['tree', gptOut, '--json']);
    const [figures] = JSON.parse(tree.stdout) as { K: number; physicalLength: number; targets: number }[];
    expect({ K: figures.K, length: figures.physicalLength, targets: figures.targets }).toEqual({ K: 3, ...countTokens(gptJson.events) });

    // Every branch (what the policy saw before each edit) reads the same in both tokenizers.
    const markerText = new Map(Object.entries(ROLE_MARKER).map(([role, id]) => [id, GPT2_MARKER_TEXT[role as keyof typeof GPT2_MARKER_TEXT]]));
    const byteText = (ids: Int32Array) => {
      let text = '';
      let run: number[] = [];
      const flush = () => ((text += byteTokenizer.decode(run)), (run = []));
      for (const id of ids) {
        const t = byteRollout.tokens[id];
        if (markerText.has(t)) flush(), (text += markerText.get(t));
        else run.push(t);
      }
      flush();
      return text;
    };
    const [byteTree, gptTree] = [deriveTree(byteRollout), deriveTree(gptRollout)];
    expect(gptTree.K).toBe(byteTree.K);
    for (let k = 0; k <= gptTree.K; k++) {
      const gptText = gptTokenizerText(gptRollout.tokens, gptTree.branchIds(k));
      expect(gptText).toBe(byteText(byteTree.branchIds(k)));
    }
    expect(gptTree.figures.divergingLeaves).toBeGreaterThan(0);
  });

  it('refuses an unknown tokenizer, and a tokenizer for a file the core reads as it is', async () => {
    const run = await mw(['import', fixturePath('chat.jsonl'), '--tokenizer', 'llama', '--out', join(dir, 'x.jsonl')]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('unknown tokenizer "llama" (byte, gpt2, or a model folder with a tokenizer.json)');
    const worked = await mw(['import', WORKED, '--tokenizer', 'gpt2', '--out', join(dir, 'y.jsonl')]);
    expect(worked).toMatchObject({ code: 1, stdout: '' });
    expect(worked.stderr).toContain(`--tokenizer applies to imports of text; ${WORKED} is read by the core as it is`);
  });

  it('names the tokenizer of a calls log: its text is encoded by it, and a file naming another one is refused', async () => {
    const calls = {
      format: 'memorywalker.calls/v1',
      id: 'c',
      vocab: 50257,
      calls: [
        { input: 'User: Hello world\nAssistant:', output: ' Hi there' },
        { input: 'User: Hello world\nAssistant: Hi there\nUser: Bye\nAssistant:', output: ' Bye!' },
      ],
    };
    const input = join(dir, 'calls.json');
    writeFileSync(input, JSON.stringify(calls));
    const out = join(dir, 'calls.gpt2.jsonl');
    const run = await mw(['import', input, '--tokenizer', 'gpt2', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const [rollout] = parseRolloutFile(readFileSync(out, 'utf8'), out);
    expect(rollout.tokenizer).toBe('gpt2');
    expect(Array.from(rollout.targets, (id) => tokenText('gpt2', rollout.tokens[id]))).toEqual([' Hi', ' there', ' Bye', '!']);
    expect(rollout.K).toBe(0); // the second input extends the first view: an append, no edit

    writeFileSync(input, JSON.stringify({ ...calls, tokenizer: 'byte' }));
    const refused = await mw(['import', input, '--tokenizer', 'gpt2', '--out', out + '.2']);
    expect(refused).toEqual({ code: 2, stdout: '', stderr: `${input}: the file's tokenizer is "byte", the import asks for "gpt2"\n` });
  });
});

function gptTokenizerText(tokens: Int32Array, ids: Int32Array): string {
  return gpt2Tokenizer.decode(Array.from(ids, (id) => tokens[id]));
}
