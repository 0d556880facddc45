// Float64 reference of matmul-backward.wgsl: the gradients of matmulRef (../matmul/matmul.reference.ts),
// through the fused GELU epilogue when there is one.

import { geluBackwardRef } from '../gelu/gelu.reference';

type Vec = ArrayLike<number>;

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
