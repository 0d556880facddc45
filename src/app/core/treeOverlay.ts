// The selected target's method views as runs of trie nodes, per edge, for the tree overlay.
import type { MethodView } from './methodViews';
import type { Method } from '../../plan/types';
import { nodesOfSequence, type TreeModel } from './treeModel';

export interface NodeRun {
  edge: number;
  /** Packed index range [from, to] within one edge. */
  from: number;
  to: number;
}

export interface MethodOverlay {
  method: Method;
  runs: NodeRun[];
  teacherRuns: NodeRun[];
  /** The trie node at which this method scores the target, or -1. */
  scoredAt: number;
}

export function nodeRuns(model: TreeModel, nodes: ArrayLike<number>): NodeRun[] {
  const sorted = Int32Array.from(nodes as ArrayLike<number>).sort();
  const runs: NodeRun[] = [];
  for (const n of sorted) {
    const last = runs[runs.length - 1];
    const edge = model.edgeOf[n];
    if (last && last.edge === edge && last.to + 1 === n) last.to = n;
    else if (!last || last.to !== n) runs.push({ edge, from: n, to: n });
  }
  return runs;
}

export function methodOverlays(model: TreeModel, views: MethodView[], target: number): MethodOverlay[] {
  return views.map((v) => {
    if (!v.prefix) return { method: v.method, runs: [], teacherRuns: [], scoredAt: -1 };
    // The target follows its prefix: walking prefix + target gives the node that scores it.
    const walk = nodesOfSequence(model, [...v.prefix, target]);
    const runs = nodeRuns(model, walk.subarray(0, walk.length - 1));
    let teacherRuns: NodeRun[] = [];
    if (v.teacher) {
      const student = new Set(walk);
      teacherRuns = nodeRuns(
        model,
        Array.from(nodesOfSequence(model, v.teacher)).filter((n) => !student.has(n)),
      );
    }
    return { method: v.method, runs, teacherRuns, scoredAt: walk[walk.length - 1] };
  });
}
