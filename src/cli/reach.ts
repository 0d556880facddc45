// How far the scoring commands (mw score, mw drift) reach into a rollout longer than the model: --window N,
// and the tally of the targets each method left out (more positions than the model has) or scored on a window
// (docs/methods.md, "Long sessions"; src/plan/reach.ts).

import { windowProblem, type Reach } from '../plan/reach';
import type { SequenceMethod } from '../plan/types';
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

/** Per method: the targets its plans score, those beyond the model's positions, those scored on a window. */
export interface MethodReach {
  targets: number;
  outOfReach: number;
  windowed: number;
}

/** `mw drift --json`'s `reach`. */
export interface ReachReport {
  positions: number;
  /** null: no window (the targets beyond `positions` are left out and counted). */
  window: number | null;
  methods: Partial<Record<SequenceMethod, MethodReach>>;
}

export function createReachTally(reach: Reach) {
  const methods: ReachReport['methods'] = {};
  return {
    /** A method's plan of one rollout, as scoreRollouts' onReach tells it (`scored`: the targets it scores). */
    add(method: SequenceMethod, scored: number, cut: { outOfReach: readonly number[]; windowed: readonly number[] }) {
      const m = (methods[method] ??= { targets: 0, outOfReach: 0, windowed: 0 });
      m.targets += scored + cut.outOfReach.length;
      m.outOfReach += cut.outOfReach.length;
      m.windowed += cut.windowed.length;
    },
    report: (): ReachReport => ({ positions: reach.positions, window: reach.window ?? null, methods }),
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/** "naive-full: 412 of 3,874 targets need more than 1,024 positions (not scored)" per method that left any out; the window's line. */
export function reachLines(report: ReachReport): string[] {
  const lines: string[] = [];
  for (const [method, m] of Object.entries(report.methods) as [SequenceMethod, MethodReach][]) {
    if (m.outOfReach)
      lines.push(`${method}: ${count(m.outOfReach)} of ${count(m.targets)} targets need more than ${count(report.positions)} positions (not scored; --window N scores them)`);
  }
  if (report.window !== null) {
    const per = (Object.entries(report.methods) as [SequenceMethod, MethodReach][]).map(([method, m]) => `${method} ${count(m.windowed)} of ${count(m.targets)}`);
    lines.push(
      `windowed: the drift is windowed; a target whose context exceeds ${count(report.window - 1)} tokens is scored on its last ${count(report.window - 1)}, ` +
        `at positions from 0 (${per.join(', ')})`,
    );
  }
  return lines;
}
