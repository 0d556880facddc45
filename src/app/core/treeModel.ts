// View-model of the conditioning tree: the trie of docs/tree.md (given in packed order) with every run
// of unbranched nodes collapsed into one labelled edge, laid out left to right with x = logical
// position (trie depth) and y from d3-hierarchy, so an edge is as long as the tokens it carries.
import { cluster, hierarchy, type HierarchyPointNode } from 'd3';
import { CELL } from './cells';

/** What the tree view needs from the conditioning tree (mapped from it in ./viewData.ts). */
export interface TrieView {
  /** Physical id per trie node, in packed order (DFS preorder, children in creation order). */
  id: Int32Array;
  /** Packed index of each node's parent, -1 for a first-level node. */
  parent: Int32Array;
  /** Logical position (depth) of each node, 0 for first-level nodes. */
  depth: Int32Array;
  /** Per branch k: the packed index of its last node (its leaf), -1 for an empty branch. */
  branchLeaf: Int32Array;
  /** Per physical id: CELL class (prompt/obs/act/inserted). */
  cls: Uint8Array;
  /** Per physical id: 1 when it is a target. */
  isTarget: Uint8Array;
  /** Per physical id: its segment (its original node is on that branch's path). */
  segment: Int32Array;
}

/** Node kinds drawn in an edge strip. */
export const NODE = { context: 0, target: 1, copy: 2 } as const;

export interface TreeEdge {
  /** Index in `edges`. */
  index: number;
  /** Packed index range [from, to] of the trie nodes it carries (contiguous in preorder). */
  from: number;
  to: number;
  /** Parent edge, -1 below the root. */
  parentEdge: number;
  /** Depth of its first node. */
  depth: number;
  /** Smallest branch through it; branches through it. */
  firstBranch: number;
  branches: number[];
  /** Edits that fork at its end node (a child starting a later branch is forked by that edit). */
  forkEdits: number[];
  /** Branch whose leaf it ends at, or -1. */
  leafOf: number[];
  label: string;
  /** Layout: y in layout units (node spacing 1), filled by layoutTree. */
  y: number;
}

export interface TreeModel {
  nodeCount: number;
  edges: TreeEdge[];
  /** Edge of each trie node. */
  edgeOf: Int32Array;
  /** Per trie node: NODE kind. */
  kind: Uint8Array;
  /** Per physical id: its original trie node, on the path of its own segment's branch (others are copies). */
  firstNode: Int32Array;
  /** Per branch k: its path of trie nodes, root first. */
  branchPath: Int32Array[];
  maxDepth: number;
  /** Number of layout rows (leaves). */
  rows: number;
  trie: TrieView;
  /** Children per node as CSR arrays (built with the model, in the worker): see csrOf. */
  children: Csr;
  /** Trie nodes per physical id as CSR arrays: id x's nodes are nodes[start[x] .. start[x + 1]). */
  nodesById: Csr;
}

/** Lists of indices packed in one array: list j is nodes[start[j] .. start[j + 1]), each ascending. */
export interface Csr {
  start: Int32Array;
  nodes: Int32Array;
}

/** Index n into list key(n) for every n < N, lists 0 .. lists − 1 (typed arrays: a million in milliseconds). */
function csrOf(N: number, lists: number, key: (n: number) => number): Csr {
  const start = new Int32Array(lists + 1);
  for (let n = 0; n < N; n++) start[key(n) + 1]++;
  for (let j = 0; j < lists; j++) start[j + 1] += start[j];
  const fill = start.slice(0, lists);
  const nodes = new Int32Array(N);
  for (let n = 0; n < N; n++) nodes[fill[key(n)]++] = n;
  return { start, nodes };
}

