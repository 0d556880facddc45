// The gpt2 tokenizer: GPT-2's published ids, exact round trips of any UTF-8 text (characters split
// across tokens included), role markers that are never targets, and readable token text.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GPT2_MARKER_TEXT, GPT2_VOCAB, gpt2TokenBytes, gpt2Tokenizer, visibleText } from './gpt2';
import { ROLES } from './format';
import { loadTokenizer, byteTokenizer, tokenText, tokenizerForVocab } from './tokenizer';
import { validateRollout } from './validate';

// The registry loads gpt2's ranks on first use (a dynamic import); validating and labelling gpt2 text needs them.
await loadTokenizer('gpt2');

const tk = gpt2Tokenizer;
const utf8 = (s: string) => Array.from(new TextEncoder().encode(s));
const bytesOf = (tokens: number[]) => tokens.flatMap((t) => Array.from(gpt2TokenBytes(t)));

/** Any well-formed text: every code point, astral planes and controls included. */
const anyText = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !/\p{Cs}/u.test(s)); // no lone surrogates: they are no UTF-8
/** Characters GPT-2 has no single token for: they are split into byte tokens. */
const rareText = fc.array(fc.constantFrom('😀', '𝔘', '鱻', '龘', '\u{1F9EC}', 'ẞ', '\u{10348}', 'ﷺ'), { minLength: 1, maxLength: 8 }).map((a) => a.join(''));

describe('gpt2 tokenizer (r50k_base)', () => {
  it("gives GPT-2's ids", () => {
    expect(tk.encode('Hello world')).toEqual([15496, 995]);
    expect(tk.encode(' world')).toEqual([995]);
    expect(tk.decode([15496, 995])).toBe('Hello world');
    expect(tk.vocab).toBe(GPT2_VOCAB);
    expect(GPT2_VOCAB).toBe(50257);
  });

  it('round-trips any UTF-8 text exactly, bytes and all', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, rareText, fc.string({ unit: 'grapheme', maxLength: 30 })), (text) => {
        const tokens = tk.encode(text);
        for (const t of tokens) expect(t >= 0 && t < GPT2_VOCAB).toBe(true);
        expect(bytesOf(tokens)).toEqual(utf8(text));
        expect(tk.decode(tokens)).toBe(text);
      }),
      { numRuns: 400 },
    );
  });

  it('splits a character it has no token for across tokens, and still round-trips it', () => {
    fc.assert(
      fc.property(rareText, (text) => {
        const tokens = tk.encode(text);
        // Some token holds only part of a character: its bytes are not UTF-8 on their own.
        expect(tokens.some((t) => tokenText(tk, t).includes('\\x'))).toBe(true);
        expect(tk.decode(tokens)).toBe(text);
      }),
      { numRuns: 100 },
    );
    expect(tk.encode('😀').map((t) => tokenText(tk, t))).toEqual(['\\xf0\\x9f\\x98', '\\x80']);
  });

  it('encodes "<|endoftext|>" in a transcript as the characters it is', () => {
    const tokens = tk.encode('a<|endoftext|>b');
    expect(tokens).not.toContain(50256);
    expect(tk.decode(tokens)).toBe('a<|endoftext|>b');
  });

  it('opens every text piece with its role marker: plain GPT-2 tokens, one text per role', () => {
    expect(tk.marker('prompt')).toEqual([198, 198, 12982, 25, 198]); // "\n", "\n", "User", ":", "\n"
    expect(tk.marker('act')).toEqual([198, 198, 48902, 25, 198]); // ... "Assistant" ...
    expect(new Set(ROLES.map((r) => tk.marker(r).join(','))).size).toBe(ROLES.length);
    for (const role of ROLES) {
      expect(tk.decode(tk.encodePiece('Hi there', role))).toBe(`${GPT2_MARKER_TEXT[role]}Hi there`);
      expect(tk.encodePiece('Hi there', role).slice(tk.marker(role).length)).toEqual(tk.encode('Hi there'));
    }
    fc.assert(
      fc.property(anyText, fc.constantFrom(...ROLES), (text, role) => {
        expect(tk.pieceLength(text, role)).toBe(tk.encodePiece(text, role).length);
      }),
      { numRuns: 200 },
    );
  });

  it('shows tokens as their word pieces, control bytes visible', () => {
    expect(tk.encode('Hello world\n\tok').map((t) => tokenText('gpt2', t))).toEqual(['Hello', ' world', '\\n', '\\t', 'ok']);
    expect(tokenText(tk, 50256)).toBe('<|endoftext|>');
    expect(visibleText(new Uint8Array([0x00, 0x7f, 0xc2, 0x85, 0xe6, 0x97]))).toBe('\\x00\\x7f\\u0085\\xe6\\x97');
    expect(tokenText('byte', 10)).toBe('\\x0a');
    expect(tokenText(byteTokenizer, 260)).toBe('<act>');
    expect(tokenText('no-such-tokenizer', 7)).toBe('#7');
    expect(() => tokenText(tk, GPT2_VOCAB)).toThrow(/outside the vocabulary of 50257/);
  });

  it('names the tokenizer a vocabulary belongs to', () => {
    expect(tokenizerForVocab(50257)).toBe('gpt2');
    expect(tokenizerForVocab(272)).toBe('byte');
    expect(tokenizerForVocab(64)).toBe('byte');
  });
});

describe('a gpt2 rollout', () => {
  it('scores the text of an act piece, not its 5 marker tokens, and keeps their logprobs', () => {
    const prompt = tk.encodePiece('Hello world', 'prompt');
    const act = tk.encodePiece('Hi there!', 'act');
    const logprobs = act.map((_, i) => -0.5 - i);
    const r = validateRollout(
      {
        format: 'memorywalker.rollout/v1',
        id: 'g',
        vocab: GPT2_VOCAB,
        tokenizer: 'gpt2',
        events: [
          { op: 'append', role: 'prompt', text: 'Hello world' },
          { op: 'append', role: 'act', text: 'Hi there!', logprobs },
        ],
      },
      { file: 'g.json' },
    );
    expect(Array.from(r.tokens)).toEqual([...prompt, ...act]);
    const firstTarget = prompt.length + 5;
    expect(Array.from(r.targets)).toEqual(Array.from({ length: act.length - 5 }, (_, i) => firstTarget + i));
    expect(Array.from(r.targets, (id) => tokenText(tk, r.tokens[id]))).toEqual(['Hi', ' there', '!']);
    expect(Array.from(r.logprobs.subarray(prompt.length))).toEqual(logprobs);
  });

  it('is refused with a vocabulary too small for its text', () => {
    expect(() =>
      validateRollout(
        { format: 'memorywalker.rollout/v1', id: 'g', vocab: 272, tokenizer: 'gpt2', events: [{ op: 'append', role: 'prompt', text: 'Hello' }] },
        { file: 'g.json' },
      ),
    ).toThrow('g.json: event 0: append: text encodes to token 12982, outside [0, 272)');
  });
});
