// Float64 reference of layernorm.wgsl, forward and backward.
// LayerNorm over the last axis of x (N, C). rstd = 1 / sqrt(var + eps), var the biased variance.

type Vec = ArrayLike<number>;

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
