// Float64 reference of swiglu.wgsl: out (R, FF) = silu(gate) · up, gateUp (R, 2·FF) = gate | up per row.

export function swigluReference(gateUp: ArrayLike<number>, R: number, FF: number): Float64Array {
  const out = new Float64Array(R * FF);
  for (let r = 0; r < R; r++) {
    for (let c = 0; c < FF; c++) {
      const g = gateUp[r * 2 * FF + c];
      out[r * FF + c] = (g / (1 + Math.exp(-g))) * gateUp[r * 2 * FF + FF + c];
    }
  }
  return out;
}
