// What a tokenizer is (docs/tokenizers.md), apart from the registry in tokenizer.ts, so that each
// tokenizer's module (gpt2.ts) and the registry that lists them do not import each other.

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
}
