// The packed trie of docs/tree.md: branches 0..K inserted as paths of nodes keyed by (parent, physical
// id), laid out in DFS preorder with children in creation order, with `end[]` (one past each
// node's subtree), depths and parents. Each branch adds one chain of fresh nodes after its longest
// prefix already in the trie; the walk that finds that prefix steps over whole runs of ids, so the
// cost is linear in the packed length plus the runs and chains visited, not in the branch lengths.

import type { Runs } from '../rollout/live-view';

export interface PackedTrie {
  /** Physical id per packed index (N_packed). */
  packedOrder: Int32Array;
  /** Packed index of the parent, -1 for a root. */
  parent: Int32Array;
  /** Depth per packed index: the node's position id in the packed-4d plan. */
  depth: Int32Array;
  /** One past the last packed index of the node's subtree: query i sees key k iff k <= i < end[k]. */
  end: Uint32Array;
  /** The branch whose insertion created each node. */
  nodeBranch: Int32Array;
  /** Per branch: packed index of its last node (-1 for an empty branch). */
  branchLeaf: Int32Array;
  /** Per branch: length of its prefix shared with earlier branches (its chain starts at that depth). */
  sharedLength: Int32Array;
  /** Per branch: packed index of its first fresh node, -1 when it added none. */
  chainStart: Int32Array;
}

interface Chain {
  starts: number[];
  lengths: number[];
  /** Offset within the chain of each run's first id. */
  offsets: number[];
  length: number;
  parentChain: number;
  parentOffset: number;
  /** Creation number of the chain's first node (nodes are numbered in creation order). */
  base: number;
}

