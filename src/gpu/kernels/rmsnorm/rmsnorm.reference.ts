// Float64 reference of rmsnorm.wgsl: out (N, C) = x / sqrt(mean(x²) + eps) · weight.

export function rmsnormReference(x: ArrayLike<number>, weight: ArrayLike<number>, N: number, C: number, eps: number): Float64Array {
  const out = new Float64Array(N * C);
  for (let i = 0; i < N; i++) {
    let s = 0;
    for (let c = 0; c < C; c++) s += x[i * C + c] ** 2;
    const r = 1 / Math.sqrt(s / C + eps);
    for (let c = 0; c < C; c++) out[i * C + c] = x[i * C + c] * r * weight[c];
  }
  return out;
}
