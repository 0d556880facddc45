// The `gpt2` tokenizer (docs/tokenizers.md): GPT-2's byte-level BPE (`r50k_base`, ids 0..50256, the
// ranks bundled by gpt-tokenizer, nothing fetched). Text is always plain text: "<|endoftext|>" in a
// transcript is encoded as the characters it is. A `text` piece opens with its role marker as text.
// The ranks are ~500 KB of JavaScript: the registry (tokenizer.ts `loadTokenizer`) imports this
// module dynamically, so a bundle that never meets a gpt2 rollout never loads it.

import { countTokens, encode as encodeBpe } from 'gpt-tokenizer/encoding/r50k_base';
import ranks from 'gpt-tokenizer/bpeRanks/r50k_base';
import { bytePairMerge, pairRanksOf, pushToken, tokenArray, tokenBuffer, type PairRanks } from './bpe';
import type { Role } from './format';
import { GPT2_VOCAB, type Tokenizer } from './tokenizer-types';
import { visibleText } from './token-text';

export { visibleText } from './token-text';

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
  const out = tokenBuffer(text.length >> 1);
  let run = 0; // start of the pending run of short pieces
  const flush = (to: number) => {
    if (to > run) for (const t of encodeBpe(text.slice(run, to), PLAIN)) pushToken(out, t);
  };
  for (const match of text.matchAll(PIECES)) {
    const piece = match[0];
    if (piece.length <= LONG_PIECE) continue;
    flush(match.index);
    bytePairMerge(utf8.encode(piece), gpt2PairRanks(), out);
    run = match.index + piece.length;
  }
  flush(text.length);
  return tokenArray(out);
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
