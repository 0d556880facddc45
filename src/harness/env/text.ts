// What the environments share: the seeded shuffle their worlds and observations draw, filler text
// (the observation-length knob) and the scoring of `answer X` by exact match.

import type { Rng } from '../../util/prng';
import type { StepResult } from './types';

/** Fisher–Yates in place, one `rng.int` per position from the end. */
export function shuffle<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** `length` characters of random words from `words`, space-separated, the last one cut. */
export function fillerText(rng: Rng, words: readonly string[], length: number): string {
  let out = '';
  while (out.length < length) out += (out ? ' ' : '') + words[rng.int(words.length)];
  return out.slice(0, length);
}

const ANSWER = /^answer (\S+)$/;

/**
 * The end of an episode when `text` (an action, trimmed) answers: reward = exact match with `gold`
 * (case-insensitive); when the turn is the last one (`final`) and does not answer, reward 0. Null
 * when the episode goes on.
 */
export function answerStep(text: string, final: boolean, gold: string): StepResult | null {
  const answer = ANSWER.exec(text);
  if (answer) {
    const em = answer[1].toLowerCase() === gold ? 1 : 0;
    return { done: true, answer: answer[1], gold, em, reward: em };
  }
  if (final) return { done: true, answer: null, gold, em: 0, reward: 0 };
  return null;
}
