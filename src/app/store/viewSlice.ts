// View slice: the selected target, the replay method compared against the live prefix, the
// staircase's row mode, the target colouring and the sampler the expected drift assumes. All are
// shareable and live in the URL (../url/schema.ts).
import { bisectLeft } from 'd3';
import { FULL_SAMPLING } from '../../harness/policies/model';
import type { Slice, ViewSlice } from './types';

/** The target `delta` steps from `current` in an ascending list (the nearest one when current is not a target). */
export function steppedTarget(targets: ArrayLike<number>, current: number | null, delta: number): number | null {
  const n = targets.length;
  if (n === 0) return null;
  if (current === null) return delta >= 0 ? targets[0] : targets[n - 1];
  const lo = bisectLeft(targets, current);
  const exact = lo < n && targets[lo] === current;
  const base = exact ? lo : delta > 0 ? lo - 1 : lo;
  return targets[Math.max(0, Math.min(n - 1, base + delta))];
}

export const createViewSlice: Slice<ViewSlice> = (set, get) => ({
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
