// Float64 reference of linear.wgsl: y (M, N) = x (M, K) · Wᵀ + bias, W (N, K) as Hugging Face stores it.

export function linearReference(x: ArrayLike<number>, w: ArrayLike<number>, bias: ArrayLike<number> | null, M: number, K: number, N: number): Float64Array {
  const y = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) s += x[m * K + k] * w[n * K + k];
      y[m * N + n] = s;
    }
  }
  return y;
}
