// The selected target's method views as lanes on the physical axis (staircase lens) and as trie
// node runs (conditioning tree overlay).
import { methodViews, type MethodView } from '../core/methodViews';
import type { ViewData } from '../core/viewData';
import type { MethodLane } from './staircase/draw';
import { idRuns } from './staircase/model';

export function lanesOf(views: MethodView[]): MethodLane[] {
  return views.map((v) => {
    let teacherRuns: Int32Array | null = null;
    if (v.teacher) {
      const inStudent = new Set(v.prefix ?? []);
      teacherRuns = idRuns(Array.from(v.teacher).filter((id) => !inStudent.has(id)));
    }
    return { method: v.method, runs: v.prefix ? idRuns(v.prefix) : null, teacherRuns };
  });
}

/** Method views of the selected target, memo-friendly (null when nothing is selected). */
export function selectedViews(view: ViewData | null, target: number | null): MethodView[] | null {
  if (!view || target === null || !view.rollout.isTarget[target]) return null;
  return methodViews(view, target);
}
