// How far scoring reached into rollouts longer than the model (docs/methods.md, "Long sessions"): per method the
// targets its plans score, those beyond the model's positions (left out) and those scored on a window, and the
// lines `mw drift` and the app's drift panel print of them. Pure.

import type { SequenceMethod } from '../plan/types';
import type { Reach } from '../plan/reach';

/** Per method: the targets its plans score, those beyond the model's positions, those scored on a window. */
export interface MethodReach {
  targets: number;
  outOfReach: number;
  windowed: number;
}

/** `mw drift --json`'s `reach` (the app's drift panel: of the shown rollout). */
export interface ReachReport {
  positions: number;
  /** null: no window (the targets beyond `positions` are left out and counted). */
  window: number | null;
  methods: Partial<Record<SequenceMethod, MethodReach>>;
}

export function createReachTally(reach: Reach) {
  const methods: ReachReport['methods'] = {};
  return {
    /** A method's plan of one rollout (`scored`: the targets it scores; the others as ids or counts, as scoreRollouts' onReach or the app's worker tell them). */
    add(method: SequenceMethod, scored: number, cut: { outOfReach: readonly number[] | number; windowed: readonly number[] | number }) {
      const m = (methods[method] ??= { targets: 0, outOfReach: 0, windowed: 0 });
      const out = typeof cut.outOfReach === 'number' ? cut.outOfReach : cut.outOfReach.length;
      m.targets += scored + out;
      m.outOfReach += out;
      m.windowed += typeof cut.windowed === 'number' ? cut.windowed : cut.windowed.length;
    },
    report: (): ReachReport => ({ positions: reach.positions, window: reach.window ?? null, methods }),
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * "naive-full: 412 of 3,874 targets need more than 1,024 positions (not scored; a window scores them)" per method
 * that left any out, and with a window the line that says the drift is windowed. `remedy` names the window's
 * control (the CLI: "--window N"), `label` a method.
 */
export function reachLines(report: ReachReport, options: { remedy?: string; label?: (method: SequenceMethod) => string } = {}): string[] {
  const { remedy = '--window N', label = (m: SequenceMethod) => m } = options;
  const lines: string[] = [];
  for (const [method, m] of Object.entries(report.methods) as [SequenceMethod, MethodReach][]) {
    if (m.outOfReach)
      lines.push(
        `${label(method)}: ${count(m.outOfReach)} of ${count(m.targets)} targets need more than ${count(report.positions)} positions (not scored; ${remedy} scores them)`,
      );
  }
  if (report.window !== null) {
    const per = (Object.entries(report.methods) as [SequenceMethod, MethodReach][]).map(
      ([method, m]) => `${label(method)} ${count(m.windowed)} of ${count(m.targets)}`,
    );
    lines.push(
      `windowed: the drift is windowed; a target whose context exceeds ${count(report.window - 1)} tokens is scored on its last ${count(report.window - 1)}, ` +
        `at positions from 0 (${per.join(', ')})`,
    );
  }
  return lines;
}