/** Compact label of physical ids: consecutive runs as a–b, replicated copies primed. */
export function idsLabel(ids: ArrayLike<number>, copy: (i: number) => boolean, max = 4): string {
  const parts: string[] = [];
  let i = 0;
  while (i < ids.length) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1 && copy(j + 1) === copy(i)) j++;
    const p = copy(i) ? '′' : '';
    parts.push(j === i ? `${ids[i]}${p}` : j === i + 1 ? `${ids[i]}${p},${ids[j]}${p}` : `${ids[i]}${p}–${ids[j]}${p}`);
    i = j + 1;
  }
  if (parts.length > max) return `${parts.slice(0, max - 1).join(' ')} … ${parts[parts.length - 1]}`;
  return parts.join(' ');
}

const models = new WeakMap<TrieView, TreeModel>();

/** The tree model of a trie: built once, or given by seedTreeModel. */
export function treeModelOf(trie: TrieView): TreeModel {
  let model = models.get(trie);
  if (!model) models.set(trie, (model = buildTreeModel(trie)));
  return model;
}

/** A model built elsewhere (the rollout worker's) for its own trie: treeModelOf then returns it. */
export function seedTreeModel(model: TreeModel): void {
  models.set(model.trie, model);
}

export function buildTreeModel(trie: TrieView): TreeModel {
  const N = trie.id.length;
  const K = trie.branchLeaf.length - 1;
  const childCount = new Int32Array(N);
  for (let i = 0; i < N; i++) if (trie.parent[i] >= 0) childCount[trie.parent[i]]++;
  const isLeaf = new Uint8Array(N);
  for (const leaf of trie.branchLeaf) if (leaf >= 0) isLeaf[leaf] = 1;

  // Paths and branch sets (K+1 walks up the trie).
  const firstBranch = new Int32Array(N).fill(K + 1);
  const branchPath: Int32Array[] = [];
  for (let k = 0; k <= K; k++) {
    const path: number[] = [];
    for (let n = trie.branchLeaf[k]; n >= 0; n = trie.parent[n]) {
      path.push(n);
      if (firstBranch[n] > k) firstBranch[n] = k;
    }
    branchPath.push(Int32Array.from(path.reverse()));
  }

  // Node kinds: a token's original node is the one its own segment's branch created (a target is
  // scored there); every other node holding the id is a replicated copy.
  const L = trie.cls.length;
  const firstNode = new Int32Array(L).fill(-1);
  const kind = new Uint8Array(N);
  for (let n = 0; n < N; n++) {
    const id = trie.id[n];
    if (firstBranch[n] === trie.segment[id]) {
      firstNode[id] = n;
      kind[n] = trie.isTarget[id] ? NODE.target : NODE.context;
    } else kind[n] = NODE.copy;
  }

  // Collapse: an edge starts at a node whose parent is a junction (or the root) and runs while
  // the node has exactly one child and is no branch's leaf.
  const edges: TreeEdge[] = [];
  const edgeOf = new Int32Array(N).fill(-1);
  let maxDepth = 0;
  for (let n = 0; n < N; n++) {
    const p = trie.parent[n];
    const continues = p >= 0 && childCount[p] === 1 && !isLeaf[p];
    if (continues) {
      edgeOf[n] = edgeOf[p];
      edges[edgeOf[n]].to = n;
    } else {
      edgeOf[n] = edges.length;
      edges.push({
        index: edges.length,
        from: n,
        to: n,
        parentEdge: p >= 0 ? edgeOf[p] : -1,
        depth: trie.depth[n],
        firstBranch: firstBranch[n],
        branches: [],
        forkEdits: [],
        leafOf: [],
        label: '',
        y: 0,
      });
    }
    if (trie.depth[n] > maxDepth) maxDepth = trie.depth[n];
  }
  for (let k = 0; k <= K; k++) {
    let last = -1;
    for (const n of branchPath[k]) {
      if (edgeOf[n] !== last) edges[edgeOf[n]].branches.push(k);
      last = edgeOf[n];
    }
    if (trie.branchLeaf[k] >= 0) edges[edgeOf[trie.branchLeaf[k]]].leafOf.push(k);
  }
  for (const e of edges) {
    const ids = trie.id.subarray(e.from, e.to + 1);
    e.label = idsLabel(ids, (i) => kind[e.from + i] === NODE.copy);
    if (e.parentEdge >= 0) {
      const parent = edges[e.parentEdge];
      if (e.firstBranch > parent.firstBranch) parent.forkEdits.push(e.firstBranch);
    }
  }
  const rows = layoutTree(edges);
  // List 0: the first-level nodes; list n + 1: node n's children.
  const children = csrOf(N, N + 1, (n) => trie.parent[n] + 1);
  const nodesById = csrOf(N, L, (n) => trie.id[n]);
  return { nodeCount: N, edges, edgeOf, kind, firstNode, branchPath, maxDepth, rows, trie, children, nodesById };
}

