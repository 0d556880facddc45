// One method's prefix against the live prefix, on the physical axis, as runs of states: shared
// (shown, and the policy saw it), stale (shown, created before the target but evicted for it:
// Naive-Full's revived context), future (shown, created after the target: Naive-Compressed's
// time-travel) and missing (the policy saw it, the method does not show it). Runs keep the
// inspector's strips cheap.

export const PREFIX_STATE = { none: 0, shared: 1, stale: 2, future: 3, missing: 4 } as const;
export type PrefixState = (typeof PREFIX_STATE)[keyof typeof PREFIX_STATE];

/** One past the largest id any of the prefixes (or the target) holds: the strips' axis. */
export function axisEnd(target: number, prefixes: (ArrayLike<number> | null)[]): number {
  let end = target + 1;
  for (const p of prefixes) if (p) for (let i = 0; i < p.length; i++) if (p[i] + 1 > end) end = p[i] + 1;
  return end;
}

/** Runs [start, end, state] flattened over ids 0..end-1 (the target itself excluded). */
export function prefixStateRuns(live: ArrayLike<number>, prefix: ArrayLike<number> | null, target: number, end = target + 1): Int32Array {
  const state = new Uint8Array(end);
  for (let i = 0; i < live.length; i++) state[live[i]] = PREFIX_STATE.missing;
  if (prefix) {
    for (let i = 0; i < prefix.length; i++) {
      const id = prefix[i];
      state[id] = state[id] === PREFIX_STATE.missing ? PREFIX_STATE.shared : id > target ? PREFIX_STATE.future : PREFIX_STATE.stale;
    }
  }
  state[target] = PREFIX_STATE.none;
  const runs: number[] = [];
  for (let id = 0; id < end; id++) {
    const s = state[id];
    if (s === PREFIX_STATE.none) continue;
    const n = runs.length;
    if (n && runs[n - 1] === s && runs[n - 2] === id) runs[n - 2] = id + 1;
    else runs.push(id, id + 1, s);
  }
  return Int32Array.from(runs);
}
