// What an environment gives the rollout loop: a seeded episode with a prompt, a step function
// from action text to observation or outcome, the editor-side summary of removed observations,
// and a scripted solver that reads the live view (the expert policy wraps it).

import type { ViewBlock } from '../framing';

/** The end of an episode: the answer given, exact match with the gold answer, and the reward. */
export interface Outcome {
  done: true;
  /** The answer the agent gave, or null when the final action was not an answer. */
  answer: string | null;
  gold: string;
  em: 0 | 1;
  reward: number;
}

export interface Observation {
  done: false;
  /** Observation text (ASCII); the harness wraps it as `<obs>` + bytes + `<act>` cue. */
  text: string;
  /**
   * What this observation established, in the environment's own terms. Memory editors carry notes
   * along with the blocks that hold them and hand the notes of removed blocks back to `summarize`.
   */
  note?: unknown;
}

export type StepResult = Observation | Outcome;

export interface Episode {
  /** The task prompt (ASCII); the harness wraps it as BOS `<prompt>` + bytes + `<act>` cue. */
  readonly prompt: string;
  readonly gold: string;
  /**
   * Applies one action (its text, without the stop token). `final` is set when the action ended
   * with EOS: the episode ends and the action is scored as the answer.
   */
  step(action: string, final: boolean): StepResult;
  /** The editor-written summary of removed blocks, from their notes (oldest first). */
  summarize(notes: readonly unknown[]): string;
}

/** The scripted solver's next move, computed from the live view alone. */
export interface ExpertMove {
  /** Action text without the stop token. */
  text: string;
  /** True for the final answer (ends with EOS); false for a tool call (ends with `\n`). */
  final: boolean;
}

export interface Env {
  readonly id: string;
  /** The difficulty knobs in effect (plain data, recorded in each rollout's meta). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Actions allowed per episode before it is cut off (reward 0). */
  readonly maxTurns: number;
  reset(seed: number): Episode;
  /** The expert's next action on this live view. */
  solve(view: readonly ViewBlock[]): ExpertMove;
  /** The expert's own summary of the state on this live view (the text of a fold action). */
  summarizeView(view: readonly ViewBlock[]): string;
  /** Well-formed actions on this view, among which a noisy expert slips (without folds). */
  moves(view: readonly ViewBlock[]): ExpertMove[];
}
