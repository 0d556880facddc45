// What a tokenizer is (docs/tokenizers.md), apart from the registry in tokenizer.ts, so that each
// tokenizer's module (gpt2.ts) and the registry that lists them do not import each other; and what
// is known of the built-in ones before their tables load (names, vocabularies).

import type { Role } from './format';

export interface Tokenizer {
  name: string;
  /** Token values lie in [0, vocab): the vocabulary a model needs to read this tokenizer's rollouts. */
  vocab: number;
  /** The tokens that open a `text` piece of `role`: they carry the role and are never targets. */
  marker(role: Role): readonly number[];
  /** The tokens of a `text` piece: its role marker, then the encoded text. */
  encodePiece(text: string, role: Role): number[];
  /** encodePiece(text, role).length, counted without building the tokens where the tokenizer can. */
  pieceLength(text: string, role: Role): number;
  /** Plain encoding of text, no marker (importers use it for rendered views). */
  encode(text: string): number[];
  /** Readable text of token values (specials by name). */
  decode(tokens: ArrayLike<number>): string;
  /** A short label for one token value, for tables and token grids. */
  label(token: number): string;
  /**
   * The bytes of text one token value stands for (part of a multi-byte character, possibly), or
   * null for a special token (a role marker, <|endoftext|>), which stands for no text.
   */
  bytes(token: number): Uint8Array | null;
}

/** The names importers accept for `--tokenizer`. */
export const TOKENIZER_NAMES = ['byte', 'gpt2'] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/** GPT-2's vocabulary: 50,000 merges, 256 bytes, and <|endoftext|>. */
export const GPT2_VOCAB = 50257;
/** The byte tokenizer's: 256 bytes, specials 256..261, 262..271 reserved. */
export const BYTE_VOCAB = 272;

/** Each built-in tokenizer's vocabulary, known without loading its tables. */
export const TOKENIZER_VOCAB: Readonly<Record<TokenizerName, number>> = { byte: BYTE_VOCAB, gpt2: GPT2_VOCAB };
