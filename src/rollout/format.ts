// The JSON shape of `memorywalker.rollout/v1` (docs/rollout-format.md) as it sits in a file, before validation.
// Importers emit these objects; `validateRollout` turns one into a `Rollout`.

export const ROLLOUT_FORMAT = 'memorywalker.rollout/v1';

/** Roles a token can carry. `act` tokens appended by the policy are the targets. */
export const ROLES = ['prompt', 'obs', 'act', 'summary'] as const;
export type Role = (typeof ROLES)[number];
export type AppendRole = 'prompt' | 'obs' | 'act';
export type InsertRole = 'summary' | 'obs' | 'prompt';

/** Role codes as stored per physical id (`Rollout.roles`): the index in ROLES. */
export const ROLE_CODE: Readonly<Record<Role, number>> = { prompt: 0, obs: 1, act: 2, summary: 3 };

/** Either explicit token values or text for the rollout's tokenizer (which adds the role marker). */
export type TokensOrText = { tokens: number[]; text?: never } | { text: string; tokens?: never };

export type AppendEventJson = { op: 'append'; role: AppendRole; logprobs?: number[] } & TokensOrText;

export type InsertJson = { role: InsertRole } & TokensOrText;

export type ViewPieceJson = { keep: [number, number] } | { insert: InsertJson };

export interface EditEventJson {
  op: 'edit';
  view: ViewPieceJson[];
}

export type EventJson = AppendEventJson | EditEventJson;

export interface RolloutJson {
  format: typeof ROLLOUT_FORMAT;
  id: string;
  vocab: number;
  tokenizer?: string;
  reward?: number;
  group?: string;
  meta?: unknown;
  events: EventJson[];
  /** Unknown top-level fields are kept and ignored. */
  [extra: string]: unknown;
}
