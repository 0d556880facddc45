// Tokenizers named by a rollout's `tokenizer` field. `byte` (docs/rollout-format.md): UTF-8 bytes 0..255, special
// ids from 256; a `text` piece becomes its role marker followed by the bytes of the text.

import type { Role } from './format';

export const BOS = 256;
export const EOS = 257;
export const ROLE_MARKER: Readonly<Record<Role, number>> = { prompt: 258, obs: 259, act: 260, summary: 261 };
/** Ids 262..271 are reserved; the default vocabulary is 272. */
export const BYTE_VOCAB = 272;

const SPECIAL_NAMES: Readonly<Record<number, string>> = {
  [BOS]: '<bos>',
  [EOS]: '<eos>',
  258: '<prompt>',
  259: '<obs>',
  260: '<act>',
  261: '<summary>',
};

export interface Tokenizer {
  name: string;
  /** The tokens of a `text` piece: its role marker, then the encoded text. */
  encodePiece(text: string, role: Role): number[];
  /** Plain encoding of text, no marker (importers use it for rendered views). */
  encode(text: string): number[];
  /** Readable text of token values (specials by name). */
  decode(tokens: ArrayLike<number>): string;
  /** A short label for one token value, for tables and token grids. */
  label(token: number): string;
}

const utf8 = new TextEncoder();

export const byteTokenizer: Tokenizer = {
  name: 'byte',
  encodePiece(text, role) {
    return [ROLE_MARKER[role], ...utf8.encode(text)];
  },
  encode(text) {
    return Array.from(utf8.encode(text));
  },
  decode(tokens) {
    const out: string[] = [];
    let bytes: number[] = [];
    const flush = () => {
      if (bytes.length) out.push(new TextDecoder().decode(new Uint8Array(bytes)));
      bytes = [];
    };
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (t < 256) bytes.push(t);
      else {
        flush();
        out.push(byteTokenizer.label(t));
      }
    }
    flush();
    return out.join('');
  },
  label(token) {
    if (token >= 256) return SPECIAL_NAMES[token] ?? `<reserved:${token}>`;
    if (token >= 0x20 && token < 0x7f) return String.fromCharCode(token);
    return `\\x${token.toString(16).padStart(2, '0')}`;
  },
};

/** Known tokenizers by name; a rollout without a `tokenizer` field uses `byte`. */
export const tokenizers: Readonly<Record<string, Tokenizer>> = { byte: byteTokenizer };

export const DEFAULT_TOKENIZER = 'byte';

export function getTokenizer(name: string): Tokenizer | undefined {
  return Object.hasOwn(tokenizers, name) ? tokenizers[name] : undefined;
}