interface LayoutDatum {
  edge: number;
  children: LayoutDatum[];
}

/**
 * Assigns each edge a y in leaf rows: d3's cluster layout puts leaves on consecutive rows in trie
 * order; an inner edge then sits on its first child's row, so the first branch runs straight
 * through and every later branch steps down from its junction (a git-graph staircase).
 */
function layoutTree(edges: TreeEdge[]): number {
  const root: LayoutDatum = { edge: -1, children: [] };
  const data: LayoutDatum[] = edges.map((e) => ({ edge: e.index, children: [] }));
  for (const e of edges) (e.parentEdge >= 0 ? data[e.parentEdge] : root).children.push(data[e.index]);
  const h = hierarchy(root);
  const laid: HierarchyPointNode<LayoutDatum> = cluster<LayoutDatum>()
    .nodeSize([1, 1])
    .separation(() => 1)(h);
  laid.eachAfter((node) => {
    if (node.children) node.x = node.children[0].x;
  });
  let min = Infinity;
  let max = -Infinity;
  laid.each((node) => {
    if (node.data.edge < 0) return;
    min = Math.min(min, node.x);
    max = Math.max(max, node.x);
  });
  laid.each((node) => {
    if (node.data.edge >= 0) edges[node.data.edge].y = node.x - min;
  });
  return edges.length ? max - min + 1 : 0;
}

/**
 * Trie nodes a sequence of physical ids occupies: walk the trie along the sequence, and where the
 * sequence leaves the trie (the physical tape does, after an eviction) continue from the id's first
 * node. Used to draw what a replay method shows a target onto the tree.
 */
export function nodesOfSequence(model: TreeModel, ids: ArrayLike<number>): Int32Array {
  const { trie } = model;
  const { start, nodes } = model.children;
  const byId = model.nodesById;
  const out = new Int32Array(ids.length);
  let at = -1;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    let next = -1;
    // The child of `at` holding `id` (a trie's children hold distinct ids), found in the shorter of two
    // lists: the children of `at` (list 0: the first-level nodes, list n + 1: node n's) or the nodes of
    // `id`. A junction of a thousand branches is passed in as many steps as the id has nodes.
    if (start[at + 2] - start[at + 1] <= byId.start[id + 1] - byId.start[id]) {
      for (let c = start[at + 1]; c < start[at + 2]; c++) if (trie.id[nodes[c]] === id) next = nodes[c];
    } else {
      for (let c = byId.start[id]; c < byId.start[id + 1]; c++) if (trie.parent[byId.nodes[c]] === at) next = byId.nodes[c];
    }
    if (next < 0) next = model.firstNode[id];
    out[i] = next;
    at = next;
  }
  return out;
}

/** Runs of equal strip class along an edge: [from, to, class] with class a CELL class or 'copy'. */
export function edgeRuns(model: TreeModel, edge: TreeEdge): { from: number; to: number; cls: number; copy: boolean }[] {
  const out: { from: number; to: number; cls: number; copy: boolean }[] = [];
  for (let n = edge.from; n <= edge.to; n++) {
    const copy = model.kind[n] === NODE.copy;
    const cls = model.kind[n] === NODE.target ? CELL.target : model.trie.cls[model.trie.id[n]];
    const last = out[out.length - 1];
    if (last && last.cls === cls && last.copy === copy) last.to = n;
    else out.push({ from: n, to: n, cls, copy });
  }
  return out;
}
