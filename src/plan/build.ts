// buildPlan: a conditioning tree to the scoring plan of one method (docs/methods.md table).

import type { ConditioningTree } from '../tree/types';
import type { Method, Plan, PlanOptions, PlanSequence, PlanTarget, SdccPair, SdccPlan, SequenceMethod, SequencePlan } from './types';

function target(tree: ConditioningTree, index: number, id: number, predictor: number): PlanTarget {
  const t: PlanTarget = { index, id, token: tree.rollout.tokens[id], predictor };
  const lp = tree.rollout.logprobs[id];
  if (!Number.isNaN(lp)) t.rolloutLogprob = lp;
  return t;
}

function tokensOf(tree: ConditioningTree, ids: Int32Array): Int32Array {
  return ids.map((id) => tree.rollout.tokens[id]);
}

/** A causal sequence over `ids` scoring `targets` (index, id) in index order; each is predicted by index - 1. */
function causal(tree: ConditioningTree, ids: Int32Array, targets: { index: number[]; id: number[] }): PlanSequence {
  const n = ids.length;
  return {
    ids,
    tokens: tokensOf(tree, ids),
    positions: new Int32Array(n).map((_, i) => i),
    end: new Uint32Array(n).fill(n),
    targets: targets.index.map((index, j) => target(tree, index, targets.id[j], index - 1)),
  };
}

/** The whole trie in packed order, scoring `ids` at their own nodes. */
function packed(tree: ConditioningTree, ids: ArrayLike<number>): PlanSequence {
  const nodes = Int32Array.from(ids, (id) => tree.scoringNode[id]).sort();
  return {
    ids: tree.packedOrder.slice(),
    tokens: tokensOf(tree, tree.packedOrder),
    positions: tree.depth.slice(),
    end: tree.end.slice(),
    targets: Array.from(nodes, (node) => target(tree, node, tree.packedOrder[node], tree.parent[node])),
  };
}

/**
 * SDCC's student and teacher in one packed tree (what the training step runs, forward once): the
 * trie pruned to the final walk and the diverging leaves' paths, in a preorder that visits the final
 * walk's child first at each of its nodes. Rows 0 .. S-1 are then exactly the student (the final walk,
 * S = its length) and its nodes are computed once for both: the teacher rows after S are only the
 * nodes the final walk does not share. Each teacher target is a diverging leaf at its scoring node.
 * Null when the rollout has no diverging leaf (no teacher).
 */
export interface SdccUnion {
  /** ids, tokens, positions and end of the whole pruned tree; `targets` are the diverging leaves. */
  tree: PlanSequence;
  /** Rows 0 .. studentLength-1 are the final walk, in order. */
  studentLength: number;
}

export function sdccUnion(tree: ConditioningTree): SdccUnion | null {
  if (tree.divergingLeaves.length === 0) return null;
  const N = tree.packedOrder.length;
  const kept = new Uint8Array(N);
  const onFinal = new Uint8Array(N);
  const keep = (from: number, mark: Uint8Array | null) => {
    for (let node = from; node >= 0 && !(mark ? mark[node] : kept[node]); node = tree.parent[node]) {
      kept[node] = 1;
      if (mark) mark[node] = 1;
    }
  };
  keep(tree.branchLeaf[tree.K], onFinal);
  for (const id of tree.divergingLeaves) keep(tree.scoringNode[id], null);
  // Children of kept nodes as linked lists (first child, next sibling) in packed order, the final walk's
  // child moved first; the roots hang under a virtual node N. Typed arrays throughout: this runs on trees
  // of millions of nodes (issue 31), where per-node JS arrays and objects cost seconds and gigabytes.
  const first = new Int32Array(N + 1).fill(-1);
  const next = new Int32Array(N).fill(-1);
  const prepend = (node: number) => {
    const p = tree.parent[node] < 0 ? N : tree.parent[node];
    next[node] = first[p];
    first[p] = node;
  };
  let M = 0;
  for (let i = N - 1; i >= 0; i--) {
    if (kept[i]) M++;
    if (kept[i] && !onFinal[i]) prepend(i);
  }
  for (let i = N - 1; i >= 0; i--) if (onFinal[i]) prepend(i);
  // Iterative preorder; a node's end is known when its subtree is done.
  const row = new Int32Array(N).fill(-1);
  const order = new Int32Array(M);
  const endOf = new Uint32Array(M);
  const stack = new Int32Array(M + 1);
  const cursor = new Int32Array(M + 1);
  let top = 0;
  let count = 0;
  stack[0] = N;
  cursor[0] = first[N];
  while (top >= 0) {
    const child = cursor[top];
    if (child >= 0) {
      cursor[top] = next[child];
      row[child] = count;
      order[count++] = child;
      stack[++top] = child;
      cursor[top] = first[child];
    } else {
      const node = stack[top--];
      if (node !== N) endOf[row[node]] = count;
    }
  }
  const ids = order.map((node) => tree.packedOrder[node]);
  const S = tree.finalWalk.length;
  for (let r = 0; r < S; r++) {
    if (ids[r] !== tree.finalWalk[r]) throw new Error(`sdccUnion: row ${r} is not the final walk's id ${tree.finalWalk[r]}`);
  }
  const leaves = Array.from(tree.divergingLeaves, (id) => tree.scoringNode[id]).sort((a, b) => row[a] - row[b]);
  return {
    tree: {
      ids,
      tokens: tokensOf(tree, ids),
      positions: order.map((node) => tree.depth[node]),
      end: endOf,
      targets: leaves.map((node) => target(tree, row[node], tree.packedOrder[node], row[tree.parent[node]])),
    },
    studentLength: S,
  };
}

