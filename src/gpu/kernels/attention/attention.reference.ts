// Float64 reference of attention.wgsl (and attention-decode.wgsl, one query row of it), forward and backward.
// Multi-head attention with the `end[]` visibility rule (docs/methods.md): query i sees key k iff
// k <= i < end[k]. qkv is (N, 3C) with column blocks q | k | v; head h owns columns h·HS..(h+1)·HS
// of each block (HS = C / nHead). Scores are scaled by 1/sqrt(HS).
//
// A row that sees no key at all (possible only when end[i] <= i, e.g. padding) outputs zeros, has
// lse = -Infinity and receives no gradient.

type Vec = ArrayLike<number>;

export interface AttentionResult {
  out: Float64Array; // (N, C)
  lse: Float64Array; // (NH, N): natural-log sum-exp of the scaled, visible scores of each query row
}

export function visible(end: Vec, i: number, k: number): boolean {
  return k <= i && i < end[k];
}

/** The softmax row of query i in head h: probabilities over keys 0..i (zero where masked), and its lse. */
function attentionRow(qkv: Vec, end: Vec, C: number, HS: number, h: number, i: number): { p: Float64Array; lse: number } {
  const scale = 1 / Math.sqrt(HS);
  const s = new Float64Array(i + 1);
  let max = -Infinity;
  for (let k = 0; k <= i; k++) {
    if (!visible(end, i, k)) continue;
    let dot = 0;
    for (let d = 0; d < HS; d++) dot += qkv[i * 3 * C + h * HS + d] * qkv[k * 3 * C + C + h * HS + d];
    s[k] = dot * scale;
    if (s[k] > max) max = s[k];
  }
  const p = new Float64Array(i + 1);
  if (max === -Infinity) return { p, lse: -Infinity };
  let sum = 0;
  for (let k = 0; k <= i; k++) {
    if (!visible(end, i, k)) continue;
    p[k] = Math.exp(s[k] - max);
    sum += p[k];
  }
  for (let k = 0; k <= i; k++) p[k] /= sum;
  return { p, lse: max + Math.log(sum) };
}

export function attentionRef(qkv: Vec, end: Vec, N: number, C: number, nHead: number): AttentionResult {
  const HS = C / nHead;
  const out = new Float64Array(N * C);
  const lse = new Float64Array(nHead * N);
  for (let h = 0; h < nHead; h++) {
    for (let i = 0; i < N; i++) {
      const row = attentionRow(qkv, end, C, HS, h, i);
      lse[h * N + i] = row.lse;
      for (let k = 0; k <= i; k++) {
        if (row.p[k] === 0) continue;
        for (let d = 0; d < HS; d++) out[i * C + h * HS + d] += row.p[k] * qkv[k * 3 * C + 2 * C + h * HS + d];
      }
    }
  }
  return { out, lse };
}

/** Backward of attentionRef: dqkv (N, 3C) from dOut (N, C). */
export function attentionBackwardRef(qkv: Vec, end: Vec, dOut: Vec, N: number, C: number, nHead: number): Float64Array {
  const HS = C / nHead;
  const scale = 1 / Math.sqrt(HS);
  const dqkv = new Float64Array(N * 3 * C);
  const qAt = (i: number, h: number, d: number) => i * 3 * C + h * HS + d;
  const kAt = (i: number, h: number, d: number) => i * 3 * C + C + h * HS + d;
  const vAt = (i: number, h: number, d: number) => i * 3 * C + 2 * C + h * HS + d;
  for (let h = 0; h < nHead; h++) {
    for (let i = 0; i < N; i++) {
      const { p, lse } = attentionRow(qkv, end, C, HS, h, i);
      if (lse === -Infinity) continue;
      // dP[k] = dO·V[k]; dS[k] = P[k]·(dP[k] - Σ_j P[j]·dP[j]).
      const dp = new Float64Array(i + 1);
      let rowDot = 0;
      for (let k = 0; k <= i; k++) {
        if (p[k] === 0) continue;
        for (let d = 0; d < HS; d++) dp[k] += dOut[i * C + h * HS + d] * qkv[vAt(k, h, d)];
        rowDot += p[k] * dp[k];
      }
      for (let k = 0; k <= i; k++) {
        if (p[k] === 0) continue;
        const ds = p[k] * (dp[k] - rowDot) * scale;
        for (let d = 0; d < HS; d++) {
          dqkv[vAt(k, h, d)] += p[k] * dOut[i * C + h * HS + d];
          dqkv[qAt(i, h, d)] += ds * qkv[kAt(k, h, d)];
          dqkv[kAt(k, h, d)] += ds * qkv[qAt(i, h, d)];
        }
      }
    }
  }
  return dqkv;
}
