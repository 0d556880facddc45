// View-model of the context panes: the selected target's live prefix (what the policy saw) and
// each naive replay's prefix, aligned by physical id, as whole messages (one per append event or
// inserted piece) of readable text, cut into rows for a virtualised list. Ids the replay lacks are
// placed after the last live id it shows before them, so a pane reads in the replay's own order.
import type { Method } from '../../plan';
import type { ROLES } from '../../rollout';
import { copiedText, decodePieces, GLYPH, tokenLabelText, tokenPiece, type Glyph } from './contextText';
import { methodPrefix } from './methodViews';
import { PREFIX_STATE, type PrefixState } from './prefixStates';
import type { ViewData } from './viewData';

/** One append event or one inserted piece: a block of the panes. */
export interface Message {
  index: number;
  /** Its ids are first .. first + count - 1 (events and pieces create consecutive ids). */
  first: number;
  count: number;
  role: (typeof ROLES)[number];
  /** The edit (1..K) that inserted it, 0 for an appended message. */
  edit: number;
  /** Index of its event in `rollout.events`. */
  event: number;
}

export interface Messages {
  list: Message[];
  /** Per physical id: its message. */
  of: Int32Array;
  /** Per physical id: the edit that evicted it from the live view, 0 while it stays live. */
  evictedBy: Int32Array;
}

const messageCache = new WeakMap<ViewData, Messages>();

/** The rollout's messages, in creation order, and who evicted each id (cached per view). */
export function messagesOf(view: ViewData): Messages {
  let m = messageCache.get(view);
  if (m) return m;
  const { rollout, tree } = view;
  const list: Message[] = [];
  const of = new Int32Array(rollout.length);
  const add = (first: number, count: number, role: Message['role'], edit: number, event: number) => {
    if (count <= 0) return;
    of.fill(list.length, first, first + count);
    list.push({ index: list.length, first, count, role, edit, event });
  };
  rollout.events.forEach((e, event) => {
    if (e.op === 'append') add(e.first, e.count, e.role, 0, event);
    else for (const p of e.view) if ('insert' in p) add(p.insert.first, p.insert.count, p.insert.role, e.edit, event);
  });
  const evictedBy = new Int32Array(rollout.length);
  for (const edit of tree.edits) for (const id of edit.evicted) evictedBy[id] = edit.edit;
  messageCache.set(view, (m = { list, of, evictedBy }));
  return m;
}

/** A replay's prefix aligned with the live prefix by id: entries in display order with their state. */
export interface AlignedPrefix {
  ids: Int32Array;
  /** PREFIX_STATE per entry: shared, stale (evicted before the target, revived), future (written after it), missing (the policy saw it; the replay lacks it). */
  state: Uint8Array;
  /** The replay's prefix length (entries that are not missing). */
  shown: number;
  missing: number;
  stale: number;
  future: number;
}

/**
 * Aligns `prefix` (a replay's ids, in its order) with `live` (the live prefix) by id: the replay's
 * ids in its order, each shared / stale / future, and every live id it lacks inserted as missing
 * right after the last live id before it that the replay shows (at the start when there is none).
 */
export function alignPrefix(live: ArrayLike<number>, prefix: ArrayLike<number>, target: number, L: number): AlignedPrefix {
  const inPrefix = new Uint8Array(L);
  for (let i = 0; i < prefix.length; i++) inPrefix[prefix[i]] = 1;
  const inLive = new Uint8Array(L);
  for (let i = 0; i < live.length; i++) inLive[live[i]] = 1;
  // Missing ids grouped by their anchor: the last live id before them that the replay shows.
  const after = new Map<number, number[]>();
  let anchor = -1;
  for (let i = 0; i < live.length; i++) {
    const id = live[i];
    if (inPrefix[id]) anchor = id;
    else {
      let list = after.get(anchor);
      if (!list) after.set(anchor, (list = []));
      list.push(id);
    }
  }
  const n = prefix.length + (live.length - countShared(live, inPrefix));
  const ids = new Int32Array(n);
  const state = new Uint8Array(n);
  let at = 0;
  let stale = 0;
  let future = 0;
  const pushMissing = (a: number) => {
    const list = after.get(a);
    if (list) for (const id of list) (ids[at] = id), (state[at++] = PREFIX_STATE.missing);
  };
  pushMissing(-1);
  for (let i = 0; i < prefix.length; i++) {
    const id = prefix[i];
    ids[at] = id;
    if (inLive[id]) state[at++] = PREFIX_STATE.shared;
    else if (id > target) (state[at++] = PREFIX_STATE.future), future++;
    else (state[at++] = PREFIX_STATE.stale), stale++;
    if (inLive[id]) pushMissing(id);
  }
  return { ids, state, shown: prefix.length, missing: n - prefix.length, stale, future };
}

