// The one place the UI meets the core: a validated rollout, its conditioning tree (deriveTree) and
// the small per-view inputs mapped from them. Everything semantic (branches, prefixes, eviction
// mass, divergence, the trie, scoring nodes) comes from src/tree; this file only re-shapes it.
import { getTokenizer, ROLE_CODE, type Rollout, type Tokenizer } from '../../rollout';
import { deriveTree, type ConditioningTree } from '../../tree';
import { CELL, type CellClass } from './cells';
import { idRuns, type TapeView } from './staircaseModel';
import type { TrieView } from './treeModel';

export interface ViewData {
  rollout: Rollout;
  tree: ConditioningTree;
  tokenizer: Tokenizer | undefined;
  /** Per id: the edit (1..K) that inserted it, 0 for appended tokens. */
  insertedBy: Int32Array;
  tape: TapeView;
  trie: TrieView;
  /** Whether any piece was given as text (cells then show their characters). */
  textual: boolean;
}

const ROLE_NAMES = ['prompt', 'obs', 'act', 'summary'] as const;

export function roleName(code: number): string {
  return ROLE_NAMES[code] ?? `role ${code}`;
}

export function buildViewData(rollout: Rollout, tree: ConditioningTree = deriveTree(rollout)): ViewData {
  const L = rollout.length;
  const insertedBy = new Int32Array(L);
  for (const edit of tree.edits) {
    for (let i = 0; i < edit.inserted.count; i++) insertedBy[edit.inserted.first + i] = edit.edit;
  }
  const cls = new Uint8Array(L);
  for (let id = 0; id < L; id++) {
    const role = rollout.roles[id];
    let c: CellClass;
    if (insertedBy[id] || role === ROLE_CODE.summary) c = CELL.inserted;
    else if (role === ROLE_CODE.prompt) c = CELL.prompt;
    else if (role === ROLE_CODE.obs) c = CELL.obs;
    else c = CELL.act;
    cls[id] = c;
  }
  const branches = Array.from({ length: tree.K + 1 }, (_, k) => tree.branchIds(k));
  const textual = rollout.events.some(
    (e) => (e.op === 'append' && e.text !== undefined) || (e.op === 'edit' && e.view.some((p) => 'insert' in p && p.insert.text !== undefined)),
  );
  return {
    rollout,
    tree,
    tokenizer: getTokenizer(rollout.tokenizer),
    insertedBy,
    tape: { length: L, cls, segment: rollout.segments, branches, branchRuns: branches.map(idRuns), targets: rollout.targets },
    trie: {
      id: tree.packedOrder,
      parent: tree.parent,
      depth: tree.depth,
      branchLeaf: tree.branchLeaf,
      cls,
      isTarget: rollout.isTarget,
      segment: rollout.segments,
    },
    textual,
  };
}

/** A token's label: the tokenizer's, or the raw value when the tokenizer is unknown. */
export function tokenLabel(view: ViewData, id: number): string {
  const value = view.rollout.tokens[id];
  return view.tokenizer ? view.tokenizer.label(value) : `#${value}`;
}

/** Escapes a tokenizer writes into a label: control bytes, bytes of a split character (\x0a, \n, \u0085). */
const ESCAPE = /\\(x[0-9a-f]{2}|[ntr]|u[0-9a-f]{4})/;

/** A token for display: its text quoted (so GPT-2's leading space shows: “ world”), escapes and specials as the tokenizer names them (\x0a, <act>). */
export function tokenDisplay(view: ViewData, id: number): string {
  const label = tokenLabel(view, id);
  const text = view.tokenizer?.bytes(view.rollout.tokens[id]) != null;
  return label.length === 1 || (text && label.length > 0 && !ESCAPE.test(label)) ? `“${label}”` : label;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What a staircase cell shows of its token, or null (a special token, a space, bytes that are no
 * whole character): a byte's character; a word piece without its leading spaces (the tooltip keeps
 * them), a line break as ⏎.
 */
export function tokenGlyph(view: ViewData, id: number): string | null {
  const value = view.rollout.tokens[id];
  if (!view.tokenizer) return null;
  if (view.tokenizer.name === 'byte') return value > 0x20 && value < 0x7f ? String.fromCharCode(value) : null;
  const bytes = view.tokenizer.bytes(value);
  if (!bytes) return null;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return null;
  }
  if (/^\s+$/.test(text)) return text.includes('\n') ? '⏎' : text.includes('\t') ? '→' : null;
  const shown = text.trimStart().replace(/[\u0000-\u001f\u007f-\u009f]/g, '·');
  return shown || null;
}

export interface TargetFacts {
  id: number;
  segment: number;
  dropped: boolean;
  diverging: boolean;
  /** null for dropped targets. */
  evictionMass: number | null;
  /** Packed index of the trie node that scores it, and that node's depth (logical position). */
  scoringNode: number;
  depth: number;
  livePrefixLength: number;
  finalPrefixLength: number | null;
  fullPrefixLength: number;
  /** Rollout-time log-probability from the file, or null. */
  rolloutLogprob: number | null;
}

export function targetFacts(view: ViewData, id: number): TargetFacts {
  const { tree, rollout } = view;
  const finalPos = tree.finalPosition[id];
  const lp = rollout.logprobs[id];
  return {
    id,
    segment: rollout.segments[id],
    dropped: tree.dropped[id] === 1,
    diverging: tree.diverging[id] === 1,
    evictionMass: tree.evictionMass[id] >= 0 ? tree.evictionMass[id] : null,
    scoringNode: tree.scoringNode[id],
    depth: tree.scoringNode[id] >= 0 ? tree.depth[tree.scoringNode[id]] : -1,
    livePrefixLength: tree.ownPosition[id],
    finalPrefixLength: finalPos > 0 ? finalPos : null,
    fullPrefixLength: id,
    rolloutLogprob: Number.isNaN(lp) ? null : lp,
  };
}

/** The inspector's final-prefix cell: its length, or, for a dropped target, that it has none and why. */
export function finalPrefixText(facts: TargetFacts): { text: string; title: string } {
  if (facts.finalPrefixLength !== null) return { text: String(facts.finalPrefixLength), title: 'Ids before it in the final walk' };
  return {
    text: 'none: dropped',
    title: 'The final walk lost this target (or holds it first): Naive-Compressed and SDCC do not score or train it',
  };
}

/** The target a freshly opened rollout selects: its first diverging leaf, else its first target. */
export function defaultTarget(view: ViewData): number | null {
  if (view.tree.divergingLeaves.length) return view.tree.divergingLeaves[0];
  return view.rollout.targets.length ? view.rollout.targets[0] : null;
}
