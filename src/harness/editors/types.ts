// Memory editors: what rewrites the live view during a rollout, as plain-data specs (recorded in
// rollouts, passed by the CLI and the browser worker) and the behaviour built from them.

import type { Block, EditPlan, LiveView } from '../live';

export const EDITOR_KINDS = ['none', 'window', 'compact', 'stack', 'fold'] as const;
export type EditorKind = (typeof EDITOR_KINDS)[number];

export interface NoneSpec {
  kind: 'none';
}

/** Drops the oldest turns while the view is over `budget` tokens, keeping at least `keepTurns`. */
export interface WindowSpec {
  kind: 'window';
  budget: number;
  keepTurns: number;
}

/**
 * Once the view is over `budget` tokens, replaces everything between the prompt and the last
 * `keepTurns` turns (earlier summaries included) by one editor-written summary (agent CLI auto-compact).
 */
export interface CompactSpec {
  kind: 'compact';
  budget: number;
  keepTurns: number;
}

/**
 * While the view is over `budget` tokens, pops the oldest tool-result envelope (observation) outside
 * the last `keepTurns` turns; the agent's actions stay (TC-RAG). A popped envelope is replaced by an
 * editor-written summary of it, or (`summarize: false`) by its cue alone.
 */
export interface StackSpec {
  kind: 'stack';
  budget: number;
  keepTurns: number;
  summarize: boolean;
}

/**
 * Model-triggered (AgentFold / MemexRL): an action `fold <summary>` makes the harness replace
 * everything between the prompt and the last `keepTurns` complete turns, the fold action included,
 * by the policy's summary. `budget` is never enforced by the harness: the policy is told it (the
 * expert folds when the view is over it).
 */
export interface FoldSpec {
  kind: 'fold';
  budget: number;
  keepTurns: number;
}

export type EditorSpec = NoneSpec | WindowSpec | CompactSpec | StackSpec | FoldSpec;

/** What an editor does with an action that ended with `\n`: rewrite the view, or answer it itself. */
export type ActClaim = { edit: EditPlan } | { obs: string };

export interface Editor {
  readonly spec: EditorSpec;
  /** Called before every decode; returns the edit to apply first, or null. */
  beforeDecode(view: LiveView, summarize: (notes: readonly unknown[]) => string): EditPlan | null;
  /** Called after an action ending with `\n` (the last block of `view`); null passes it to the env. */
  onAct(view: LiveView, act: Block): ActClaim | null;
}
