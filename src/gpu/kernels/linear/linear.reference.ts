// Float64 reference of linear.wgsl: y (M, N) = x (M, K) · Wᵀ + bias, W (N, K) as Hugging Face stores it
// (src/model/family/reference.ts composes it into the float64 Llama / Qwen forward).

type Vec = ArrayLike<number>;

/** y = x Wᵀ + b with W (out, in) as PyTorch's Linear stores it: x (M, K) → (M, N). */
export function linearRef(x: Vec, w: Vec, bias: Vec | null, M: number, K: number, N: number): Float64Array {
  const out = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let acc = bias ? bias[n] : 0;
      for (let k = 0; k < K; k++) acc += x[m * K + k] * w[n * K + k];
      out[m * N + n] = acc;
    }
  }
  return out;
}
