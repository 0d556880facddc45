// The naive derivation of docs/tree.md, written for obviousness, not speed: branches as arrays, the trie
// as a map keyed by (parent node, id), preorder by recursion. It is the oracle the property tests
// hold deriveTree to; cost is the sum of the branch lengths.

import type { Rollout } from '../rollout/rollout';

export interface ReferenceTree {
  branches: number[][];
  finalWalk: number[];
  /** Per edit: evicted ids in live order. */
  evicted: number[][];
  livePrefix(id: number): number[];
  finalPrefix(id: number): number[] | null;
  packedOrder: number[];
  depth: number[];
  parent: number[];
  end: number[];
  nodeBranch: number[];
  /** Packed index of each branch's last node (-1 if empty). */
  branchLeaf: number[];
  /** Per target id: the packed index on its own branch's path. */
  scoringNode: Map<number, number>;
}

export function referenceTree(rollout: Rollout): ReferenceTree {
  const branches: number[][] = [];
  const evicted: number[][] = [];
  let view: number[] = [];
  for (const event of rollout.events) {
    if (event.op === 'append') {
      for (let i = 0; i < event.count; i++) view.push(event.first + i);
      continue;
    }
    branches.push(view);
    const next: number[] = [];
    for (const piece of event.view) {
      if ('keep' in piece) for (let id = piece.keep[0]; id < piece.keep[1]; id++) next.push(id);
      else for (let i = 0; i < piece.insert.count; i++) next.push(piece.insert.first + i);
    }
    const kept = new Set(next);
    evicted.push(view.filter((id) => !kept.has(id)));
    view = next;
  }
  branches.push(view);
  const finalWalk = view;

  // Trie nodes in creation order.
  const nodes: { id: number; parent: number; children: number[]; branch: number }[] = [];
  const key = new Map<string, number>();
  const roots: number[] = [];
  const paths = branches.map((branch, b) => {
    let parent = -1;
    return branch.map((id) => {
      const k = `${parent}:${id}`;
      let node = key.get(k);
      if (node === undefined) {
        node = nodes.length;
        nodes.push({ id, parent, children: [], branch: b });
        key.set(k, node);
        if (parent < 0) roots.push(node);
        else nodes[parent].children.push(node);
      }
      parent = node;
      return node;
    });
  });
  const packedIndex = new Array<number>(nodes.length);
  const packedOrder: number[] = [];
  const depth: number[] = [];
  const parent: number[] = [];
  const end: number[] = [];
  const nodeBranch: number[] = [];
  const visit = (node: number, d: number) => {
    const at = packedOrder.length;
    packedIndex[node] = at;
    packedOrder.push(nodes[node].id);
    depth.push(d);
    parent.push(nodes[node].parent < 0 ? -1 : packedIndex[nodes[node].parent]);
    nodeBranch.push(nodes[node].branch);
    end.push(-1);
    for (const child of nodes[node].children) visit(child, d + 1);
    end[at] = packedOrder.length;
  };
  for (const root of roots) visit(root, 0);

  const scoringNode = new Map<number, number>();
  for (const t of rollout.targets) {
    const k = rollout.segments[t];
    scoringNode.set(t, packedIndex[paths[k][branches[k].indexOf(t)]]);
  }
  return {
    branches,
    finalWalk,
    evicted,
    livePrefix: (id) => {
      const branch = branches[rollout.segments[id]];
      return branch.slice(0, branch.indexOf(id));
    },
    finalPrefix: (id) => {
      const p = finalWalk.indexOf(id);
      return p <= 0 ? null : finalWalk.slice(0, p);
    },
    packedOrder,
    depth,
    parent,
    end,
    nodeBranch,
    branchLeaf: paths.map((path) => (path.length ? packedIndex[path[path.length - 1]] : -1)),
    scoringNode,
  };
}
