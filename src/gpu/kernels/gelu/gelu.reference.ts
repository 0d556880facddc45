// Float64 reference of gelu.wgsl, forward and backward: GELU in the tanh form (GPT-2's `gelu_new`).
// Plain loops, no cleverness: the oracle is read more often than it is run.

type Vec = ArrayLike<number>;

const GELU_SCALE = Math.sqrt(2 / Math.PI);
const GELU_CUBE = 0.044715;

export function geluScalar(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_SCALE * (x + GELU_CUBE * x * x * x)));
}

/** d gelu(x) / dx. */
function geluGrad(x: number): number {
  const u = GELU_SCALE * (x + GELU_CUBE * x * x * x);
  const t = Math.tanh(u);
  const du = GELU_SCALE * (1 + 3 * GELU_CUBE * x * x);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
}

export function geluRef(x: Vec): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = geluScalar(x[i]);
  return out;
}

/** dx = dOut · gelu'(x), where x is the GELU's input. */
export function geluBackwardRef(x: Vec, dOut: Vec): Float64Array {
  const dx = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) dx[i] = dOut[i] * geluGrad(x[i]);
  return dx;
}