function countShared(live: ArrayLike<number>, inPrefix: Uint8Array): number {
  let c = 0;
  for (let i = 0; i < live.length; i++) c += inPrefix[live[i]];
  return c;
}

// --- Panes ------------------------------------------------------------------------------------

/** The three panes: what the policy saw, and the two flattened replays. */
export const PANES = ['live', 'naive-compressed', 'naive-full'] as const;
export type PaneKind = (typeof PANES)[number];

/** A maximal run of entries of one message. */
export interface PaneBlock {
  message: number;
  /** Entries [e0, e1) and their glyphs [g0, g1). */
  e0: number;
  e1: number;
  g0: number;
  g1: number;
  /** The state all its entries share, or PREFIX_STATE.none when they differ. */
  state: PrefixState;
}

/** A row of the virtualised list: a block's heading, a line of its text, or the target itself. */
export interface PaneRow {
  kind: 'head' | 'line' | 'target';
  block: number;
  /** Glyphs [g0, g1) on a line. */
  g0: number;
  g1: number;
}

export interface ContextPane {
  kind: PaneKind;
  target: number;
  /** False when the replay does not score the target (a dropped target under Naive-Compressed). */
  scored: boolean;
  /** Entries in display order: ids and their PREFIX_STATE. */
  ids: Int32Array;
  state: Uint8Array;
  /** Prefix length the pane shows the model (entries not missing), and the diff counts. */
  tokens: number;
  missing: number;
  stale: number;
  future: number;
  glyphs: Glyph[];
  /** Per glyph: its entries [glyphEntry, glyphEnd) (consecutive ids of one message). */
  glyphEntry: Int32Array;
  glyphEnd: Int32Array;
  /** Per glyph: the state of its first entry. */
  glyphState: Uint8Array;
  blocks: PaneBlock[];
  rows: PaneRow[];
  /** Per entry: the row that shows it. */
  entryRow: Int32Array;
}

/** A line is cut after this many glyphs (at a space when one is near) so no row grows unbounded. */
export const ROW_GLYPHS = 400;

const METHOD_OF: Record<Exclude<PaneKind, 'live'>, Method> = { 'naive-compressed': 'naive-compressed', 'naive-full': 'naive-full' };

/** The ids a pane shows for target t: the live prefix, or the replay's prefix from its scoring plan (null: not scored). */
export function paneIds(view: ViewData, kind: PaneKind, target: number): Int32Array | null {
  if (kind === 'live') return view.tree.livePrefix(target);
  return methodPrefix(view, METHOD_OF[kind], target).prefix;
}

export interface PaneOptions {
  /** Start a new row after each newline (true for text; token lists read better unbroken). */
  breakLines?: boolean;
}

export function buildPane(view: ViewData, kind: PaneKind, target: number, options: PaneOptions = {}): ContextPane {
  const live = view.tree.livePrefix(target);
  const prefix = paneIds(view, kind, target);
  const aligned =
    kind === 'live' || !prefix ? alignPrefix(live, prefix ?? live, target, view.rollout.length) : alignPrefix(live, prefix, target, view.rollout.length);
  if (!prefix) {
    // Not scored: nothing is shown to the model; the live prefix is listed as missing.
    aligned.state.fill(PREFIX_STATE.missing);
    aligned.shown = 0;
    aligned.missing = aligned.ids.length;
  }
  return layoutPane(view, kind, target, !!prefix, aligned, options.breakLines ?? true);
}

