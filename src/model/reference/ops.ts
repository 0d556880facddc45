// Float64 reference of every GPT-2 op, forward and backward: the oracle each WGSL kernel is tested
// against. Row-major everywhere; weights in Hugging Face Conv1D layout (y = x·W + b, W is (in, out)).
// Plain loops, no cleverness: these functions are read more often than they are run.

type Vec = ArrayLike<number>;

// ---------------------------------------------------------------------------------------------
// GELU, tanh form (GPT-2's `gelu_new`)

const GELU_SCALE = Math.sqrt(2 / Math.PI);
const GELU_CUBE = 0.044715;

function geluScalar(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_SCALE * (x + GELU_CUBE * x * x * x)));
}

/** d gelu(x) / dx. */
function geluGrad(x: number): number {
  const u = GELU_SCALE * (x + GELU_CUBE * x * x * x);
  const t = Math.tanh(u);
  const du = GELU_SCALE * (1 + 3 * GELU_CUBE * x * x);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
}

export function geluRef(x: Vec): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = geluScalar(x[i]);
  return out;
}

/** dx = dOut · gelu'(x), where x is the GELU's input. */
export function geluBackwardRef(x: Vec, dOut: Vec): Float64Array {
  const dx = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) dx[i] = dOut[i] * geluGrad(x[i]);
  return dx;
}

// ---------------------------------------------------------------------------------------------
// Matmul: out (M, N) = x (M, K) · w (K, N) + bias (N), optionally followed by GELU.

export function matmulRef(x: Vec, w: Vec, bias: Vec | null, M: number, K: number, N: number, gelu = false): Float64Array {
  const out = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let acc = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) acc += x[m * K + k] * w[k * N + n];
      out[m * N + n] = gelu ? geluScalar(acc) : acc;
    }
  }
  return out;
}

export interface MatmulGrads {
  dx: Float64Array; // (M, K)
  dw: Float64Array; // (K, N)
  dbias: Float64Array; // (N)
}

/**
 * Backward of matmulRef. With `preGelu` (the (M, N) pre-activation x·w + b of a fused GELU
 * epilogue), dOut is first taken back through the GELU.
 */
export function matmulBackwardRef(x: Vec, w: Vec, dOut: Vec, M: number, K: number, N: number, preGelu?: Vec | null): MatmulGrads {
  const dPre = preGelu ? geluBackwardRef(preGelu, dOut) : Float64Array.from(dOut); // (M, N)
  const dx = new Float64Array(M * K);
  const dw = new Float64Array(K * N);
  const dbias = new Float64Array(N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      const d = dPre[m * N + n];
      dbias[n] += d;
      for (let k = 0; k < K; k++) {
        dx[m * K + k] += d * w[k * N + n];
        dw[k * N + n] += x[m * K + k] * d;
      }
    }
  }
  return { dx, dw, dbias };
}

// ---------------------------------------------------------------------------------------------
// LayerNorm over the last axis of x (N, C). rstd = 1 / sqrt(var + eps), var the biased variance.

export interface LayernormResult {
  out: Float64Array; // (N, C)
  mean: Float64Array; // (N)
  rstd: Float64Array; // (N)
}

export function layernormRef(x: Vec, weight: Vec, bias: Vec, N: number, C: number, eps = 1e-5): LayernormResult {
  const out = new Float64Array(N * C);
  const mean = new Float64Array(N);
  const rstd = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    let m = 0;
    for (let c = 0; c < C; c++) m += x[i * C + c];
    m /= C;
    let v = 0;
    for (let c = 0; c < C; c++) v += (x[i * C + c] - m) ** 2;
    v /= C;
    const s = 1 / Math.sqrt(v + eps);
    for (let c = 0; c < C; c++) out[i * C + c] = (x[i * C + c] - m) * s * weight[c] + bias[c];
    mean[i] = m;
    rstd[i] = s;
  }
  return { out, mean, rstd };
}

export interface LayernormGrads {
  dx: Float64Array; // (N, C)
  dweight: Float64Array; // (C)
  dbias: Float64Array; // (C)
}

export function layernormBackwardRef(x: Vec, weight: Vec, mean: Vec, rstd: Vec, dOut: Vec, N: number, C: number): LayernormGrads {
  const dx = new Float64Array(N * C);
  const dweight = new Float64Array(C);
  const dbias = new Float64Array(C);
  for (let i = 0; i < N; i++) {
    // With xhat = (x - mean)·rstd and g = dOut·weight: dx = rstd · (g - mean(g) - xhat·mean(g·xhat)).
    let gMean = 0;
    let gxMean = 0;
    for (let c = 0; c < C; c++) {
      const xhat = (x[i * C + c] - mean[i]) * rstd[i];
      const g = dOut[i * C + c] * weight[c];
      gMean += g;
      gxMean += g * xhat;
      dweight[c] += dOut[i * C + c] * xhat;
      dbias[c] += dOut[i * C + c];
    }
    gMean /= C;
    gxMean /= C;
    for (let c = 0; c < C; c++) {
      const xhat = (x[i * C + c] - mean[i]) * rstd[i];
      const g = dOut[i * C + c] * weight[c];
      dx[i * C + c] = rstd[i] * (g - gMean - xhat * gxMean);
    }
  }
  return { dx, dweight, dbias };
}

// ---------------------------------------------------------------------------------------------
// Embedding: x[i] = wte[tokens[i]] + wpe[positions[i]], (N, C).

export function embeddingRef(tokens: Vec, positions: Vec, wte: Vec, wpe: Vec, C: number): Float64Array {
  const N = tokens.length;
  if (positions.length !== N) throw new Error(`embeddingRef: ${N} tokens but ${positions.length} positions`);
  const out = new Float64Array(N * C);
  for (let i = 0; i < N; i++) {
    const t = tokens[i];
    const p = positions[i];
    for (let c = 0; c < C; c++) out[i * C + c] = wte[t * C + c] + wpe[p * C + c];
  }
  return out;
}

export interface EmbeddingGrads {
  dwte: Float64Array; // (V, C)
  dwpe: Float64Array; // (P, C)
}

export function embeddingBackwardRef(tokens: Vec, positions: Vec, dOut: Vec, V: number, P: number, C: number): EmbeddingGrads {
  const dwte = new Float64Array(V * C);
  const dwpe = new Float64Array(P * C);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const p = positions[i];
    for (let c = 0; c < C; c++) {
      dwte[t * C + c] += dOut[i * C + c];
      dwpe[p * C + c] += dOut[i * C + c];
    }
  }
  return { dwte, dwpe };
}

// ---------------------------------------------------------------------------------------------
// Multi-head attention with the `end[]` visibility rule (docs/methods.md): query i sees key k iff
// k <= i < end[k]. qkv is (N, 3C) with column blocks q | k | v; head h owns columns h·HS..(h+1)·HS
// of each block (HS = C / nHead). Scores are scaled by 1/sqrt(HS).
//
// A row that sees no key at all (possible only when end[i] <= i, e.g. padding) outputs zeros, has
// lse = -Infinity and receives no gradient.

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

// ---------------------------------------------------------------------------------------------
// Log-softmax gathered at targets: out[j] = log softmax(logits[rows[j], :])[tokens[j]].

function rowLogSumExp(logits: Vec, V: number, r: number): number {
  let max = -Infinity;
  for (let t = 0; t < V; t++) max = Math.max(max, logits[r * V + t]);
  let sum = 0;
  for (let t = 0; t < V; t++) sum += Math.exp(logits[r * V + t] - max);
  return max + Math.log(sum);
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
