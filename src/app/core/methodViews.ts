// What each replay method shows one target (docs/methods.md), read off that method's scoring plan
// (src/plan, the same plan the engine runs): the keys visible to the target's index under the
// plan's `end[]` encoding, as physical ids in sequence order. Compared with the live prefix this
// shows the two pitfalls: ids missing or written after the target (Naive-Compressed's time-travel
// leakage) and evicted ids revived (Naive-Full's stale context). As runs of ids, these prefixes are
// the lanes of the staircase's lens.
import { buildPlan, METHODS, visibleKeys, type Method, type Plan, type PlanSequence } from '../../plan';
import { idRuns } from './staircaseModel';
import type { ViewData } from './viewData';

export interface MethodView {
  method: Method;
  /** Ids the method conditions the target on, in sequence order; null when it does not score it. */
  prefix: Int32Array | null;
  /** SDCC at a diverging leaf: the stop-gradient teacher's prefix. */
  teacher: Int32Array | null;
  /** Live-prefix ids the method's prefix lacks. */
  missing: number;
  /** Ids it shows that were created before the target but were not live for it (evicted: stale context). */
  stale: number;
  /** Ids it shows that were created after the target (written later: time-travel leakage). */
  future: number;
  /** The method's prefix equals the live prefix as a sequence (exact conditioning). */
  exact: boolean;
}

interface Located {
  seq: PlanSequence;
  index: number;
}

interface PlanIndex {
  plan: Plan;
  /** Where each target id is scored (student sequence for sdcc). */
  at: Map<number, Located>;
  /** sdcc only: where each diverging leaf sits in its teacher. */
  teacherAt: Map<number, Located>;
}

const cache = new WeakMap<ViewData, Map<Method, PlanIndex>>();

function indexSequences(seqs: PlanSequence[], into: Map<number, Located>): void {
  for (const seq of seqs) for (const t of seq.targets) into.set(t.id, { seq, index: t.index });
}

function indexPlan(plan: Plan): PlanIndex {
  const at = new Map<number, Located>();
  const teacherAt = new Map<number, Located>();
  if (plan.method === 'sdcc') {
    indexSequences([plan.student], at);
    for (const pair of plan.pairs) teacherAt.set(pair.id, { seq: plan.teachers[pair.teacher], index: pair.teacherIndex });
  } else indexSequences(plan.sequences, at);
  return { plan, at, teacherAt };
}

function plansOf(view: ViewData): Map<Method, PlanIndex> {
  let byMethod = cache.get(view);
  if (!byMethod) cache.set(view, (byMethod = new Map()));
  return byMethod;
}

/** The plan of a method for this rollout, built once (or given by seedPlans) and indexed by target id. */
export function planIndex(view: ViewData, method: Method): PlanIndex {
  const byMethod = plansOf(view);
  let entry = byMethod.get(method);
  if (!entry) byMethod.set(method, (entry = indexPlan(buildPlan(view.tree, method))));
  return entry;
}

/** Plans built elsewhere from the same tree (the rollout worker's): planIndex then returns them. */
export function seedPlans(view: ViewData, plans: Partial<Record<Method, Plan>>): void {
  const byMethod = plansOf(view);
  for (const method of METHODS) {
    const plan = plans[method];
    if (plan) byMethod.set(method, indexPlan(plan));
  }
}

function prefixAt(located: Located | undefined): Int32Array | null {
  if (!located) return null;
  const keys = visibleKeys(located.seq.end, located.index);
  const ids = new Int32Array(keys.length - 1);
  for (let i = 0; i < keys.length - 1; i++) ids[i] = located.seq.ids[keys[i]];
  return ids;
}

export function methodPrefix(view: ViewData, method: Method, id: number): { prefix: Int32Array | null; teacher: Int32Array | null } {
  const index = planIndex(view, method);
  return { prefix: prefixAt(index.at.get(id)), teacher: prefixAt(index.teacherAt.get(id)) };
}

function compare(live: Int32Array, prefix: Int32Array | null, target: number, L: number): Pick<MethodView, 'missing' | 'stale' | 'future' | 'exact'> {
  if (!prefix) return { missing: live.length, stale: 0, future: 0, exact: false };
  const inLive = new Uint8Array(L);
  for (const id of live) inLive[id] = 1;
  let shared = 0;
  let future = 0;
  for (const id of prefix) {
    shared += inLive[id];
    if (id > target) future++;
  }
  const exact = prefix.length === live.length && prefix.every((id, i) => id === live[i]);
  return { missing: live.length - shared, stale: prefix.length - shared - future, future, exact };
}

export function methodViews(view: ViewData, id: number): MethodView[] {
  const live = view.tree.livePrefix(id);
  return METHODS.map((method) => {
    const { prefix, teacher } = methodPrefix(view, method, id);
    return { method, prefix, teacher, ...compare(live, prefix, id, view.rollout.length) };
  });
}

const selectedCache = new WeakMap<ViewData, { target: number; views: MethodView[] }>();

/** Method views of the selected target, memo-friendly (null when nothing is selected); the staircase, the tree and the inspector share one. */
export function selectedViews(view: ViewData | null, target: number | null): MethodView[] | null {
  if (!view || target === null || !view.rollout.isTarget[target]) return null;
  const cached = selectedCache.get(view);
  if (cached?.target === target) return cached.views;
  const views = methodViews(view, target);
  selectedCache.set(view, { target, views });
  return views;
}

/** The selected target's prefix under one method, on the physical axis of the staircase's lens. */
export interface MethodLane {
  method: Method;
  /** Ids the method shows the target, as sorted runs [start, end) flattened; null: not scored. */
  runs: Int32Array | null;
  /** Ids shown only to SDCC's teacher (at a diverging leaf), as runs. */
  teacherRuns: Int32Array | null;
}

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
