// Float64 reference of matmul.wgsl (and matmul-naive.wgsl, the same product): out (M, N) = x (M, K) · w (K, N)
// + bias (N), optionally followed by GELU. Weights in Hugging Face Conv1D layout (y = x·W + b, W is (in, out)).

import { geluScalar } from '../gelu/gelu.reference';

type Vec = ArrayLike<number>;

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
