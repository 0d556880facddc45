// Byte-pair merging in O(n log n) for a piece of any length: the parts of the piece form a linked
// list and every adjacent pair sits in a binary heap keyed by (rank, position), so each merge is the
// lowest-ranked pair, leftmost among equals, exactly the rule of the reference merge (tiktoken's
// `_byte_pair_merge`, which rescans the pairs after every merge: quadratic on a long piece without
// a break, such as a 10 MB line of letters). The result is the reference's, token for token. Ids
// are appended to a growable Int32Array (TokenBuffer), not pushed onto a JS array: see tokenBuffer.

/** A byte-level BPE vocabulary as the merge needs it: the token of each byte, and of each pair of tokens. */
export interface PairRanks {
  /** The token of a single byte (every byte has one in a byte-level BPE). */
  byte: Int32Array;
  /** The token whose bytes are those of `left` then `right` (its rank: lower merges first), if any. */
  pair(left: number, right: number): number | undefined;
  /**
   * 1 where bytes (a, b) follow each other inside some token (index a × 256 + b). Between two bytes
   * that no token holds in a row no merge can ever happen, so a piece is merged segment by segment
   * between such places, with the same result: short segments keep the work in the cache.
   */
  inner: Uint8Array;
}

/**
 * PairRanks from a rank table (token id → its bytes; holes allowed), as tiktoken ranks merges: a
 * pair merges into the token of its concatenated bytes, whatever split formed that token.
 */
export function pairRanksOf(tokens: readonly (Uint8Array | undefined)[]): PairRanks {
  const keys = tokens.map((bytes) => (bytes ? String.fromCharCode(...bytes) : undefined));
  const byBytes = new Map<string, number>();
  keys.forEach((k, id) => k !== undefined && byBytes.set(k, id));
  const table = createPairTable(tokens.length * 4);
  keys.forEach((k, id) => {
    if (k === undefined) return;
    for (let cut = 1; cut < k.length; cut++) {
      const left = byBytes.get(k.slice(0, cut));
      const right = left === undefined ? undefined : byBytes.get(k.slice(cut));
      if (left !== undefined && right !== undefined) table.set(left, right, id);
    }
  });
  const byte = new Int32Array(256).fill(-1);
  for (let b = 0; b < 256; b++) byte[b] = byBytes.get(String.fromCharCode(b)) ?? -1;
  const inner = new Uint8Array(65536);
  for (const k of keys) if (k !== undefined) for (let i = 0; i + 1 < k.length; i++) inner[k.charCodeAt(i) * 256 + k.charCodeAt(i + 1)] = 1;
  return { byte, pair: table.get, inner };
}

/** An open-addressing hash table (left, right) → id over typed arrays: the merge's one hot lookup, no boxed keys. */
function createPairTable(expected: number) {
  let mask = 1;
  while (mask < expected * 2) mask <<= 1;
  let lefts = new Int32Array(mask).fill(-1);
  let rights = new Int32Array(mask);
  let ids = new Int32Array(mask);
  let count = 0;
  mask -= 1;
  const slot = (left: number, right: number) => (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca77)) & mask;
  const insert = (left: number, right: number, id: number) => {
    let at = slot(left, right);
    while (lefts[at] !== -1 && !(lefts[at] === left && rights[at] === right)) at = (at + 1) & mask;
    if (lefts[at] === -1) count++;
    lefts[at] = left;
    rights[at] = right;
    ids[at] = id;
  };
  return {
    set(left: number, right: number, id: number) {
      if ((count + 1) * 2 > mask + 1) {
        const [l, r, d] = [lefts, rights, ids];
        mask = (mask + 1) * 2 - 1;
        lefts = new Int32Array(mask + 1).fill(-1);
        rights = new Int32Array(mask + 1);
        ids = new Int32Array(mask + 1);
        count = 0;
        for (let i = 0; i < l.length; i++) if (l[i] !== -1) insert(l[i], r[i], d[i]);
      }
      insert(left, right, id);
    },
    get(left: number, right: number): number | undefined {
      for (let at = slot(left, right); lefts[at] !== -1; at = (at + 1) & mask) {
        if (lefts[at] === left && rights[at] === right) return ids[at];
      }
      return undefined;
    },
  };
}

/**
 * Token ids as a merge appends them: a growable Int32Array. A JS array grown by push past ~100k
 * entries is reallocated in V8's large-object space at each growth and marked by the collector:
 * that alone doubled the time per character of a 100k- or 1M-character line against a 10k one
 * (`npm run bench -- tokenize`: ratio 2.00 before, about 1.3 with the buffer).
 */
