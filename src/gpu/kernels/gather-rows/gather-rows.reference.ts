// Float64 reference of gather-rows.wgsl: the rows of x (N, C) that `rows` names, in request order.

export function gatherRowsReference(x: ArrayLike<number>, rows: ArrayLike<number>, C: number): Float64Array {
  const out = new Float64Array(rows.length * C);
  for (let j = 0; j < rows.length; j++) for (let c = 0; c < C; c++) out[j * C + c] = x[rows[j] * C + c];
  return out;
}
