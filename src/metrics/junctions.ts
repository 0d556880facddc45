// Drift per edit (docs/metrics.md, "Drift per edit"): for each edit of a rollout, the targets it makes
// diverge and, per scoring method, the mean signed drift and logdiff against the exact live-prefix score
// on them, with the largest single-target drifts, and their sums per editor over a set (the harness component that
// made the edits). Pure: the tree, the scores and a token's text come in.

import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { ConditioningTree } from '../tree/types';

/** Largest single-target drifts kept per method and edit. */
export const JUNCTION_LARGEST = 3;
/** Tokens of the live prefix shown before a target in `context`. */
export const JUNCTION_CONTEXT = 8;

export interface JunctionTarget {
  id: number;
  /** ℓ_m − ℓ_live at this target. */
  drift: number;
  /** The target token as text. */
  token: string;
  /** The last JUNCTION_CONTEXT tokens of its live prefix, as text. */
  context: string;
}

export interface JunctionMethod {
  /** The edit's targets this method scores. */
  n: number;
  /** mean (ℓ_m − ℓ_live) and mean |ℓ_m − ℓ_live| over them; null when n = 0. */
  mu: number | null;
  logdiff: number | null;
  /** Its largest |ℓ_m − ℓ_live| among them, largest first (differences of 0 left out). */
  largest: JunctionTarget[];
}

export interface Junction {
  /** The rollout's id and its index in the file. */
  rollout: string;
  rolloutIndex: number;
  /** What made the rollout's edits (editorOf): the memory editor of a generated rollout, else the harness it was imported from. */
  editor: string;
  /** 1..K, and its index in the rollout's events. */
  edit: number;
  event: number;
  /** Ids the edit takes out of the live view, and ids it inserts (a summary). */
  evicted: number;
  inserted: number;
  /**
   * before: targets generated before the edit whose live prefix held an id it evicts (their final prefix lacks it:
   * time-travel leakage); after: targets of the segment it opens, when it evicts anything (their tape prefix holds
   * what it evicted: stale context). Ascending ids.
   */
  targets: { before: number[]; after: number[] };
  methods: Record<SequenceMethod, JunctionMethod>;
  /** max over methods of Σ |ℓ_m − ℓ_live| over the edit's targets, in nats: what the table sorts by. */
  cost: number;
}

export interface JunctionOptions {
  /** A token as text (default `#value`). */
  text?: (token: number) => string;
  rolloutIndex?: number;
}

/**
 * The junctions of one rollout from every sequence method's scores of it (target id → log-probability);
 * the reference is logit-tree's score (each target under its live prefix).
 */
export function rolloutJunctions(
  tree: ConditioningTree,
  scores: Record<SequenceMethod, ReadonlyMap<number, number>>,
  options: JunctionOptions = {},
): Junction[] {
  const { rollout } = tree;
  const text = options.text ?? ((token: number) => `#${token}`);
  const live = scores['logit-tree'];
  const editor = editorOf(rollout);
  const evictedMark = new Uint8Array(rollout.length);
  return tree.edits.map((e): Junction => {
    evictedMark.fill(0);
    for (const id of e.evicted) evictedMark[id] = 1;
    const before: number[] = [];
    const after: number[] = [];
    for (const t of tree.targets) {
      const segment = rollout.segments[t];
      if (segment < e.edit) {
        if (tree.livePrefix(t).some((id) => evictedMark[id] === 1)) before.push(t);
      } else if (segment === e.edit && e.evicted.length > 0) after.push(t);
    }
    const ids = [...before, ...after];
    const methods = {} as Record<SequenceMethod, JunctionMethod>;
    let cost = 0;
    for (const method of SEQUENCE_METHODS) {
      const drifts: { id: number; drift: number }[] = [];
      for (const id of ids) {
        const m = scores[method].get(id);
        const ref = live.get(id);
        if (m !== undefined && ref !== undefined) drifts.push({ id, drift: m - ref });
      }
      const n = drifts.length;
      const abs = drifts.reduce((s, d) => s + Math.abs(d.drift), 0);
      cost = Math.max(cost, abs);
      const largest = drifts
        .filter((d) => d.drift !== 0)
        .sort((a, b) => Math.abs(b.drift) - Math.abs(a.drift) || a.id - b.id)
        .slice(0, JUNCTION_LARGEST)
        .map(({ id, drift }) => {
          const prefix = tree.livePrefix(id);
          const context = Array.from(prefix.subarray(Math.max(0, prefix.length - JUNCTION_CONTEXT)), (p) => text(rollout.tokens[p])).join('');
          return { id, drift, token: text(rollout.tokens[id]), context };
        });
      methods[method] = {
        n,
        mu: n ? drifts.reduce((s, d) => s + d.drift, 0) / n : null,
        logdiff: n ? abs / n : null,
        largest,
      };
    }
    return {
      rollout: rollout.id,
      rolloutIndex: options.rolloutIndex ?? 0,
      editor,
      edit: e.edit,
      event: e.event,
      evicted: e.evicted.length,
      inserted: e.inserted.count,
      targets: { before, after },
      methods,
      cost,
    };
  });
}

