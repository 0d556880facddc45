// Float64 reference of logsoftmax.wgsl: log softmax gathered at targets, out[j] = log softmax(logits[rows[j], :])[tokens[j]],
// and its backward; with the helpers over one logits row of a row-major (N, V) array (the log-sum-exp with the row
// maximum subtracted first, the same reduction the WGSL kernels do) that the objectives' references share.

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

export function logsoftmaxGatherRef(logits: Vec, V: number, rows: Vec, tokens: Vec): Float64Array {
  if (rows.length !== tokens.length) throw new Error(`logsoftmaxGatherRef: ${rows.length} rows but ${tokens.length} tokens`);
  const out = new Float64Array(rows.length);
  for (let j = 0; j < rows.length; j++) out[j] = logits[rows[j] * V + tokens[j]] - rowLogSumExp(logits, V, rows[j]);
  return out;
}

/**
 * Backward of logsoftmaxGatherRef: dLogits (M, V) for M logit rows, given d(out[j]) = dLogprob[j].
 * d logp / d logit[t] = [t == token] - softmax[t]; rows scored twice accumulate.
 */
export function logsoftmaxGatherBackwardRef(logits: Vec, V: number, M: number, rows: Vec, tokens: Vec, dLogprob: Vec): Float64Array {
  const dLogits = new Float64Array(M * V);
  for (let j = 0; j < rows.length; j++) {
    const r = rows[j];
    const lse = rowLogSumExp(logits, V, r);
    for (let t = 0; t < V; t++) dLogits[r * V + t] -= dLogprob[j] * Math.exp(logits[r * V + t] - lse);
    dLogits[r * V + tokens[j]] += dLogprob[j];
  }
  return dLogits;
}
