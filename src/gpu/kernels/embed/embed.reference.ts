// Float64 reference of embed.wgsl: out (N, C) = rows `tokens` of the table (V, C).

export function embedReference(table: ArrayLike<number>, tokens: ArrayLike<number>, C: number): Float64Array {
  const out = new Float64Array(tokens.length * C);
  for (let i = 0; i < tokens.length; i++) for (let c = 0; c < C; c++) out[i * C + c] = table[tokens[i] * C + c];
  return out;
}
