// Find across a rollout and the jumps of the context panes: text matches as physical id ranges
// (searched message by message in the decoded text), and for every place a reader jumps to
// (a match, an edit, an observation, a diverging leaf) the target whose panes show it.
import { bisectLeft, bisectRight } from 'd3';
import { decodeTokens, GLYPH } from './contextText';
import { messagesOf } from './contextModel';
import type { ViewData } from './viewData';

/** A rollout's text for search: per message, its lowercased text and the ids of every UTF-16 unit. */
interface RolloutText {
  text: string[];
  /** Per message, per unit: the first id and one past the last id of its character. */
  unitFirst: Int32Array[];
  unitEnd: Int32Array[];
}

const textCache = new WeakMap<ViewData, RolloutText>();

function rolloutText(view: ViewData): RolloutText {
  let t = textCache.get(view);
  if (t) return t;
  const { list } = messagesOf(view);
  const text: string[] = [];
  const unitFirst: Int32Array[] = [];
  const unitEnd: Int32Array[] = [];
  for (const m of list) {
    const glyphs = decodeTokens(view.tokenizer, view.rollout.tokens.subarray(m.first, m.first + m.count));
    let s = '';
    const first: number[] = [];
    const end: number[] = [];
    for (const g of glyphs) {
      // Special tokens are not text: each stands as one sentinel character (U+FFFF, a noncharacter no query contains), so no match spans one.
      const unit = g.kind === GLYPH.special ? '\uffff' : g.raw.toLowerCase();
      s += unit;
      for (let u = 0; u < unit.length; u++) {
        first.push(m.first + g.first);
        end.push(m.first + g.end);
      }
    }
    text.push(s);
    unitFirst.push(Int32Array.from(first));
    unitEnd.push(Int32Array.from(end));
  }
  textCache.set(view, (t = { text, unitFirst, unitEnd }));
  return t;
}

/** More matches than this are not listed (the count then reads "5000+"). */
export const MAX_MATCHES = 5000;

export interface Matches {
  /** Sorted, disjoint id ranges [first, end) flattened. */
  ranges: Int32Array;
  count: number;
  capped: boolean;
}

const NO_MATCHES: Matches = { ranges: new Int32Array(0), count: 0, capped: false };
const matchCache = new WeakMap<ViewData, Map<string, Matches>>();

/** Case-insensitive matches of `query` in the rollout's text, within messages, in id order (cached per view and query). */
export function findMatches(view: ViewData, query: string): Matches {
  const q = query.toLowerCase();
  if (!q) return NO_MATCHES;
  let byQuery = matchCache.get(view);
  if (!byQuery) matchCache.set(view, (byQuery = new Map()));
  const hit = byQuery.get(q);
  if (hit) return hit;
  const t = rolloutText(view);
  const ranges: number[] = [];
  let capped = false;
  outer: for (let m = 0; m < t.text.length; m++) {
    const s = t.text[m];
    for (let at = s.indexOf(q); at >= 0; at = s.indexOf(q, at + q.length)) {
      if (ranges.length / 2 >= MAX_MATCHES) {
        capped = true;
        break outer;
      }
      ranges.push(t.unitFirst[m][at], t.unitEnd[m][at + q.length - 1]);
    }
  }
  const out = { ranges: Int32Array.from(ranges), count: ranges.length / 2, capped };
  if (byQuery.size > 32) byQuery.clear();
  byQuery.set(q, out);
  return out;
}

