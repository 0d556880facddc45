// --window N of the scoring commands (mw score, mw drift): every target on the last N − 1 tokens of its context
// (docs/methods.md, "Long sessions"; src/plan/reach.ts). The tally of what each method reached: src/metrics/reach.ts.

import { windowProblem, type Reach } from '../plan/reach';
import { UsageError, type ParsedArgs } from './command';
import { integerFlag } from './model-args';

export const WINDOW_FLAG = {
  type: 'string',
  value: 'N',
  help: "score every target on the last N positions of its context (N − 1 tokens and itself, at positions 0 .. N − 1); N ≤ the model's positions",
} as const;

/** The reach of a model of `positions`, with --window N when given (a window beyond the model: exit 1). */
export function reachFromArgs(args: ParsedArgs, positions: number): Reach {
  if (args.flags.window === undefined) return { positions };
  const window = integerFlag(args, 'window', 0, 2);
  const problem = windowProblem(window, positions);
  if (problem) throw new UsageError(`--window ${window}: ${problem}`);
  return { positions, window };
}
