// The `gpt2` tokenizer (docs/tokenizers.md): GPT-2's byte-level BPE (`r50k_base`, ids 0..50256, the
// ranks bundled by gpt-tokenizer, nothing fetched). Text is always plain text: "<|endoftext|>" in a
// transcript is encoded as the characters it is. A `text` piece opens with its role marker as text.
// The ranks are ~500 KB of JavaScript: the registry (tokenizer.ts `loadTokenizer`) imports this
// module dynamically, so a bundle that never meets a gpt2 rollout never loads it.

import { countTokens, encode as encodeBpe } from 'gpt-tokenizer/encoding/r50k_base';
import ranks from 'gpt-tokenizer/bpeRanks/r50k_base';
import { bytePairMerge, pairRanksOf, type PairRanks } from './bpe';
import type { Role } from './format';
import { GPT2_VOCAB, type Tokenizer } from './tokenizer-types';

export { GPT2_VOCAB } from './tokenizer-types';
export const END_OF_TEXT = 50256;
export const END_OF_TEXT_NAME = '<|endoftext|>';

/**
 * The role markers, as a GPT-2 model reads a transcript: a blank line, the speaker, a colon, a line
 * break; the piece's text follows on the next line. Markers are ordinary GPT-2 tokens (5 each), so
 * a published checkpoint (vocabulary exactly 50257) reads them without a new embedding row.
 */
export const GPT2_MARKER_TEXT: Readonly<Record<Role, string>> = {
  prompt: '\n\nUser:\n',
  obs: '\n\nTool:\n',
  act: '\n\nAssistant:\n',
  summary: '\n\nSummary:\n',
};

/** No special tokens in text: every string encodes as its characters. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/**
 * GPT-2's pre-tokenizer (r50k's split pattern, as gpt-tokenizer and tiktoken write it): BPE merges
 * within each piece, never across.
 */
const PIECES = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Pieces up to this many UTF-16 units go through gpt-tokenizer (its merge rescans the piece after
 * every merge: quadratic, but at most LONG_PIECE² per piece); longer ones through the heap merge of
 * bpe.ts, O(n log n). Both give the reference encoding, so the bound changes the time only.
 */
const LONG_PIECE = 256;

let pairRanks: PairRanks | null = null;

/** GPT-2's merges as pairs of tokens, built once (~0.3 s), the first time a long piece is met. */
function gpt2PairRanks(): PairRanks {
  pairRanks ??= pairRanksOf(Array.from({ length: END_OF_TEXT }, (_, id) => (ranks[id] === undefined ? undefined : gpt2TokenBytes(id))));
  return pairRanks;
}

/**
 * GPT-2's encoding of plain text, in time O(n log n) in its length whatever it holds: runs of
 * ordinary pieces are encoded by gpt-tokenizer as they are, a piece longer than LONG_PIECE (a line
 * of letters or emoji without a space) by the heap merge. Exactly gpt-tokenizer's ids either way.
 */
function encodeText(text: string): number[] {
  if (text.length <= LONG_PIECE) return encodeBpe(text, PLAIN);
  const out: number[] = [];
  let run = 0; // start of the pending run of short pieces
  const flush = (to: number) => {
    if (to > run) for (const t of encodeBpe(text.slice(run, to), PLAIN)) out.push(t);
  };
  for (const match of text.matchAll(PIECES)) {
    const piece = match[0];
    if (piece.length <= LONG_PIECE) continue;
    flush(match.index);
    bytePairMerge(utf8.encode(piece), gpt2PairRanks(), out);
    run = match.index + piece.length;
  }
  flush(text.length);
  return out;
}

const MARKERS: Readonly<Record<Role, readonly number[]>> = {
  prompt: encodeText(GPT2_MARKER_TEXT.prompt),
  obs: encodeText(GPT2_MARKER_TEXT.obs),
  act: encodeText(GPT2_MARKER_TEXT.act),
  summary: encodeText(GPT2_MARKER_TEXT.summary),
};

const utf8 = new TextEncoder();
const byteCache = new Map<number, Uint8Array>();

/** The bytes a token stands for (a token may hold part of a multi-byte character). */
export function gpt2TokenBytes(token: number): Uint8Array {
  let bytes = byteCache.get(token);
  if (bytes) return bytes;
  if (token === END_OF_TEXT) bytes = utf8.encode(END_OF_TEXT_NAME);
  else {
    const entry = Number.isInteger(token) && token >= 0 ? ranks[token] : undefined;
    if (entry === undefined) throw new Error(`gpt2: token ${token} is outside the vocabulary of ${GPT2_VOCAB}`);
    bytes = typeof entry === 'string' ? utf8.encode(entry) : Uint8Array.from(entry);
  }
  byteCache.set(token, bytes);
  return bytes;
}

/** Length of the valid UTF-8 sequence starting at bytes[i], or 0 when none starts there. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i];
  const need = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
  if (need === 0 || i + need > bytes.length) return 0;
  for (let k = 1; k < need; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
  if (need === 3 && ((b === 0xe0 && second < 0xa0) || (b === 0xed && second >= 0xa0))) return 0;
  if (need === 4 && ((b === 0xf0 && second < 0x90) || (b === 0xf4 && second >= 0x90))) return 0;
  return need;
}

const hex = (b: number) => `\\x${b.toString(16).padStart(2, '0')}`;
const ESCAPES: Readonly<Record<number, string>> = { 0x09: '\\t', 0x0a: '\\n', 0x0d: '\\r' };

/**
 * Readable text of some bytes: the characters they hold, control characters and bytes that are no
 * whole character on their own (a multi-byte character split across tokens) as escapes.
 */
export function visibleText(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const n = utf8SequenceLength(bytes, i);
    if (n === 0) {
      out += hex(bytes[i]);
      i++;
    } else if (n === 1) {
      const b = bytes[i];
      out += ESCAPES[b] ?? (b < 0x20 || b === 0x7f ? hex(b) : String.fromCharCode(b));
      i++;
    } else {
      const text = new TextDecoder().decode(bytes.subarray(i, i + n));
      const code = text.codePointAt(0)!;
      // C1 controls (U+0080..U+009F) print nothing either.
      out += code < 0xa0 ? `\\u${code.toString(16).padStart(4, '0')}` : text;
      i += n;
    }
  }
  return out;
}

export const gpt2Tokenizer: Tokenizer = {
  name: 'gpt2',
  vocab: GPT2_VOCAB,
  marker: (role) => MARKERS[role],
  encodePiece(text, role) {
    return [...MARKERS[role], ...encodeText(text)];
  },
  pieceLength(text, role) {
    return MARKERS[role].length + (!text ? 0 : text.length <= LONG_PIECE ? countTokens(text, PLAIN) : encodeText(text).length);
  },
  encode: encodeText,
  decode(tokens) {
    let length = 0;
    const parts: Uint8Array[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const bytes = gpt2TokenBytes(tokens[i]);
      parts.push(bytes);
      length += bytes.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    // Whole encodings decode exactly; a slice that cuts a character shows U+FFFD there.
    return new TextDecoder().decode(all);
  },
  label(token) {
    return token === END_OF_TEXT ? END_OF_TEXT_NAME : visibleText(gpt2TokenBytes(token));
  },
  bytes(token) {
    return token === END_OF_TEXT ? null : gpt2TokenBytes(token);
  },
};
