// Float64 reference of rmsnorm.wgsl: out (N, C) = x / sqrt(mean(x²) + eps) · weight, the family's RMSNorm
// (src/model/family/reference.ts composes it into the float64 Llama / Qwen forward).

type Vec = ArrayLike<number>;

/** RMSNorm of each row of x (rows, D): x / sqrt(mean(x²) + eps) · weight. */
export function rmsnormRef(x: Vec, weight: Vec, rows: number, D: number, eps: number): Float64Array {
  const out = new Float64Array(rows * D);
  for (let r = 0; r < rows; r++) {
    let ss = 0;
    for (let d = 0; d < D; d++) ss += x[r * D + d] * x[r * D + d];
    const rstd = 1 / Math.sqrt(ss / D + eps);
    for (let d = 0; d < D; d++) out[r * D + d] = x[r * D + d] * rstd * weight[d];
  }
  return out;
}
