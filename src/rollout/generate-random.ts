// Seeded random generator of valid v1 rollouts with every edit shape the workbench must handle:
// suffix drop, middle replacement by a summary, sliding window (with or without a sink), many
// small keep ranges, several inserts in one edit, eviction of earlier summaries, a pure insert,
// and segments without appends (so a branch can be a prefix of an earlier one). Used by the
// property tests, the GPU tests (size 'small') and the benchmarks.

import { ROLLOUT_FORMAT, type AppendRole, type EventJson, type InsertRole, type RolloutJson, type ViewPieceJson } from './format';
import { BYTE_VOCAB } from './tokenizer';

export const EDIT_SHAPES = ['suffix-drop', 'middle-summary', 'sliding-window', 'small-keeps', 'several-inserts', 'evict-summaries', 'pure-insert'] as const;
export type EditShape = (typeof EDIT_SHAPES)[number];

export type RandomSize = 'small' | 'medium' | 'large';

export interface RandomRolloutOptions {
  seed: number;
  /** Scale preset: small (GPU tests: at most 64 tokens, up to 3 edits), medium (default), large. */
  size?: RandomSize;
  /** Approximate number of tokens to create (overrides the preset). */
  tokens?: number;
  /** Exact number of edits (overrides the preset). */
  edits?: number;
  /** Hard limit on the tape length L (default 64 for 'small', none otherwise): seeds that exceed it are redrawn. */
  maxTokens?: number;
  /** Edits shrink the live view whenever it grows past this many ids. */
  maxLive?: number;
  /** Vocabulary (default 272); plain tokens are drawn below min(vocab, 256). */
  vocab?: number;
  /** Probability that a piece is given as text (default 0.15; needs vocab >= 262). */
  textRate?: number;
  id?: string;
}

/** `cap`: appends stop once the tape holds this many ids (inserts may still add a few). */
const PRESETS: Record<RandomSize, { tokens: number; maxEdits: number; chunk: number; cap: number }> = {
  small: { tokens: 40, maxEdits: 3, chunk: 6, cap: 48 },
  medium: { tokens: 160, maxEdits: 10, chunk: 16, cap: 320 },
  large: { tokens: 2000, maxEdits: 40, chunk: 80, cap: 4000 },
};

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
}

