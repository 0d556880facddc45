// Token values as readable text: UTF-8 decoded across byte tokens (and the glyph knows every
// token it came from), stray bytes shown as \xNN, control and invisible characters as marks,
// special tokens by name, and copied text that gives back what was written.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteTokenizer } from '../../rollout';
import { decodeTokens, glyphsText, GLYPH, markOf, tokenLabelText } from './contextText';

const bytes = (s: string) => Array.from(new TextEncoder().encode(s));
const shown = (values: number[]) => decodeTokens(byteTokenizer, values).map((g) => g.shown);
const spans = (values: number[]) => decodeTokens(byteTokenizer, values).map((g) => [g.first, g.end]);

describe('UTF-8 across byte tokens', () => {
  it('reads a character split over 2, 3 and 4 tokens as one glyph spanning them', () => {
    const values = bytes('é✓😀a'); // c3 a9 | e2 9c 93 | f0 9f 98 80 | 61
    expect(values).toEqual([0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xf0, 0x9f, 0x98, 0x80, 0x61]);
    expect(shown(values)).toEqual(['é', '✓', '😀', 'a']);
    expect(spans(values)).toEqual([
      [0, 2],
      [2, 5],
      [5, 9],
      [9, 10],
    ]);
  });

  it('shows bytes that start or continue no character as \\xNN glyphs of their own token', () => {
    // A lead byte cut short by ASCII, a lone continuation, a byte UTF-8 never uses.
    expect(shown([0xc3, 0x41, 0xa9, 0xff])).toEqual(['\\xc3', 'A', '\\xa9', '\\xff']);
    expect(decodeTokens(byteTokenizer, [0xc3, 0x41]).map((g) => g.kind)).toEqual([GLYPH.invalid, GLYPH.text]);
    // Overlong (c0 80), a UTF-16 surrogate (ed a0 80), beyond U+10FFFF (f4 90 80 80).
    expect(shown([0xc0, 0x80])).toEqual(['\\xc0', '\\x80']);
    expect(shown([0xed, 0xa0, 0x80])).toEqual(['\\xed', '\\xa0', '\\x80']);
    expect(shown([0xf4, 0x90, 0x80, 0x80])).toEqual(['\\xf4', '\\x90', '\\x80', '\\x80']);
    // A sequence cut by the end of the run: each byte at its own token.
    expect(spans([0x61, 0xe2, 0x9c])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
  });

  it('names special tokens, which end any character being read', () => {
    expect(shown([260, 0x48, 0x69])).toEqual(['<act>', 'H', 'i']);
    expect(shown([0xc3, 261, 0xa9])).toEqual(['\\xc3', '<summary>', '\\xa9']);
    expect(decodeTokens(byteTokenizer, [256, 258]).map((g) => [g.shown, g.kind])).toEqual([
      ['<bos>', GLYPH.special],
      ['<prompt>', GLYPH.special],
    ]);
  });

  it('gives back any text, glyph by glyph, covering every token once in order', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const values = bytes(text);
        const glyphs = decodeTokens(byteTokenizer, values);
        expect(glyphs.map((g) => g.raw).join('')).toBe(text);
        let at = 0;
        for (const g of glyphs) {
          expect(g.first).toBe(at);
          expect(g.end).toBeGreaterThan(g.first);
          at = g.end;
        }
        expect(at).toBe(values.length);
      }),
    );
  });
});

describe('marks for control and invisible characters', () => {
  it('marks newline, tab, carriage return, C0 controls and DEL, and breaks the line after a newline', () => {
    expect(shown(bytes('a\nb\tc\rd'))).toEqual(['a', '⏎', 'b', '→', 'c', '␍', 'd']);
    expect(decodeTokens(byteTokenizer, bytes('a\nb')).map((g) => g.breaks)).toEqual([false, true, false]);
    expect(shown([0x18, 0x00, 0x1b, 0x7f])).toEqual(['\\x18', '\\x00', '\\x1b', '\\x7f']);
    expect(decodeTokens(byteTokenizer, [0x18]).map((g) => g.kind)).toEqual([GLYPH.mark]);
  });

  it('marks invisible Unicode (no-break space, zero-width space, BOM, C1) with ·, keeps a plain space', () => {
    for (const ch of ['\u00a0', '\u200b', '\ufeff', '\u0085', '\u2028']) expect(markOf(ch)).toEqual({ shown: '·', mark: true });
    expect(markOf(' ')).toEqual({ shown: ' ', mark: false });
    expect(markOf('é')).toEqual({ shown: 'é', mark: false });
  });

  it('copies text as written: newlines and tabs real, control bytes and stray bytes escaped, specials named', () => {
    expect(glyphsText(decodeTokens(byteTokenizer, [260, ...bytes('a\tb\n'), 0x18, 0xff]))).toBe('<act>a\tb\n\\x18\\xff');
  });

  it('labels one token: its character, its mark, or its special name', () => {
    expect(tokenLabelText(byteTokenizer, 0x54)).toBe('T');
    expect(tokenLabelText(byteTokenizer, 0x18)).toBe('\\x18');
    expect(tokenLabelText(byteTokenizer, 10)).toBe('⏎');
    expect(tokenLabelText(byteTokenizer, 260)).toBe('<act>');
    expect(tokenLabelText(undefined, 7)).toBe('#7');
  });
});