function runAt(chain: Chain, offset: number): number {
  let lo = 0;
  let hi = chain.offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (chain.offsets[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function idAt(chain: Chain, offset: number): number {
  const r = runAt(chain, offset);
  return chain.starts[r] + offset - chain.offsets[r];
}

const ROOT = -1;

/** Phase 1: every branch inserted as a chain of fresh nodes after its longest prefix already in the trie. */
function insertBranches(branches: readonly Runs[]) {
  const B = branches.length;
  const chains: Chain[] = [];
  /** Chains attached at each node, by the node's creation number (ROOT for the virtual root), in creation order. */
  const attached = new Map<number, number[]>();
  const sharedLength = new Int32Array(B);
  const leafChain = new Int32Array(B);
  const leafOffset = new Int32Array(B);
  let created = 0;

  for (let k = 0; k < B; k++) {
    const branch = branches[k];
    const n = branch.length;
    let bRun = 0;
    let bOff = 0;
    let pos = 0;
    let chain = ROOT;
    let off = -1;
    // Follow the trie while the branch matches it.
    while (pos < n) {
      const x = branch.starts[bRun] + bOff;
      let nextChain = ROOT;
      let nextOff = 0;
      if (chain !== ROOT && off + 1 < chains[chain].length && idAt(chains[chain], off + 1) === x) {
        nextChain = chain;
        nextOff = off + 1;
      } else {
        const list = attached.get(chain === ROOT ? ROOT : chains[chain].base + off);
        const hit = list?.find((d) => chains[d].starts[0] === x);
        if (hit === undefined) break;
        nextChain = hit;
      }
      const c = chains[nextChain];
      let cr = runAt(c, nextOff);
      let co = nextOff - c.offsets[cr];
      let o = nextOff;
      while (pos < n && o < c.length) {
        if (c.starts[cr] + co !== branch.starts[bRun] + bOff) break;
        const len = Math.min(c.lengths[cr] - co, branch.lengths[bRun] - bOff);
        pos += len;
        o += len;
        co += len;
        bOff += len;
        if (co === c.lengths[cr]) {
          cr++;
          co = 0;
        }
        if (bOff === branch.lengths[bRun]) {
          bRun++;
          bOff = 0;
        }
      }
      chain = nextChain;
      off = o - 1;
    }
    sharedLength[k] = pos;
    // The rest of the branch is a fresh chain hanging off the last matched node.
    const fresh: Chain = { starts: [], lengths: [], offsets: [], length: n - pos, parentChain: chain, parentOffset: off, base: created };
    for (let r = bRun, first = bOff, o = 0; r < branch.starts.length; r++, first = 0) {
      fresh.starts.push(branch.starts[r] + first);
      fresh.lengths.push(branch.lengths[r] - first);
      fresh.offsets.push(o);
      o += branch.lengths[r] - first;
    }
    chains.push(fresh);
    if (fresh.length > 0) {
      const key = chain === ROOT ? ROOT : chains[chain].base + off;
      const list = attached.get(key);
      if (list) list.push(k);
      else attached.set(key, [k]);
      created += fresh.length;
      leafChain[k] = k;
      leafOffset[k] = fresh.length - 1;
    } else {
      leafChain[k] = chain;
      leafOffset[k] = off;
    }
  }

  return { chains, sharedLength, leafChain, leafOffset, created };
}

/**
 * N_packed without the trie: the number of nodes phase 1 creates, with memory following the runs
 * of the branches, not N_packed (what `mw tree` prints for a large data set).
 */
export function packedLengthOf(branches: readonly Runs[]): number {
  return insertBranches(branches).created;
}

export function buildPackedTrie(branches: readonly Runs[]): PackedTrie {
  const B = branches.length;
  const { chains, sharedLength, leafChain, leafOffset, created } = insertBranches(branches);
  // Subtree sizes (children are later chains), then preorder starts (parents first).
  const N = created;
  const size = new Float64Array(B);
  const children: { offset: number; chain: number }[][] = chains.map(() => []);
  const rootChildren: number[] = [];
  for (let k = 0; k < B; k++) {
    if (chains[k].length === 0) continue;
    if (chains[k].parentChain === ROOT) rootChildren.push(k);
    else children[chains[k].parentChain].push({ offset: chains[k].parentOffset, chain: k });
  }
  for (let k = B - 1; k >= 0; k--) {
    size[k] += chains[k].length;
    if (chains[k].length > 0 && chains[k].parentChain !== ROOT) size[chains[k].parentChain] += size[k];
  }
  const chainStart = new Int32Array(B).fill(-1);
  let cursor = 0;
  for (const k of rootChildren) {
    chainStart[k] = cursor;
    cursor += size[k];
  }
  const packedOrder = new Int32Array(N);
  const parent = new Int32Array(N);
  const depth = new Int32Array(N);
  const end = new Uint32Array(N);
  const nodeBranch = new Int32Array(N);
  for (let k = 0; k < B; k++) {
    const c = chains[k];
    if (c.length === 0) continue;
    const s = chainStart[k];
    // Preorder after a chain: the children of its last node first, then those of earlier nodes.
    const kids = children[k].sort((x, y) => y.offset - x.offset || x.chain - y.chain);
    let at = s + c.length;
    for (const kid of kids) {
      chainStart[kid.chain] = at;
      at += size[kid.chain];
    }
    let subtreeEnd = s + c.length;
    let kid = 0;
    for (let o = c.length - 1; o >= 0; o--) {
      while (kid < kids.length && kids[kid].offset === o) subtreeEnd += size[kids[kid++].chain];
      end[s + o] = subtreeEnd;
    }
    for (let r = 0; r < c.starts.length; r++) {
      for (let i = 0; i < c.lengths[r]; i++) packedOrder[s + c.offsets[r] + i] = c.starts[r] + i;
    }
    const d0 = sharedLength[k];
    for (let o = 0; o < c.length; o++) {
      depth[s + o] = d0 + o;
      parent[s + o] = s + o - 1;
      nodeBranch[s + o] = k;
    }
    parent[s] = c.parentChain === ROOT ? -1 : chainStart[c.parentChain] + c.parentOffset;
  }
  const branchLeaf = new Int32Array(B);
  for (let k = 0; k < B; k++) branchLeaf[k] = leafChain[k] === ROOT ? -1 : chainStart[leafChain[k]] + leafOffset[k];
  return { packedOrder, parent, depth, end, nodeBranch, branchLeaf, sharedLength, chainStart };
}