function layoutPane(view: ViewData, kind: PaneKind, target: number, scored: boolean, a: AlignedPrefix, breakLines: boolean): ContextPane {
  const { ids, state } = a;
  const messages = messagesOf(view);
  const tokens = view.rollout.tokens;
  const glyphs: Glyph[] = [];
  const glyphEntry: number[] = [];
  const glyphEnd: number[] = [];
  const blocks: PaneBlock[] = [];
  const n = ids.length;
  let e = 0;
  while (e < n) {
    const message = messages.of[ids[e]];
    let e1 = e + 1;
    while (e1 < n && messages.of[ids[e1]] === message) e1++;
    const g0 = glyphs.length;
    // Decode runs of consecutive ids (a block can hold a gap where an edit kept two parts of one message).
    let r = e;
    while (r < e1) {
      let r1 = r + 1;
      while (r1 < e1 && ids[r1] === ids[r1 - 1] + 1) r1++;
      const pieces = [];
      for (let i = r; i < r1; i++) pieces.push(tokenPiece(view.tokenizer, tokens[ids[i]]));
      for (const g of decodePieces(pieces)) {
        glyphs.push(g);
        glyphEntry.push(r + g.first);
        glyphEnd.push(r + g.end);
      }
      r = r1;
    }
    let s: PrefixState = state[e] as PrefixState;
    for (let i = e + 1; i < e1; i++) if (state[i] !== s) s = PREFIX_STATE.none;
    blocks.push({ message, e0: e, e1, g0, g1: glyphs.length, state: s });
    e = e1;
  }
  const glyphState = new Uint8Array(glyphs.length);
  for (let g = 0; g < glyphs.length; g++) glyphState[g] = state[glyphEntry[g]];

  const rows: PaneRow[] = [];
  const entryRow = new Int32Array(n);
  blocks.forEach((b, bi) => {
    rows.push({ kind: 'head', block: bi, g0: b.g0, g1: b.g0 });
    let g = b.g0;
    while (g < b.g1) {
      let end = g;
      while (end < b.g1 && end - g < ROW_GLYPHS && !(breakLines && glyphs[end].breaks)) end++;
      if (end < b.g1 && breakLines && glyphs[end].breaks) end++;
      else if (end < b.g1) {
        // Cut a long line after its last space in the final quarter, if any.
        for (let k = end - 1; k > g + (ROW_GLYPHS * 3) / 4; k--) {
          if (glyphs[k].raw === ' ') {
            end = k + 1;
            break;
          }
        }
      }
      const row = rows.length;
      rows.push({ kind: 'line', block: bi, g0: g, g1: end });
      for (let k = g; k < end; k++) entryRow.fill(row, glyphEntry[k], glyphEnd[k]);
      g = end;
    }
    if (b.g1 === b.g0) entryRow.fill(rows.length - 1, b.e0, b.e1);
  });
  rows.push({ kind: 'target', block: -1, g0: glyphs.length, g1: glyphs.length });
  return {
    kind,
    target,
    scored,
    ids,
    state,
    tokens: a.shown,
    missing: a.missing,
    stale: a.stale,
    future: a.future,
    glyphs,
    glyphEntry: Int32Array.from(glyphEntry),
    glyphEnd: Int32Array.from(glyphEnd),
    glyphState,
    blocks,
    rows,
    entryRow,
  };
}

/** The entry of `id` in a pane, or -1. */
export function entryOf(pane: ContextPane, id: number): number {
  return pane.ids.indexOf(id);
}

/** The row to scroll to for an id: its own row, else the row of the nearest id before it that the pane holds. */
export function rowOfId(pane: ContextPane, id: number): number {
  const e = entryOf(pane, id);
  if (e >= 0) return pane.entryRow[e];
  let best = -1;
  for (let i = 0; i < pane.ids.length; i++) if (pane.ids[i] < id && (best < 0 || pane.ids[i] > pane.ids[best])) best = i;
  return best >= 0 ? pane.entryRow[best] : 0;
}

/** Ids [first, end) of a glyph (consecutive: one character's tokens). */
export function glyphIds(pane: ContextPane, g: number): { first: number; end: number } {
  return { first: pane.ids[pane.glyphEntry[g]], end: pane.ids[pane.glyphEnd[g] - 1] + 1 };
}

/** The first row at or after `from` (wrapping) whose block differs from the live prefix; -1 when none does. */
export function nextDifferenceRow(pane: ContextPane, from: number, delta: 1 | -1 = 1): number {
  const n = pane.rows.length;
  for (let k = 1; k <= n; k++) {
    const r = (((from + delta * k) % n) + n) % n;
    const row = pane.rows[r];
    if (row.kind !== 'head') continue;
    const b = pane.blocks[row.block];
    if (b.state !== PREFIX_STATE.shared) {
      // The row of the first entry that differs.
      for (let e = b.e0; e < b.e1; e++) if (pane.state[e] !== PREFIX_STATE.shared) return b.state === PREFIX_STATE.none ? pane.entryRow[e] : r;
    }
  }
  return -1;
}