/** mulberry32: small, fast, good enough for test data. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), chance: (p) => next() < p };
}

const WORDS = ['the', 'tool', 'said', 'ok', 'résumé', 'naïve', '42', 'search', '→', 'done', 'λ', 'page'];

type Entry = { keep: number } | { insert: { role: InsertRole; tokens?: number[]; text?: string } };

export function generateRandomRollout(options: RandomRolloutOptions): RolloutJson {
  const limit = options.maxTokens ?? (options.size === 'small' ? 64 : Infinity);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const { rollout, length } = attemptRollout(options, attempt === 0 ? options.seed : Math.imul(options.seed ^ attempt, 0x9e3779b1));
    if (length <= limit) return rollout;
  }
  throw new Error(`generateRandomRollout: no rollout of at most ${limit} tokens found for seed ${options.seed}`);
}

function attemptRollout(options: RandomRolloutOptions, seed: number): { rollout: RolloutJson; length: number } {
  const rng = createRng(seed);
  const preset = PRESETS[options.size ?? 'medium'];
  const vocab = options.vocab ?? BYTE_VOCAB;
  const textRate = vocab >= 262 ? (options.textRate ?? 0.15) : 0;
  const edits = options.edits ?? rng.int(0, preset.maxEdits);
  const budget = options.tokens ?? rng.int(Math.ceil(preset.tokens / 4), preset.tokens);
  const perSegment = Math.max(1, Math.round(budget / (edits + 1)));
  const chunk = Math.max(1, Math.min(preset.chunk, perSegment));
  const maxLive = options.maxLive ?? Infinity;
  const cap = options.tokens === undefined ? preset.cap : Infinity;
  const tokenRange = Math.min(vocab, 256);

  const events: EventJson[] = [];
  const shapes: EditShape[] = [];
  let view: number[] = [];
  const roles: string[] = [];
  let nextId = 0;

  const randomTokens = (n: number) => Array.from({ length: n }, () => rng.int(0, tokenRange - 1));
  const randomText = () => {
    const n = rng.int(0, options.size === 'small' ? 1 : 3);
    return Array.from({ length: n }, () => WORDS[rng.int(0, WORDS.length - 1)]).join(' ');
  };
  const textLength = (text: string) => 1 + new TextEncoder().encode(text).length;

  const append = (role: AppendRole, n: number) => {
    const asText = rng.chance(textRate);
    const text = asText ? randomText() : undefined;
    const count = text !== undefined ? textLength(text) : n;
    if (role === 'act' && text === undefined && view.length === 0) append('obs', rng.int(1, chunk));
    const event = (text !== undefined ? { op: 'append', role, text } : { op: 'append', role, tokens: randomTokens(n) }) as EventJson;
    if (role === 'act' && rng.chance(0.7)) {
      (event as { logprobs?: number[] }).logprobs = Array.from({ length: count }, () => -rng.next() * 6);
    }
    events.push(event);
    for (let i = 0; i < count; i++) {
      view.push(nextId++);
      roles.push(role);
    }
  };

  const insertEntry = (maxLen: number): Entry => {
    const role: InsertRole = rng.chance(0.8) ? 'summary' : rng.chance(0.5) ? 'obs' : 'prompt';
    return rng.chance(textRate) ? { insert: { role, text: randomText() } } : { insert: { role, tokens: randomTokens(rng.int(1, Math.max(1, maxLen))) } };
  };
  const keepAll = (ids: number[]): Entry[] => ids.map((id) => ({ keep: id }));

  const planEdit = (shape: EditShape): Entry[] | null => {
    const n = view.length;
    switch (shape) {
      case 'suffix-drop':
        return n === 0 ? null : keepAll(view.slice(0, rng.int(0, n - 1)));
      case 'middle-summary': {
        if (n === 0) return null;
        const i = rng.int(0, n - 1);
        const j = rng.int(i + 1, n);
        return [...keepAll(view.slice(0, i)), insertEntry(chunk), ...keepAll(view.slice(j))];
      }
      case 'sliding-window': {
        if (n < 2) return null;
        const sink = rng.chance(0.5) ? rng.int(0, Math.min(4, n - 2)) : 0;
        const cap = Math.min(n - 1 - sink, Number.isFinite(maxLive) ? Math.max(1, Math.floor(maxLive / 2)) : n);
        const w = rng.int(Math.max(1, Math.floor(cap / 2)), Math.max(1, cap));
        return keepAll([...view.slice(0, sink), ...view.slice(n - w)]);
      }
      case 'small-keeps': {
        if (n === 0) return null;
        const keep = view.filter(() => rng.chance(0.6));
        if (keep.length === n) keep.splice(rng.int(0, n - 1), 1);
        return keepAll(keep);
      }
      case 'several-inserts': {
        const out: Entry[] = [];
        let inserts = 0;
        let at = 0;
        while (at < n) {
          const len = rng.int(1, Math.max(1, Math.ceil(n / 4)));
          const part = view.slice(at, at + len);
          const r = rng.next();
          if (r < 0.5) out.push(...keepAll(part));
          else if (r > 0.75) {
            out.push(insertEntry(chunk));
            inserts++;
          }
          if (rng.chance(0.3)) {
            out.push(insertEntry(chunk));
            inserts++;
          }
          at += len;
        }
        while (inserts < 2) {
          out.splice(rng.int(0, out.length), 0, insertEntry(chunk));
          inserts++;
        }
        return out;
      }
      case 'evict-summaries': {
        const keep = view.filter((id) => roles[id] !== 'summary');
        return keep.length === n ? null : keepAll(keep);
      }
      case 'pure-insert': {
        // Nothing evicted; evicting the summary again later restores an earlier branch exactly.
        const i = rng.int(0, n);
        return [...keepAll(view.slice(0, i)), insertEntry(chunk), ...keepAll(view.slice(i))];
      }
    }
  };

  const edit = () => {
    const shrink = view.length > maxLive;
    let shape: EditShape = shrink ? (rng.chance(0.5) ? 'sliding-window' : 'middle-summary') : EDIT_SHAPES[rng.int(0, EDIT_SHAPES.length - 1)];
    let entries = planEdit(shape);
    if (!entries) {
      shape = view.length > 0 ? 'suffix-drop' : 'several-inserts';
      entries = planEdit(shape)!;
    }
    if (shrink && shape === 'middle-summary') {
      // A middle replacement big enough to bring the view back under budget.
      const n = view.length;
      const i = rng.int(0, Math.floor(maxLive / 4));
      const j = Math.min(n, i + (n - Math.floor(maxLive / 2)));
      entries = [...keepAll(view.slice(0, i)), insertEntry(chunk), ...keepAll(view.slice(j))];
    }
    // An edit must change the view.
    const keptCount = entries.filter((e) => 'keep' in e).length;
    if (keptCount === view.length && keptCount === entries.length) {
      entries = view.length ? keepAll(view.slice(0, -1)) : [insertEntry(chunk)];
    }
    shapes.push(shape);
    const pieces: ViewPieceJson[] = [];
    const nextView: number[] = [];
    for (const entry of entries) {
      if ('keep' in entry) {
        const last = pieces[pieces.length - 1];
        if (last && 'keep' in last && last.keep[1] === entry.keep) last.keep[1]++;
        else pieces.push({ keep: [entry.keep, entry.keep + 1] });
        nextView.push(entry.keep);
      } else {
        pieces.push(entry as ViewPieceJson);
        const { role, tokens, text } = entry.insert;
        const count = text !== undefined ? textLength(text) : tokens!.length;
        for (let i = 0; i < count; i++) {
          nextView.push(nextId++);
          roles.push(role);
        }
      }
    }
    events.push({ op: 'edit', view: pieces });
    view = nextView;
  };

  const segment = (k: number) => {
    if (k > 0 && rng.chance(k < edits ? 0.15 : 0.05)) return; // no appends: the next branch can be a prefix of this one
    let made = 0;
    const target = Math.max(1, Math.round(perSegment * (0.5 + rng.next())));
    if (k === 0) {
      const n = rng.int(1, chunk);
      append('prompt', n);
      made += n;
    }
    while (made < target && nextId < cap) {
      const r = rng.next();
      const role: AppendRole = r < 0.45 ? 'act' : r < 0.9 ? 'obs' : 'prompt';
      const n = rng.int(1, Math.min(chunk, Math.max(1, target - made)));
      append(role, n);
      made += n;
    }
  };

  for (let k = 0; k <= edits; k++) {
    if (k > 0) edit();
    segment(k);
  }

  const rollout: RolloutJson = {
    format: ROLLOUT_FORMAT,
    id: options.id ?? `random-${options.seed}`,
    vocab,
    tokenizer: 'byte',
    events,
  };
  if (rng.chance(0.5)) rollout.reward = rng.chance(0.5) ? 1 : 0;
  if (rng.chance(0.3)) rollout.group = `g${rng.int(0, 3)}`;
  rollout.meta = { generator: { seed: options.seed, shapes } };
  return { rollout, length: nextId };
}
