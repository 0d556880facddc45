// The worked example's trie (docs/tree.md) as the tree view receives it, written by hand: packed
// order 0..8 | 9,10,7′,8′,11..14 | 13′,14′,15,16.
import { CELL } from './cells';
import type { TrieView } from './treeModel';

const P = CELL.prompt,
  O = CELL.obs,
  A = CELL.act,
  I = CELL.inserted;

export const WORKED_TRIE: TrieView = {
  id: Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16]),
  parent: Int32Array.from([-1, 0, 1, 2, 3, 4, 5, 6, 7, 1, 9, 10, 11, 12, 13, 14, 15, 10, 17, 18, 19]),
  depth: Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 3, 4, 5, 6, 7, 8, 9, 4, 5, 6, 7]),
  branchLeaf: Int32Array.from([8, 16, 20]),
  cls: Uint8Array.from([P, P, A, A, O, O, O, A, A, I, I, O, O, A, A, A, A]),
  isTarget: Uint8Array.from([0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1]),
  segment: Int32Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2]),
};