/** Index of the match range holding `id`, or -1 (binary search over the sorted ranges). */
export function matchAt(matches: Matches, id: number): number {
  let lo = 0;
  let hi = matches.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (matches.ranges[mid * 2 + 1] <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo < matches.count && matches.ranges[lo * 2] <= id ? lo : -1;
}

/** Whether `id` is in branch k: created by the end of segment k and not evicted by edit k or earlier. */
export function inBranch(view: ViewData, id: number, k: number): boolean {
  const evicted = messagesOf(view).evictedBy[id];
  return view.rollout.segments[id] <= k && (evicted === 0 || evicted > k);
}

/**
 * The target whose panes best show `id`: the first target at or after it whose live prefix holds it
 * (what the policy saw), else the first target after it (its Naive-Full prefix shows it); null when
 * no target comes after it.
 */
export function readerOf(view: ViewData, id: number): number | null {
  const targets = view.rollout.targets;
  const evicted = messagesOf(view).evictedBy[id];
  const start = bisectLeft(targets, id);
  for (let i = start; i < targets.length; i++) {
    const t = targets[i];
    if (t === id) return t;
    const k = view.rollout.segments[t];
    if (evicted && k >= evicted) break;
    if (inBranch(view, id, k)) return t;
  }
  const after = bisectRight(targets, id);
  return after < targets.length ? targets[after] : null;
}

/** A place to jump to: the ids to reveal and the target to select. */
export interface Jump {
  target: number;
  first: number;
  end: number;
}

/** The kinds of place the find bar jumps to. */
export const JUMP_KINDS = ['edit', 'obs', 'diverging'] as const;
export type JumpKind = (typeof JUMP_KINDS)[number];

const jumpCache = new WeakMap<ViewData, Partial<Record<JumpKind, Jump[]>>>();

/** Every jump of a kind, sorted by target: edits (their first target; its live prefix holds what the edit inserted), observations (the target that reads each), diverging leaves. */
export function jumpsOf(view: ViewData, kind: JumpKind): Jump[] {
  let byKind = jumpCache.get(view);
  if (!byKind) jumpCache.set(view, (byKind = {}));
  const cached = byKind[kind];
  if (cached) return cached;
  const { rollout, tree } = view;
  const list: Jump[] = [];
  if (kind === 'edit') {
    for (const edit of tree.edits) {
      const i = firstTargetFrom(rollout.segments, rollout.targets, edit.edit);
      if (i < 0) continue;
      const reveal = edit.inserted.count ? edit.inserted.first : edit.evicted.length ? edit.evicted[0] : rollout.targets[i];
      const end = edit.inserted.count ? edit.inserted.first + edit.inserted.count : reveal + 1;
      list.push({ target: rollout.targets[i], first: reveal, end });
    }
  } else if (kind === 'obs') {
    for (const m of messagesOf(view).list) {
      if (m.role !== 'obs' || m.edit) continue;
      const target = readerOf(view, m.first);
      if (target !== null) list.push({ target, first: m.first, end: m.first + m.count });
    }
    list.sort((a, b) => a.target - b.target || a.first - b.first);
  } else {
    for (const t of tree.divergingLeaves) list.push({ target: t, first: t, end: t + 1 });
  }
  byKind[kind] = list;
  return list;
}

/** Index of the first target in segment ≥ k, or -1 (segments are non-decreasing along targets). */
function firstTargetFrom(segments: Int32Array, targets: Int32Array, k: number): number {
  let lo = 0;
  let hi = targets.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (segments[targets[mid]] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo < targets.length ? lo : -1;
}

/** The next (delta 1) or previous (delta -1) jump from the selected target: the first whose target lies after it (before it). */
export function stepJump(jumps: readonly Jump[], selected: number | null, delta: 1 | -1): Jump | null {
  if (!jumps.length) return null;
  if (selected === null) return delta > 0 ? jumps[0] : jumps[jumps.length - 1];
  if (delta > 0) return jumps.find((j) => j.target > selected) ?? null;
  for (let i = jumps.length - 1; i >= 0; i--) if (jumps[i].target < selected) return jumps[i];
  return null;
}

/** The match `delta` steps from `current` (wrapping; from none, the first or the last), with the target that shows it. */
export function stepMatch(
  view: ViewData,
  matches: Matches,
  current: number,
  delta: 1 | -1,
  selected: number | null = null,
): { index: number; jump: Jump } | null {
  if (!matches.count) return null;
  const index = current < 0 ? (delta > 0 ? 0 : matches.count - 1) : (current + delta + matches.count) % matches.count;
  const first = matches.ranges[index * 2];
  const end = matches.ranges[index * 2 + 1];
  const target = targetShowing(view, selected, first);
  return target === null ? null : { index, jump: { target, first, end } };
}

/** The selected target when its live prefix holds `id` (so find does not move it needlessly), else `readerOf(id)`. */
export function targetShowing(view: ViewData, selected: number | null, id: number): number | null {
  if (selected !== null && (selected === id || (id < selected && inBranch(view, id, view.rollout.segments[selected])))) return selected;
  return readerOf(view, id);
}
