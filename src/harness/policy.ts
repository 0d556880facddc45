// The contract between the rollout loop and whatever writes the agent's actions: the scripted
// expert now, the WGSL model (KV cache) later. A policy sees only the live view's token values,
// samples inside itself, and reports a rollout-time logprob per generated token.

import { EOS } from '../rollout/tokenizer';
import type { EditorSpec } from './editors/types';
import { NEWLINE } from './framing';

export { NEWLINE };

/**
 * An action ends at the first stop token, which belongs to the action (it is generated, and is a
 * target): `\n` ends a tool call or a fold and the episode continues; EOS ends the episode (the
 * environment scores the action as the final answer). An action that reaches the decode budget
 * without a stop token is truncated and ends the episode with reward 0.
 */
export const STOP_TOKENS: readonly number[] = [NEWLINE, EOS];

export interface DecodeRequest {
  /** Token values of the live view, in order; the last one is the `<act>` cue. */
  view: readonly number[];
  /** Generate at most this many tokens (at least 1). */
  maxTokens: number;
}

export interface Action {
  /** Generated token values, ending with a stop token unless `maxTokens` ran out. */
  tokens: number[];
  /** log π(token | view, earlier tokens of this action), one per token, finite and <= 0. */
  logprobs: number[];
}

export interface EpisodeInfo {
  /** Environment id (e.g. `lookup`). */
  env: string;
  /** The memory editor of this episode (its budget tells a folding policy when to fold). */
  editor: EditorSpec;
  /** Seed for the policy's own sampling; same seed and same views give the same actions. */
  seed: number;
}

/**
 * One episode's conversation with a policy. Calls come in episode order and are awaited:
 *
 * - `act(request)`: the view given to act n+1 is the view given to act n, then act n's own tokens,
 *   then harness tokens appended after them, unless `onEdit` was called in between.
 * - `onEdit(view, firstChanged)`: the harness rewrote the live view. `view` is the whole new view;
 *   positions `< firstChanged` hold the same physical tokens as before the edit (the view before
 *   the edit is the last act's view plus its action plus any appended observation), so a KV cache
 *   keeps its entries below `firstChanged` and recomputes from there. The next `act` extends `view`.
 */
export interface PolicySession {
  act(request: DecodeRequest): Promise<Action>;
  onEdit?(view: readonly number[], firstChanged: number): void | Promise<void>;
  /** Called once when the episode ends (also after an error in the loop). */
  close?(): void | Promise<void>;
}

export interface Policy {
  /** Written into each rollout's meta. */
  readonly name: string;
  start(info: EpisodeInfo): PolicySession | Promise<PolicySession>;
}
