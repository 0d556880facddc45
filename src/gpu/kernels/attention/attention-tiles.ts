// The block mask of tiled attention (FlexAttention style), derived exactly from `end[]` (docs/methods.md:
// query i sees key k iff k <= i < end[k]): which key tiles each query tile visits and, transposed,
// which query tiles each key tile visits. A tile pair is listed iff it holds at least one visible pair.
// Pure logic, no GPU: computed once per batch on the CPU and shared by every layer, forward and backward.

/** A CSR list: the entries of row r are tiles[offsets[r] .. offsets[r + 1]), ascending. */
export interface TileLists {
  offsets: Uint32Array; // (rows + 1)
  tiles: Uint32Array; // (pairs)
}

export interface AttentionTiles {
  N: number;
  BQ: number; // query rows per tile
  BK: number; // key rows per tile
  queryTiles: number; // ceil(N / BQ)
  keyTiles: number; // ceil(N / BK)
  /** Tile pairs with at least one visible (query, key) pair: the work the kernels do. */
  pairs: number;
  /** Visible (query, key) pairs, Σ_k (end[k] - k) over keys with end[k] > k. */
  visiblePairs: number;
  keyTilesOfQueryTile: TileLists; // forward and dQ: per query tile, the key tiles it sees
  queryTilesOfKeyTile: TileLists; // dK, dV: per key tile, the query tiles that see it
}

/**
 * Key k is seen by the queries [k, end[k]), i.e. by the query tiles floor(k/BQ) .. floor((end[k]-1)/BQ);
 * with groups (query i sees key k iff also group[k] = group[i]) that interval is cut to the runs of
 * rows of k's group. Each key tile's query-tile intervals are merged in start order. Exact: a tree's
 * visible tiles can be sparse, and this never lists an empty pair.
 */
export function attentionTiles(end: ArrayLike<number>, BQ: number, BK: number, group?: ArrayLike<number>): AttentionTiles {
  const N = end.length;
  for (const [name, value] of [
    ['BQ', BQ],
    ['BK', BK],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`attentionTiles: ${name} must be a positive integer, got ${value}`);
  }
  if (group && group.length !== N) throw new Error(`attentionTiles: ${group.length} groups for ${N} rows`);
  const runs = group ? groupRuns(group) : null;
  const queryTiles = Math.ceil(N / BQ);
  const keyTiles = Math.ceil(N / BK);
  let visiblePairs = 0;
  const byKey: number[] = [];
  const keyOffsets = new Uint32Array(keyTiles + 1);
  const spans: [number, number][] = []; // query-tile intervals [a, b] of the current key tile
  for (let kt = 0; kt < keyTiles; kt++) {
    keyOffsets[kt] = byKey.length;
    spans.length = 0;
    for (let k = kt * BK; k < Math.min(N, (kt + 1) * BK); k++) {
      const e = end[k];
      if (!Number.isInteger(e) || e < 0 || e > N) throw new Error(`attentionTiles: end[${k}] = ${e} is not an integer in [0, ${N}]`);
      for (const [start, stop] of runs ? runs.get(group![k])! : [[0, N] as const]) {
        const lo = Math.max(start, k);
        const hi = Math.min(stop, e);
        if (lo >= hi) continue; // nobody sees key k here
        visiblePairs += hi - lo;
        spans.push([Math.floor(lo / BQ), Math.floor((hi - 1) / BQ)]);
      }
    }
    // Without groups the spans already come in start order (keys ascending); the sort keeps that.
    if (runs) spans.sort((x, y) => x[0] - y[0]);
    let lo = -1; // the merged interval [lo, hi] of query tiles being built
    let hi = -1;
    for (const [a, b] of spans) {
      if (lo >= 0 && a <= hi + 1) {
        hi = Math.max(hi, b);
        continue;
      }
      for (let qt = lo; lo >= 0 && qt <= hi; qt++) byKey.push(qt);
      lo = a;
      hi = b;
    }
    for (let qt = lo; lo >= 0 && qt <= hi; qt++) byKey.push(qt);
  }
  keyOffsets[keyTiles] = byKey.length;
  const queryTilesOfKeyTile = { offsets: keyOffsets, tiles: Uint32Array.from(byKey) };
  return {
    N,
    BQ,
    BK,
    queryTiles,
    keyTiles,
    pairs: byKey.length,
    visiblePairs,
    keyTilesOfQueryTile: transpose(queryTilesOfKeyTile, queryTiles),
    queryTilesOfKeyTile,
  };
}

/** Runs of consecutive rows of one group, per group: [start, stop) ascending. */
function groupRuns(group: ArrayLike<number>): Map<number, [number, number][]> {
  const runs = new Map<number, [number, number][]>();
  for (let i = 0; i < group.length; ) {
    let j = i + 1;
    while (j < group.length && group[j] === group[i]) j++;
    const list = runs.get(group[i]) ?? [];
    list.push([i, j]);
    runs.set(group[i], list);
    i = j;
  }
  return runs;
}

/** Counting-sort transpose; walking the source rows in order keeps every target row ascending. */
function transpose(lists: TileLists, targetRows: number): TileLists {
  const offsets = new Uint32Array(targetRows + 1);
  for (const t of lists.tiles) offsets[t + 1]++;
  for (let r = 0; r < targetRows; r++) offsets[r + 1] += offsets[r];
  const fill = offsets.slice(0, targetRows);
  const tiles = new Uint32Array(lists.tiles.length);
  for (let r = 0; r + 1 < lists.offsets.length; r++) {
    for (let e = lists.offsets[r]; e < lists.offsets[r + 1]; e++) tiles[fill[lists.tiles[e]]++] = r;
  }
  return { offsets, tiles };
}