/** Junctions by cost, the costliest first (ties: file order). */
export function byCost(junctions: readonly Junction[]): Junction[] {
  return [...junctions].sort((a, b) => b.cost - a.cost || a.rolloutIndex - b.rolloutIndex || a.edit - b.edit);
}

/** An editor name when no record says one. */
export const UNKNOWN_EDITOR = 'unknown';

/**
 * What made a rollout's edits, from its `meta`: `editor` (mw generate writes the memory editor: window, compact,
 * stack, fold), else `source` (an importer writes the harness it read: agent-session, codex, gemini, openhands,
 * chat, verl), else the turns importer's `import.format`, else UNKNOWN_EDITOR. Edits themselves carry no editor
 * (docs/rollout-format.md).
 */
export function editorOf(rollout: { meta?: unknown }): string {
  const meta = rollout.meta;
  if (typeof meta !== 'object' || meta === null) return UNKNOWN_EDITOR;
  const m = meta as { editor?: unknown; source?: unknown; import?: { format?: unknown } };
  for (const name of [m.editor, m.source, m.import?.format]) if (typeof name === 'string' && name) return name;
  return UNKNOWN_EDITOR;
}

/** One method's drift summed over an editor's edits (a target two edits make diverge counts for each). */
export interface EditorMethod {
  /** Targets summed over (Σ of the edits' n). */
  n: number;
  /** Σ (ℓ_m − ℓ_live) and Σ |ℓ_m − ℓ_live|, nats. */
  sum: number;
  abs: number;
  /** sum / n and abs / n; null when n = 0. */
  mu: number | null;
  logdiff: number | null;
}

/** Drift per edit summed per editor over a set of rollouts (`mw drift --json`'s `byEditor`). */
export interface EditorSum {
  editor: string;
  /** Rollouts of this editor with at least one edit, and their edits. */
  rollouts: number;
  edits: number;
  /** Σ of the edits' targets (before + after). */
  targets: number;
  methods: Record<SequenceMethod, EditorMethod>;
  /** Σ of the edits' costs, nats: what the table sorts by. */
  cost: number;
}

/** The junctions of a set summed per editor, the costliest editor first (ties: by name). */
export function editorSums(junctions: readonly Junction[]): EditorSum[] {
  const out = new Map<string, EditorSum & { seen: Set<number> }>();
  for (const j of junctions) {
    let e = out.get(j.editor);
    if (!e) {
      const methods = Object.fromEntries(SEQUENCE_METHODS.map((m) => [m, { n: 0, sum: 0, abs: 0, mu: null, logdiff: null }])) as Record<
        SequenceMethod,
        EditorMethod
      >;
      e = { editor: j.editor, rollouts: 0, edits: 0, targets: 0, methods, cost: 0, seen: new Set() };
      out.set(j.editor, e);
    }
    e.seen.add(j.rolloutIndex);
    e.edits++;
    e.targets += j.targets.before.length + j.targets.after.length;
    e.cost += j.cost;
    for (const method of SEQUENCE_METHODS) {
      const m = j.methods[method];
      if (!m.n) continue;
      const sum = e.methods[method];
      sum.n += m.n;
      sum.sum += m.mu! * m.n;
      sum.abs += m.logdiff! * m.n;
    }
  }
  return finish([...out.values()].map(({ seen, ...e }) => ({ ...e, rollouts: seen.size })));
}

function finish(sums: EditorSum[]): EditorSum[] {
  for (const e of sums)
    for (const m of Object.values(e.methods)) {
      m.mu = m.n ? m.sum / m.n : null;
      m.logdiff = m.n ? m.abs / m.n : null;
    }
  return sums.sort((a, b) => b.cost - a.cost || a.editor.localeCompare(b.editor));
}

/** Sums of disjoint sets of rollouts (the app's data-set rows, each its rollout's editorSums) merged per editor. */
export function mergeEditorSums(parts: readonly (readonly EditorSum[])[]): EditorSum[] {
  const out = new Map<string, EditorSum>();
  for (const part of parts)
    for (const e of part) {
      const into = out.get(e.editor);
      if (!into) {
        out.set(e.editor, { ...e, methods: Object.fromEntries(Object.entries(e.methods).map(([m, f]) => [m, { ...f }])) as EditorSum['methods'] });
        continue;
      }
      into.rollouts += e.rollouts;
      into.edits += e.edits;
      into.targets += e.targets;
      into.cost += e.cost;
      for (const method of SEQUENCE_METHODS) {
        into.methods[method].n += e.methods[method].n;
        into.methods[method].sum += e.methods[method].sum;
        into.methods[method].abs += e.methods[method].abs;
      }
    }
  return finish([...out.values()]);
}
