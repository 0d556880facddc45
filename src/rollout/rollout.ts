// A validated rollout: its events with physical ids assigned, and the physical tape as typed
// arrays indexed by id (token value, role, segment, target flag, rollout logprob).

import type { AppendRole, InsertRole } from './format';
import type { SourceLocation } from './errors';

export interface AppendEvent {
  op: 'append';
  role: AppendRole;
  /** Physical ids first .. first + count - 1 were created by this event. */
  first: number;
  count: number;
  /** Present when the file gave text (the ids then start with the role marker). */
  text?: string;
  logprobs?: number[];
}

export type ViewPiece = { keep: [number, number] } | { insert: { role: InsertRole; first: number; count: number; text?: string } };

export interface EditEvent {
  op: 'edit';
  /** Edits are numbered 1..K in order; edit k opens segment k. */
  edit: number;
  view: ViewPiece[];
}

export type RolloutEvent = AppendEvent | EditEvent;

export interface Rollout {
  id: string;
  vocab: number;
  tokenizer: string;
  /** Whether the file named its tokenizer (serialization writes the field back only then). */
  tokenizerGiven: boolean;
  reward?: number;
  group?: string;
  meta?: unknown;
  /** Unknown top-level fields, kept verbatim and otherwise ignored. */
  extra: Record<string, unknown>;
  events: RolloutEvent[];
  source: SourceLocation;
  /** Number of edits. */
  K: number;
  /** Physical tape length L. */
  length: number;
  /** Token value per physical id. */
  tokens: Int32Array;
  /** ROLE_CODE per physical id (a text piece's marker carries the piece's role). */
  roles: Uint8Array;
  /** Segment per physical id: the number of edits before its creation. */
  segments: Int32Array;
  /** 1 where the id is a target (an `act` token appended by the policy, markers excluded). */
  isTarget: Uint8Array;
  /**
   * Rollout-time logprob per physical id, NaN where the file gave none. A rollout whose file gave
   * none at all builds this array of NaNs when it is first read (`mw tree` on a long imported
   * session never does).
   */
  logprobs: Float64Array;
  /** Target ids, ascending. */
  targets: Int32Array;
}