/** The final walk, scoring each non-dropped target on its final prefix. */
function naiveCompressed(tree: ConditioningTree): PlanSequence {
  const { finalWalk, dropped } = tree;
  const targets = { index: [] as number[], id: [] as number[] };
  for (let index = 0; index < finalWalk.length; index++) {
    const id = finalWalk[index];
    if (tree.rollout.isTarget[id] && !dropped[id]) {
      targets.index.push(index);
      targets.id.push(id);
    }
  }
  return causal(tree, finalWalk.slice(), targets);
}

/**
 * One causal sequence per branch holding targets that `keep` selects (of its own segment), branches
 * ascending. With `trim`, each branch ends at its last selected target (SDCC's teachers: nothing after
 * it changes a score, and the teacher runs forward only).
 */
function logitTree(tree: ConditioningTree, keep: (id: number) => boolean, trim = false): PlanSequence[] {
  const sequences: PlanSequence[] = [];
  const { targets: all } = tree;
  const { segments } = tree.rollout;
  // Targets come grouped by segment (ids ascending), each group in branch order.
  for (let i = 0; i < all.length; ) {
    const k = segments[all[i]];
    const targets = { index: [] as number[], id: [] as number[] };
    for (; i < all.length && segments[all[i]] === k; i++) {
      if (!keep(all[i])) continue;
      targets.index.push(tree.ownPosition[all[i]]);
      targets.id.push(all[i]);
    }
    if (!targets.id.length) continue;
    const ids = tree.branchIds(k);
    sequences.push(causal(tree, trim ? ids.slice(0, targets.index[targets.index.length - 1] + 1) : ids, targets));
  }
  return sequences;
}

function sdcc(tree: ConditioningTree, options: PlanOptions): SdccPlan {
  const student = naiveCompressed(tree);
  const isLeaf = (id: number) => tree.diverging[id] === 1;
  let teachers: PlanSequence[] = [];
  let sharedRows = 0;
  if (options.sdccTeacher === 'logit-tree') teachers = logitTree(tree, isLeaf, true);
  else {
    const union = sdccUnion(tree);
    if (union) {
      teachers = [union.tree];
      sharedRows = union.studentLength;
    }
  }
  const where = new Map<number, [number, number]>();
  teachers.forEach((seq, s) => seq.targets.forEach((t) => where.set(t.id, [s, t.index])));
  const pairs: SdccPair[] = Array.from(tree.divergingLeaves, (id) => {
    const [teacher, teacherIndex] = where.get(id)!;
    return { id, studentIndex: tree.finalPosition[id], teacher, teacherIndex };
  });
  return { method: 'sdcc', student, teachers, sharedRows, pairs };
}

export function buildPlan(tree: ConditioningTree, method: 'sdcc', options?: PlanOptions): SdccPlan;
export function buildPlan(tree: ConditioningTree, method: SequenceMethod, options?: PlanOptions): SequencePlan;
export function buildPlan(tree: ConditioningTree, method: Method, options?: PlanOptions): Plan;
export function buildPlan(tree: ConditioningTree, method: Method, options: PlanOptions = {}): Plan {
  switch (method) {
    case 'naive-compressed':
      return { method, sequences: [naiveCompressed(tree)] };
    case 'naive-full': {
      const ids = new Int32Array(tree.rollout.length).map((_, i) => i);
      const targets = Array.from(tree.targets);
      return { method, sequences: [causal(tree, ids, { index: targets, id: targets })] };
    }
    case 'logit-tree':
      return { method, sequences: logitTree(tree, () => true) };
    case 'packed-4d':
      return { method, sequences: [packed(tree, tree.targets)] };
    case 'sdcc':
      return sdcc(tree, options);
  }
}
