// Visibility masks (`end[]`, docs/methods.md) for the attention tests and benchmark: causal, random packed
// trees, block-diagonal batches. The real derivation from rollouts lives in src/tree; these only
// produce valid `end[]` shapes of every kind the kernel must serve.

import type { Rng } from '../../../util/prng';

/** One causal sequence: every key is seen by every later query. */
export function causalEnd(N: number): Uint32Array {
  return new Uint32Array(N).fill(N);
}

/**
 * A random trie in DFS preorder: node n's parent is a node on the path root..n-1; with probability
 * `forkProbability` it forks from a uniformly chosen depth of that path, otherwise it extends it.
 * end[k] = k + size of k's subtree, so query i sees exactly its root-to-i path.
 */
export function randomTreeEnd(rng: Rng, N: number, forkProbability: number): Uint32Array {
  const end = new Uint32Array(N).fill(N);
  const path: number[] = []; // the open nodes: root .. the last node placed
  for (let n = 0; n < N; n++) {
    if (n > 0 && rng.next() < forkProbability) {
      const keep = 1 + rng.int(path.length); // the new node's parent is path[keep - 1]
      while (path.length > keep) end[path.pop()!] = n;
    }
    path.push(n);
  }
  return end;
}

/** Several masks packed block-diagonally into one buffer: block b's indices are shifted by its offset. */
export function packEnds(blocks: ArrayLike<number>[]): Uint32Array {
  const N = blocks.reduce((sum, b) => sum + b.length, 0);
  const end = new Uint32Array(N);
  let offset = 0;
  for (const block of blocks) {
    for (let k = 0; k < block.length; k++) end[offset + k] = offset + block[k];
    offset += block.length;
  }
  return end;
}

/** Visible (query, key) pairs over N²/2, the causal count's leading term. */
export function maskDensity(end: ArrayLike<number>): number {
  let pairs = 0;
  for (let k = 0; k < end.length; k++) pairs += Math.max(0, end[k] - k);
  return pairs / ((end.length * end.length) / 2);
}
