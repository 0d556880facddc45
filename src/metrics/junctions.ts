// Drift per edit (docs/metrics.md, "Drift per edit"): for each edit of a rollout, the targets it makes
// diverge and, per scoring method, the mean signed drift and logdiff against the exact live-prefix score
// on them, with the largest single-target drifts. Pure: the tree, the scores and a token's text come in.

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