// --- Words for people -------------------------------------------------------------------------

export const ROLE_WORDS: Record<Message['role'], string> = { prompt: 'prompt', obs: 'observation', act: 'action', summary: 'summary' };

/** A block's heading: its role, where it came from, its ids, and how the replay differs. */
export function blockHeading(view: ViewData, pane: ContextPane, block: PaneBlock): { role: string; origin: string; ids: string; note: string } {
  const messages = messagesOf(view);
  const m = messages.list[block.message];
  const first = pane.ids[block.e0];
  const last = pane.ids[block.e1 - 1];
  const ids = block.e1 - block.e0 === 1 ? `id ${first}` : `ids ${first}–${last}`;
  const origin = m.edit ? `inserted by edit ${m.edit}` : m.role === 'act' ? 'policy output' : '';
  let note = '';
  const evicted = messages.evictedBy[first];
  if (block.state === PREFIX_STATE.missing)
    note = pane.scored ? `missing: the policy saw it${evicted ? `; evicted by edit ${evicted}` : ''}` : 'not shown: the replay does not score this target';
  else if (block.state === PREFIX_STATE.stale) note = `stale: evicted by edit ${evicted} before the target, revived here`;
  else if (block.state === PREFIX_STATE.future) note = `written after the target${m.edit ? ` (edit ${m.edit})` : ''}: time-travel`;
  else if (block.state === PREFIX_STATE.none) note = 'partly differs from the live prefix';
  return { role: ROLE_WORDS[m.role], origin, ids, note };
}

const STATE_WRAP: Partial<Record<PrefixState, [string, string]>> = {
  [PREFIX_STATE.missing]: ['[-', '-]'],
  [PREFIX_STATE.stale]: ['{+stale: ', '+}'],
  [PREFIX_STATE.future]: ['{+later: ', '+}'],
};

/**
 * The pane as plain text, for the clipboard: one paragraph per block headed `## role · ids`, text
 * as written (newlines are newlines), and the diff in wdiff style: `[-missing-]`, `{+stale: …+}`,
 * `{+later: …+}`.
 */
export function paneText(view: ViewData, pane: ContextPane, title: string): string {
  const out: string[] = [`# ${title}: ${pane.tokens} tokens before target ${pane.target}`];
  for (const block of pane.blocks) {
    const h = blockHeading(view, pane, block);
    out.push('', `## ${[h.role, h.origin, h.ids, h.note].filter(Boolean).join(' · ')}`);
    let text = '';
    let open: PrefixState = PREFIX_STATE.shared;
    for (let g = block.g0; g < block.g1; g++) {
      const s = pane.glyphState[g] as PrefixState;
      if (s !== open) {
        if (STATE_WRAP[open]) text += STATE_WRAP[open]![1];
        if (STATE_WRAP[s]) text += STATE_WRAP[s]![0];
        open = s;
      }
      text += copiedText(pane.glyphs[g]);
    }
    if (STATE_WRAP[open]) text += STATE_WRAP[open]![1];
    out.push(text);
  }
  return `${out.join('\n')}\n`;
}

/**
 * A token for people: its text, with what an invisible one is (`“T”`, `“ world”`, `\x18 control
 * byte`, `<act> special token`, `⏎ newline`); a token holding part of a character says so.
 */
export function tokenDescription(view: ViewData, id: number): string {
  const value = view.rollout.tokens[id];
  const text = tokenLabelText(view.tokenizer, value);
  const glyphs = decodePieces([tokenPiece(view.tokenizer, value)]);
  if (glyphs.length === 1 && glyphs[0].kind === GLYPH.special) return `${text} special token`;
  if (glyphs.length === 1 && glyphs[0].kind === GLYPH.mark) return `${text} ${markName(glyphs[0].raw)}`;
  if (glyphs.length > 0 && glyphs.every((g) => g.kind === GLYPH.text || g.kind === GLYPH.mark)) return `“${text}”`;
  return `${text} ${view.tokenizer?.name === 'byte' ? 'byte (part of a character)' : 'token (part of a character)'}`;
}