export interface TokenBuffer {
  ids: Int32Array;
  length: number;
}

export function tokenBuffer(capacity = 1024): TokenBuffer {
  return { ids: new Int32Array(Math.max(16, capacity)), length: 0 };
}

export function pushToken(buffer: TokenBuffer, id: number): void {
  if (buffer.length === buffer.ids.length) {
    const grown = new Int32Array(buffer.ids.length * 2);
    grown.set(buffer.ids);
    buffer.ids = grown;
  }
  buffer.ids[buffer.length++] = id;
}

/** The ids as a plain array, allocated once at its final size. */
export function tokenArray(buffer: TokenBuffer): number[] {
  const out: number[] = new Array(buffer.length);
  for (let i = 0; i < buffer.length; i++) out[i] = buffer.ids[i];
  return out;
}

/** Heap keys: rank × 2^32 + position, so one float orders by rank, then leftmost (exact below 2^53). */
const POSITION = 2 ** 32;

/** Scratch arrays reused by every call (grown when a segment is longer): a segment's work stays in the cache. */
let token = new Int32Array(256);
let next = new Int32Array(256);
let prev = new Int32Array(256);
let heap = new Float64Array(256);

/**
 * Appends the token ids of `piece` (UTF-8 bytes of one pre-tokenized piece) to `out`: lowest rank
 * first, leftmost first among equals, segment by segment between bytes no token holds in a row.
 */
export function bytePairMerge(piece: Uint8Array, ranks: PairRanks, out: TokenBuffer = tokenBuffer()): TokenBuffer {
  const n = piece.length;
  for (let start = 0, end = 0; start < n; start = end) {
    end = start + 1;
    while (end < n && ranks.inner[piece[end - 1] * 256 + piece[end]]) end++;
    mergeSegment(piece, start, end, ranks, out);
  }
  return out;
}

/** One segment [start, end) of a piece, merged on its own (local part i is byte start + i). */
function mergeSegment(piece: Uint8Array, start: number, end: number, ranks: PairRanks, out: TokenBuffer): void {
  const len = end - start;
  if (len === 1) {
    const t = ranks.byte[piece[start]];
    if (t < 0) throw new Error(`bpe: byte ${piece[start]} has no token`);
    pushToken(out, t);
    return;
  }
  if (token.length < len) {
    const size = Math.max(len, token.length * 2);
    token = new Int32Array(size);
    next = new Int32Array(size);
    prev = new Int32Array(size);
    heap = new Float64Array(size);
  }
  // Part i keeps its start; `token[i]` is what it is now, `next[i]` the part after it (len: none;
  // -1: merged away), `prev[i]` the one before it (-1: none).
  for (let i = 0; i < len; i++) {
    token[i] = ranks.byte[piece[start + i]];
    if (token[i] < 0) throw new Error(`bpe: byte ${piece[start + i]} has no token`);
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  // A binary min-heap of pairs (rank, position): at most one live entry per part plus stale ones, so
  // fewer than 2 × len entries. An entry is acted on only if the pair at its position still has its
  // rank; every current pair is in the heap.
  if (heap.length < 2 * len) heap = new Float64Array(2 * len);
  let size = 0;
  const push = (i: number) => {
    const j = next[i];
    if (j < 0 || j >= len) return;
    const rank = ranks.pair(token[i], token[j]);
    if (rank === undefined) return;
    const key = rank * POSITION + i;
    let at = size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent] <= key) break;
      heap[at] = heap[parent];
      at = parent;
    }
    heap[at] = key;
  };
  for (let i = 0; i < len - 1; i++) push(i);
  while (size > 0) {
    const top = heap[0];
    const last = heap[--size];
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1] < heap[child]) child++;
      if (heap[child] >= last) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = last;
    const rank = Math.floor(top / POSITION);
    const i = top - rank * POSITION;
    const j = next[i];
    if (j < 0 || j >= len || ranks.pair(token[i], token[j]) !== rank) continue; // stale
    // Part i and the part after it become one token.
    token[i] = rank;
    next[i] = next[j];
    if (next[j] < len) prev[next[j]] = i;
    next[j] = -1;
    push(i);
    if (prev[i] >= 0) push(prev[i]);
  }
  for (let i = 0; i < len; i = next[i]) pushToken(out, token[i]);
}
