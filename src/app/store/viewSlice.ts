// View slice: the selected target, the replay method compared against the live prefix, the
// staircase's row mode, the target colouring and the sampler the expected drift assumes. All are
// shareable and live in the URL (../url/schema.ts).
import type { StateCreator } from 'zustand';
import { FULL_SAMPLING, type SamplingOptions } from '../../harness/policies/model';
import type { ColorMode, MethodId, RowMode } from '../url/schema';
import type { WorkbenchState } from './index';

export interface ViewSlice {
  selectedTarget: number | null;
  method: MethodId;
  rows: RowMode;
  /** Target cells coloured by state, or by drift once a model has scored the rollout. */
  colorBy: ColorMode;
  /** The sampler the drift panel's expected drift assumes (temperature 1 by default). */
  sampler: Required<SamplingOptions>;
  selectTarget(id: number | null): void;
  /** Moves the selection by `delta` targets (in id order), clamped to the first and last. */
  stepTarget(delta: number): void;
  setMethod(method: MethodId): void;
  setRows(rows: RowMode): void;
  setColorBy(color: ColorMode): void;
  setSampler(sampler: Required<SamplingOptions>): void;
}

/** The target `delta` steps from `current` in an ascending list (the nearest one when current is not a target). */
export function steppedTarget(targets: ArrayLike<number>, current: number | null, delta: number): number | null {
  const n = targets.length;
  if (n === 0) return null;
  if (current === null) return delta >= 0 ? targets[0] : targets[n - 1];
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (targets[mid] < current) lo = mid + 1;
    else hi = mid;
  }
  const exact = lo < n && targets[lo] === current;
  const base = exact ? lo : delta > 0 ? lo - 1 : lo;
  return targets[Math.max(0, Math.min(n - 1, base + delta))];
}

export const createViewSlice: StateCreator<WorkbenchState, [], [], ViewSlice> = (set, get) => ({
  selectedTarget: null,
  method: 'naive-compressed',
  rows: 'step',
  colorBy: 'state',
  sampler: { ...FULL_SAMPLING },
  selectTarget(id) {
    const view = get().view;
    if (id !== null && (!view || id < 0 || id >= view.rollout.length || !view.rollout.isTarget[id])) return;
    set({ selectedTarget: id });
  },
  stepTarget(delta) {
    const view = get().view;
    if (!view) return;
    set({ selectedTarget: steppedTarget(view.rollout.targets, get().selectedTarget, delta) });
  },
  setMethod(method) {
    set({ method });
  },
  setRows(rows) {
    set({ rows });
  },
  setColorBy(colorBy) {
    set({ colorBy });
  },
  setSampler(sampler) {
    set({ sampler });
  },
});
