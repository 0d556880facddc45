// Tokenizers named by a rollout's `tokenizer` field (docs/tokenizers.md). `byte`: UTF-8 bytes 0..255,
// special ids from 256; `gpt2`: GPT-2's BPE (src/rollout/gpt2.ts). A `text` piece becomes its role
// marker (never a target) followed by the encoded text.

import type { Role } from './format';
import { gpt2Tokenizer } from './gpt2';
import type { Tokenizer } from './tokenizer-types';

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

export type { Tokenizer } from './tokenizer-types';

const utf8 = new TextEncoder();

/** UTF-8 length of a string, as TextEncoder encodes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  // Counted, not encoded, so a 50 MB import allocates nothing per byte.
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

const BYTE_MARKERS: Readonly<Record<Role, readonly number[]>> = {
  prompt: [ROLE_MARKER.prompt],
  obs: [ROLE_MARKER.obs],
  act: [ROLE_MARKER.act],
  summary: [ROLE_MARKER.summary],
};

export const byteTokenizer: Tokenizer = {
  name: 'byte',
  vocab: BYTE_VOCAB,
  marker: (role) => BYTE_MARKERS[role],
  encodePiece(text, role) {
    return [ROLE_MARKER[role], ...utf8.encode(text)];
  },
  pieceLength(text) {
    return 1 + utf8Length(text);
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
export const tokenizers: Readonly<Record<string, Tokenizer>> = { byte: byteTokenizer, gpt2: gpt2Tokenizer };

/** The names importers accept for `--tokenizer`. */
export const TOKENIZER_NAMES = ['byte', 'gpt2'] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

export const DEFAULT_TOKENIZER = 'byte';

export function getTokenizer(name: string): Tokenizer | undefined {
  return Object.hasOwn(tokenizers, name) ? tokenizers[name] : undefined;
}

export function isTokenizerName(name: unknown): name is TokenizerName {
  return typeof name === 'string' && (TOKENIZER_NAMES as readonly string[]).includes(name);
}

/**
 * A token as readable text, for views and tables: GPT-2's decoded word piece (" world"), a byte's
 * character; control bytes and parts of a split multi-byte character as escapes (\n, \xe6),
 * specials by name (<act>, <|endoftext|>). An unknown tokenizer shows the raw value (#1234).
 */
export function tokenText(tokenizer: Tokenizer | string | undefined, token: number): string {
  const tk = typeof tokenizer === 'string' ? getTokenizer(tokenizer) : tokenizer;
  return tk ? tk.label(token) : `#${token}`;
}

/**
 * The tokenizer whose rollouts a model of vocabulary V reads: `gpt2` for GPT-2's 50257, else `byte`
 * (the workbench's own models, 272, and the small test vocabularies).
 */
export function tokenizerForVocab(V: number): TokenizerName {
  return V === gpt2Tokenizer.vocab ? 'gpt2' : 'byte';
}
