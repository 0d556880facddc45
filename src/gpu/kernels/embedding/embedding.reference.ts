// Float64 reference of embedding.wgsl, forward and backward.
// Embedding: x[i] = wte[tokens[i]] + wpe[positions[i]], (N, C).

type Vec = ArrayLike<number>;

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
