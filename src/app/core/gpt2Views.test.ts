// GPT-2 word pieces in the views (issue 22): the panes decode a token's bytes (a character split over
// two word pieces reads whole, as one glyph of both tokens), the staircase cell shows the piece
// without its leading space and the tooltip quotes it with it, the inspector names a piece that
// holds part of a character as such, and <|endoftext|> is a special token.
import { describe, expect, it } from 'vitest';
import { loadTokenizer, validateRollout } from '../../rollout';
import { tokenDescription } from './contextModel';
import { decodeTokens, GLYPH, tokenPiece } from './contextText';
import { buildViewData, tokenDisplay, tokenGlyph } from './viewData';

const gpt2 = (await loadTokenizer('gpt2'))!;
const text = 'Hello world 😀!\n';
const tokens = [...gpt2.encode(text), 50256];

describe('GPT-2 tokens as text', () => {
  it('decodes word pieces to their exact text, a split character as one glyph of its two tokens', () => {
    expect(tokens.map((t) => gpt2.label(t))).toEqual(['Hello', ' world', ' \\xf0\\x9f\\x98', '\\x80', '!', '\\n', '<|endoftext|>']);
    const glyphs = decodeTokens(gpt2, tokens);
    expect(glyphs.map((g) => g.shown).join('')).toBe('Hello world 😀!⏎<|endoftext|>');
    const emoji = glyphs.find((g) => g.shown === '😀')!;
    expect([emoji.first, emoji.end]).toEqual([2, 4]); // the bytes of 😀 lie in tokens 2 and 3
    expect(glyphs.filter((g) => g.first === 1).map((g) => g.shown)).toEqual([' ', 'w', 'o', 'r', 'l', 'd']);
    expect(glyphs.at(-1)!.kind).toBe(GLYPH.special);
    expect(tokenPiece(gpt2, 50256)).toBe('<|endoftext|>');
    expect(Array.from(tokenPiece(gpt2, 995) as Uint8Array)).toEqual(Array.from(new TextEncoder().encode(' world')));
  });
});

describe('GPT-2 tokens in the staircase, the tooltips and the inspector', () => {
  const rollout = validateRollout(
    {
      format: 'memorywalker.rollout/v1',
      id: 'g',
      vocab: 50257,
      tokenizer: 'gpt2',
      events: [
        { op: 'append', role: 'prompt', tokens: tokens.slice(0, 1) },
        { op: 'append', role: 'act', tokens: tokens.slice(1) },
      ],
    },
    { file: 'g.json' },
  );
  const view = buildViewData(rollout);

  it('a cell shows the piece without its leading space, a line break as ⏎, nothing for part of a character or a special', () => {
    expect(Array.from(rollout.tokens, (_, id) => tokenGlyph(view, id))).toEqual(['Hello', 'world', null, null, '!', '⏎', null]);
  });

  it('a tooltip quotes the piece with its space; escapes and specials as the tokenizer names them', () => {
    expect(Array.from(rollout.tokens, (_, id) => tokenDisplay(view, id))).toEqual([
      '“Hello”',
      '“ world”',
      ' \\xf0\\x9f\\x98',
      '\\x80',
      '“!”',
      '\\n',
      '<|endoftext|>',
    ]);
  });

  it('the inspector says what each token is', () => {
    expect(tokenDescription(view, 1)).toBe('“ world”');
    expect(tokenDescription(view, 3)).toBe('\\x80 token (part of a character)');
    expect(tokenDescription(view, 5)).toBe('⏎ newline');
    expect(tokenDescription(view, 6)).toBe('<|endoftext|> special token');
  });
});
