// The live view as runs of consecutive physical ids, and the one operation that rewrites it (an
// edit). Costs follow the number of runs and pieces, not the number of kept tokens, so a
// 100k-token prompt kept by every edit costs one run per edit.

/** A sequence of physical ids as maximal runs `starts[r] .. starts[r] + lengths[r] - 1`. */
export interface Runs {
  readonly starts: readonly number[];
  readonly lengths: readonly number[];
  /** Total number of ids. */
  readonly length: number;
}

interface MutableRuns extends Runs {
  starts: number[];
  lengths: number[];
  length: number;
}

/** A piece of an edit, ids already assigned: keep ids a..b-1, or insert count new ids from first. */
export type EditPiece = { keep: [number, number] } | { insert: { first: number; count: number } };

export interface EditResult {
  view: Runs;
  /** Ids that were live and are not kept, in live order. */
  evicted: Int32Array;
}

export type EditOutcome = { ok: true; result: EditResult } | { ok: false; reason: string };

export function emptyRuns(): MutableRuns {
  return { starts: [], lengths: [], length: 0 };
}

/** Appends ids first..first+count-1 at the end of a view under construction. */
export function pushRun(view: Runs, first: number, count: number): void {
  const v = view as MutableRuns;
  if (count <= 0) return;
  const last = v.starts.length - 1;
  if (last >= 0 && v.starts[last] + v.lengths[last] === first) v.lengths[last] += count;
  else {
    v.starts.push(first);
    v.lengths.push(count);
  }
  v.length += count;
}

/** The ids of `runs[0 .. count)` as an array. */
export function runsToIds(runs: Runs, count = runs.length): Int32Array {
  const out = new Int32Array(count);
  let at = 0;
  for (let r = 0; r < runs.starts.length && at < count; r++) {
    const n = Math.min(runs.lengths[r], count - at);
    for (let i = 0; i < n; i++) out[at + i] = runs.starts[r] + i;
    at += n;
  }
  return out;
}

/**
 * Applies an edit to `view` (which is not modified). Keep ranges must hold live ids only, taken in
 * increasing live order without repeats; a new view equal to the old one is refused.
 */
export function applyEdit(view: Runs, pieces: readonly EditPiece[]): EditOutcome {
  const R = view.starts.length;
  // Live position of each run's first id, and the runs sorted by first id for lookups by id.
  const runPos = new Array<number>(R);
  for (let r = 0, p = 0; r < R; r++) {
    runPos[r] = p;
    p += view.lengths[r];
  }
  const byStart = Array.from({ length: R }, (_, r) => r).sort((x, y) => view.starts[x] - view.starts[y]);
  const findRun = (id: number): number => {
    let lo = 0;
    let hi = R - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (view.starts[byStart[mid]] <= id) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return -1;
    const r = byStart[found];
    return id < view.starts[r] + view.lengths[r] ? r : -1;
  };

  // Kept portions of old runs, in live order: run, from offset, to offset (exclusive).
  const keptRun: number[] = [];
  const keptFrom: number[] = [];
  const keptTo: number[] = [];
  let lastPos = -1;
  let keptCount = 0;
  let inserted = 0;
  const next = emptyRuns();

  for (const piece of pieces) {
    if ('insert' in piece) {
      pushRun(next, piece.insert.first, piece.insert.count);
      inserted += piece.insert.count;
      continue;
    }
    const [a, b] = piece.keep;
    let id = a;
    while (id < b) {
      const r = findRun(id);
      if (r < 0) return { ok: false, reason: `keep [${a}, ${b}]: id ${id} is not live` };
      const from = id - view.starts[r];
      const pos = runPos[r] + from;
      if (pos <= lastPos) {
        const twice = keptRun.some((kr, i) => kr === r && from >= keptFrom[i] && from < keptTo[i]);
        return {
          ok: false,
          reason: twice
            ? `keep [${a}, ${b}]: id ${id} is kept twice`
            : `keep [${a}, ${b}]: id ${id} comes before an id kept earlier (keeps must follow live order)`,
        };
      }
      const to = Math.min(b - view.starts[r], view.lengths[r]);
      keptRun.push(r);
      keptFrom.push(from);
      keptTo.push(to);
      keptCount += to - from;
      lastPos = runPos[r] + to - 1;
      id = view.starts[r] + to;
    }
    pushRun(next, a, b - a);
  }

  if (inserted === 0 && keptCount === view.length) {
    return { ok: false, reason: 'edit leaves the live view unchanged (an edit must evict or insert)' };
  }

  // Evicted = each old run minus its kept portions (which are in increasing offset order).
  const evicted = new Int32Array(view.length - keptCount);
  let e = 0;
  let k = 0;
  for (let r = 0; r < R; r++) {
    let cursor = 0;
    while (k < keptRun.length && keptRun[k] === r) {
      for (let o = cursor; o < keptFrom[k]; o++) evicted[e++] = view.starts[r] + o;
      cursor = keptTo[k];
      k++;
    }
    for (let o = cursor; o < view.lengths[r]; o++) evicted[e++] = view.starts[r] + o;
  }
  return { ok: true, result: { view: next, evicted } };
}
