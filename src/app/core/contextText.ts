// Token values as readable text for the context panes: each token stands for bytes (decoded as
// UTF-8 across token boundaries, so a character split over several byte tokens, or over GPT-2 word
// pieces, reads whole) or for a special token (role markers, BOS, <|endoftext|>); control and
// invisible characters become visible marks. `tokenPiece` is the one tokenizer-specific step.
import type { Tokenizer } from '../../rollout';

/** What one token stands for: raw bytes of text, or a special token's name (`<act>`). */
export type TokenPiece = Uint8Array | string;

/** How a glyph is drawn: plain text, a mark for an invisible character, a special token, a byte that is not UTF-8. */
export const GLYPH = { text: 0, mark: 1, special: 2, invalid: 3 } as const;
export type GlyphKind = (typeof GLYPH)[keyof typeof GLYPH];

/** One character (or mark, special token, stray byte) and the tokens it came from. */
export interface Glyph {
  /** What the pane shows: the character itself, or its mark (`⏎`, `\x18`, `<act>`). */
  shown: string;
  /** The text it stands for when copied or searched ('' for special tokens). */
  raw: string;
  kind: GlyphKind;
  /** Token indices [first, end) within the decoded run. */
  first: number;
  end: number;
  /** A line break follows (the glyph is a newline). */
  breaks: boolean;
}

/** The bytes (or special name) of one token value under a tokenizer; unknown tokenizers show values as `#v`. */
export function tokenPiece(tokenizer: Tokenizer | undefined, value: number): TokenPiece {
  if (!tokenizer) return `#${value}`;
  return tokenizer.bytes(value) ?? tokenizer.label(value);
}

const hex = (b: number) => `\\x${b.toString(16).padStart(2, '0')}`;

/** Named marks for the invisible characters a transcript holds most. */
const MARKS: Readonly<Record<string, string>> = {
  '\n': '⏎',
  '\t': '→',
  '\r': '␍',
};

/** A character as the pane shows it, and whether it is a mark rather than plain text. */
export function markOf(ch: string): { shown: string; mark: boolean } {
  const named = MARKS[ch];
  if (named) return { shown: named, mark: true };
  const cp = ch.codePointAt(0)!;
  if (cp < 0x20 || cp === 0x7f) return { shown: hex(cp), mark: true };
  // C1 controls, no-break and other odd spaces, zero-width and format characters, BOM.
  if ((cp >= 0x80 && cp < 0xa0) || /^[\p{Cf}\p{Zl}\p{Zp}]$/u.test(ch) || (/^\p{Zs}$/u.test(ch) && ch !== ' ')) return { shown: '·', mark: true };
  return { shown: ch, mark: false };
}

/** Expected length of a UTF-8 sequence from its lead byte (0: not a lead byte). */
function sequenceLength(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) return 2;
  if (b >= 0xe0 && b <= 0xef) return 3;
  if (b >= 0xf0 && b <= 0xf4) return 4;
  return 0;
}

/** Whether `b` may follow the bytes `seq` of a sequence being read (no overlongs, no surrogates, ≤ U+10FFFF). */
function continues(seq: number[], b: number): boolean {
  if (b < 0x80 || b > 0xbf) return false;
  if (seq.length !== 1) return true;
  const lead = seq[0];
  if (lead === 0xe0) return b >= 0xa0;
  if (lead === 0xed) return b <= 0x9f;
  if (lead === 0xf0) return b >= 0x90;
  if (lead === 0xf4) return b <= 0x8f;
  return true;
}

/** The code point of a complete, valid UTF-8 sequence. */
function codePoint(seq: readonly number[]): number {
  const n = seq.length;
  let cp = seq[0] & (n === 2 ? 0x1f : n === 3 ? 0x0f : 0x07);
  for (let i = 1; i < n; i++) cp = (cp << 6) | (seq[i] & 0x3f);
  return cp;
}

/**
 * Decodes a run of tokens into glyphs. Bytes are read as UTF-8 across token boundaries (a glyph's
 * [first, end) then spans several tokens); a byte that cannot start or continue a character is a
 * glyph of its own, shown as `\xNN`.
 */
export function decodePieces(pieces: readonly TokenPiece[]): Glyph[] {
  const out: Glyph[] = [];
  // The bytes of the character being read and how many it needs.
  let seq: number[] = [];
  let need = 0;
  const emit = (ch: string, first: number, end: number) => {
    const { shown, mark } = markOf(ch);
    out.push({ shown, raw: ch, kind: mark ? GLYPH.mark : GLYPH.text, first, end, breaks: ch === '\n' });
  };
  // Token of each byte of the sequence being read (a character may start in one token and end in another).
  let seqTokens: number[] = [];
  for (let t = 0; t < pieces.length; t++) {
    const piece = pieces[t];
    if (typeof piece === 'string') {
      if (seq.length) flushStrays();
      out.push({ shown: piece, raw: '', kind: GLYPH.special, first: t, end: t + 1, breaks: false });
      continue;
    }
    for (let i = 0; i < piece.length; i++) {
      const b = piece[i];
      if (seq.length) {
        if (continues(seq, b)) {
          seq.push(b);
          seqTokens.push(t);
          if (seq.length === need) {
            emit(String.fromCodePoint(codePoint(seq)), seqTokens[0], t + 1);
            seq = [];
            seqTokens = [];
          }
          continue;
        }
        flushStrays();
      }
      const n = sequenceLength(b);
      if (n === 1) emit(String.fromCharCode(b), t, t + 1);
      else if (n === 0) out.push({ shown: hex(b), raw: '\uFFFD', kind: GLYPH.invalid, first: t, end: t + 1, breaks: false });
      else {
        seq = [b];
        seqTokens = [t];
        need = n;
      }
    }
  }
  if (seq.length) flushStrays();
  return out;

  function flushStrays() {
    seq.forEach((b, k) => out.push({ shown: hex(b), raw: '\uFFFD', kind: GLYPH.invalid, first: seqTokens[k], end: seqTokens[k] + 1, breaks: false }));
    seq = [];
    seqTokens = [];
    need = 0;
  }
}

/** Decodes token values under a tokenizer (see decodePieces). */
export function decodeTokens(tokenizer: Tokenizer | undefined, values: ArrayLike<number>): Glyph[] {
  return decodePieces(Array.from(values as ArrayLike<number>, (v) => tokenPiece(tokenizer, v)));
}

/** The text a glyph copies as: characters as they are (newlines and tabs too), control bytes, stray bytes and special tokens as shown. */
export function copiedText(g: Glyph): string {
  if (g.kind === GLYPH.text || g.raw === '\n' || g.raw === '\t') return g.raw;
  if (g.kind === GLYPH.mark && g.shown === '·') return g.raw;
  return g.shown;
}

export function glyphsText(glyphs: readonly Glyph[]): string {
  let s = '';
  for (const g of glyphs) s += copiedText(g);
  return s;
}

/** One token as a readable label: its text (marks for invisible characters), or its special name. */
export function tokenLabelText(tokenizer: Tokenizer | undefined, value: number): string {
  return decodeTokens(tokenizer, [value])
    .map((g) => g.shown)
    .join('');
}
