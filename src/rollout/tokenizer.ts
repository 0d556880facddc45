// Tokenizers named by a rollout's `tokenizer` field (docs/tokenizers.md). `byte`: UTF-8 bytes 0..255,
// special ids from 256; `gpt2`: GPT-2's BPE (src/rollout/gpt2.ts). A `text` piece becomes its role
// marker (never a target) followed by the encoded text. `byte` is always there; gpt2's ranks load on
// first use (`loadTokenizer`, a dynamic import), which whoever reads a rollout or an import awaits.

import type { Role } from './format';
import { BYTE_VOCAB, GPT2_VOCAB, TOKENIZER_NAMES, TOKENIZER_VOCAB, type Tokenizer, type TokenizerName } from './tokenizer-types';

export const BOS = 256;
export const EOS = 257;
export const ROLE_MARKER: Readonly<Record<Role, number>> = { prompt: 258, obs: 259, act: 260, summary: 261 };
export { BYTE_VOCAB, GPT2_VOCAB, TOKENIZER_NAMES, type TokenizerName } from './tokenizer-types';

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
/** Each byte as its own one-byte array (what `bytes` hands out, never copied). */
const BYTES = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

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
  bytes(token) {
    return token < 256 ? BYTES[token] : null;
  },
};

/** Tokenizers whose tables arrive by a dynamic import: a page that never sees gpt2 does not fetch its ~500 KB of ranks. */
const LAZY: Readonly<Record<string, () => Promise<Tokenizer>>> = {
  gpt2: async () => (await import('./gpt2')).gpt2Tokenizer,
};

/** Tokenizers ready to use, by name; a rollout without a `tokenizer` field uses `byte`. */
const loaded = new Map<string, Tokenizer>([['byte', byteTokenizer]]);
const loading = new Map<string, Promise<Tokenizer>>();

export const DEFAULT_TOKENIZER = 'byte';

/**
 * Makes a tokenizer built at run time known by its name: a model folder's `hf:<name>` tokenizer
 * (src/rollout/tokenizer-hf.ts), registered by whoever loaded the folder (mw import --tokenizer FOLDER).
 */
export function registerTokenizer(tokenizer: Tokenizer): void {
  if (Object.hasOwn(LAZY, tokenizer.name) || tokenizer.name === 'byte')
    throw new Error(`cannot register a tokenizer named ${tokenizer.name}: a built-in has that name`);
  loaded.set(tokenizer.name, tokenizer);
}

/** Whether `name` is a tokenizer this build knows (loaded or not). */
export function isKnownTokenizer(name: string): boolean {
  return loaded.has(name) || Object.hasOwn(LAZY, name);
}

/** The named tokenizer, its tables loaded (once; later calls share the import); undefined for an unknown name. */
export async function loadTokenizer(name: string): Promise<Tokenizer | undefined> {
  const ready = loaded.get(name);
  if (ready) return ready;
  if (!Object.hasOwn(LAZY, name)) return undefined;
  let pending = loading.get(name);
  if (!pending) {
    pending = LAZY[name]().then((tk) => {
      loaded.set(name, tk);
      return tk;
    });
    loading.set(name, pending);
  }
  return pending;
}

/** Loads every known tokenizer among `names` (anything else is left to the validator to name). */
export async function loadTokenizers(names: Iterable<unknown>): Promise<void> {
  const wanted = new Set<string>();
  for (const name of names) if (typeof name === 'string' && isKnownTokenizer(name) && !loaded.has(name)) wanted.add(name);
  await Promise.all([...wanted].map(loadTokenizer));
}

/** The tokenizer a record (a rollout or a calls log, as JSON) names in its `tokenizer` field, if any. */
export function tokenizerField(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { tokenizer?: unknown }).tokenizer : undefined;
}

/**
 * A tokenizer by name, for code that runs after its tables were loaded (loadTokenizer); undefined
 * for an unknown name. A known one not loaded yet is a caller's mistake, and throws.
 */
export function getTokenizer(name: string): Tokenizer | undefined {
  const tk = loaded.get(name);
  if (tk) return tk;
  if (Object.hasOwn(LAZY, name)) throw new Error(`the ${name} tokenizer is not loaded yet (await loadTokenizer(${JSON.stringify(name)}) first)`);
  return undefined;
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
  return V === GPT2_VOCAB ? 'gpt2' : 'byte';
}

/** A tokenizer named with its vocabulary when it is a built-in one: `byte (vocabulary 272)`, `hf:Qwen/Qwen3-0.6B`. */
function described(name: string): string {
  return isTokenizerName(name) ? `${name} (vocabulary ${TOKENIZER_VOCAB[name]})` : name;
}

/**
 * Why a model of vocabulary V cannot read a rollout of tokenizer `name`, or null when it can. A GPT-2
 * or byte model's tokenizer follows from V; a model folder's is its own (`modelTokenizer`, `hf:<name>`),
 * and reads only rollouts of that name. A rollout of a tokenizer no model claims (not built in, not
 * `hf:`) is checked only by its ids lying in the vocabulary. Ids of another tokenizer often lie in
 * range and would be scored as nonsense (docs/tokenizers.md).
 */
export function tokenizerMismatch(name: string, V: number, modelTokenizer?: string): { rollout: string; model: string; reason: string } | null {
  if (!isTokenizerName(name) && !name.startsWith('hf:')) return null;
  const model = modelTokenizer ?? tokenizerForVocab(V);
  if (name === model) return null;
  return {
    rollout: name,
    model,
    reason: `is tokenized with ${described(name)}, but the model's vocabulary of ${V} is the ${model} tokenizer's`,
  };
}
