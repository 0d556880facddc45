// Float64 helpers over one logits row of a row-major (N, V) array: the log-sum-exp with the row
// maximum subtracted first (the same reduction the WGSL kernels do), softmax and log-softmax.

export type Vec = ArrayLike<number>;

/** log Σ_v exp(logits[row, v]); finite for finite logits however large. */
export function rowLogSumExp(logits: Vec, V: number, row: number): number {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[row * V + v]);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[row * V + v] - max);
  return max + Math.log(sum);
}

/** log softmax(logits[row, :]), (V). */
export function rowLogSoftmax(logits: Vec, V: number, row: number): Float64Array {
  const lse = rowLogSumExp(logits, V, row);
  const out = new Float64Array(V);
  for (let v = 0; v < V; v++) out[v] = logits[row * V + v] - lse;
  return out;
}

/** Throws unless `logits` holds exactly N rows of V values. */
export function checkLogits(logits: Vec, N: number, V: number, name = 'logits'): void {
  if (!Number.isInteger(V) || V < 1) throw new Error(`${name}: vocabulary size must be a positive integer, got ${V}`);
  if (!Number.isInteger(N) || N < 0) throw new Error(`${name}: row count must be a non-negative integer, got ${N}`);
  if (logits.length !== N * V) throw new Error(`${name}: ${logits.length} values, expected N·V = ${N}·${V} = ${N * V}`);
}