/** A token named by its physical id and its text (`id 13 · \x18 control byte`, `id 1587 · “T”`). */
export function targetLabel(view: ViewData, id: number): string {
  return `id ${id} · ${tokenDescription(view, id)}`;
}

/** Ids as runs for people: `0–1, 9–10, 7`; past `max` runs, the count of the rest. */
export function idRunsText(ids: ArrayLike<number>, max = 8): string {
  const parts: string[] = [];
  let runs = 0;
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    if (runs++ < max) parts.push(j === i ? `${ids[i]}` : `${ids[i]}–${ids[j]}`);
    i = j + 1;
  }
  return runs > max ? `${parts.join(', ')} … (+${runs - max} runs)` : parts.join(', ');
}

function markName(raw: string): string {
  if (raw === '\n') return 'newline';
  if (raw === '\t') return 'tab';
  if (raw === '\r') return 'carriage return';
  const cp = raw.codePointAt(0)!;
  return cp < 0x20 || cp === 0x7f ? 'control byte' : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The glyph kinds, re-exported for the views. */
export { GLYPH };

/**
 * A row cut to the pane's width: `row` is its index in pane.rows (heads and the target are one line each).
 * The panes virtualise these, so what is rendered is the visible lines, not the rows' hundreds of glyphs.
 */
export interface PaneLine extends PaneRow {
  row: number;
}

export interface PaneLines {
  lines: PaneLine[];
  /** Per row of pane.rows: its first line. */
  firstLine: Int32Array;
}

/** Columns a glyph takes in a monospace line: 2 for wide (East Asian, emoji) characters, chips their frame. */
export function glyphColumns(glyph: Glyph): number {
  let n = 0;
  for (const ch of glyph.shown) {
    const cp = ch.codePointAt(0) ?? 0;
    n +=
      (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff)
        ? 2
        : (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || cp >= 0x1f000
          ? 2
          : 1;
  }
  return glyph.kind === GLYPH.special ? n + 2 : n;
}

/**
 * Cuts each line row into lines of at most `capacity` (in the units of `width(g)`, at least one glyph),
 * beside a space in the line's second half when there is one, else anywhere a cut is free, else at the
 * capacity. A cut before glyph g is not free inside one token (g shares an entry with g − 1: a word
 * piece such as " in" stays one element) or where `joined(g)` (e.g. inside a find match).
 */
export function paneLines(pane: ContextPane, capacity: number, width: (g: number) => number, joined: (g: number) => boolean = () => false): PaneLines {
  const lines: PaneLine[] = [];
  const firstLine = new Int32Array(pane.rows.length);
  const free = (k: number) => pane.glyphEntry[k] >= pane.glyphEnd[k - 1] && !joined(k);
  const spaced = (k: number) => pane.glyphs[k - 1].raw === ' ' || pane.glyphs[k].raw === ' ';
  pane.rows.forEach((r, row) => {
    firstLine[row] = lines.length;
    if (r.kind !== 'line' || r.g1 - r.g0 <= 1) {
      lines.push({ ...r, row });
      return;
    }
    let g = r.g0;
    do {
      let end = g + 1;
      let used = width(g);
      while (end < r.g1 && used + width(end) <= capacity) used += width(end++);
      if (end < r.g1) {
        let cut = -1;
        for (let k = end; k > g + (end - g) / 2; k--) {
          if (spaced(k) && free(k)) {
            cut = k;
            break;
          }
        }
        for (let k = end; cut < 0 && k > g; k--) if (free(k)) cut = k;
        if (cut > 0) end = cut;
      }
      lines.push({ kind: 'line', block: r.block, g0: g, g1: end, row });
      g = end;
    } while (g < r.g1);
  });
  return { lines, firstLine };
}

/** The line to scroll to for an id: the line of its glyph in the row rowOfId gives, else that row's first line. */
export function lineOfId(pane: ContextPane, split: PaneLines, id: number): number {
  const row = rowOfId(pane, id);
  const first = split.firstLine[row];
  const e = entryOf(pane, id);
  if (e < 0) return first;
  for (let i = first; i < split.lines.length && split.lines[i].row === row; i++) {
    const l = split.lines[i];
    for (let g = l.g0; g < l.g1; g++) if (pane.glyphEntry[g] <= e && e < pane.glyphEnd[g]) return i;
  }
  return first;
}
