// GELU in its tanh form (GPT-2's gelu_new) and its derivative, shared by the kernels that apply it
// (gelu, matmul's fused epilogue, matmul_backward's fused bias gradient): the host prepends this
// file to their code. The float64 reference is geluRef in src/gpu/kernels/gelu/gelu.reference.ts.

const GELU_SCALE: f32 = 0.7978845608028654; // sqrt(2 / pi)
const GELU_CUBE: f32 = 0.044715;

fn gelu(v: f32) -> f32 {
  // tanh saturates to ±1 in f32 well before ±15; the clamp keeps exp-based tanh from overflowing.
  let u = clamp(GELU_SCALE * (v + GELU_CUBE * v * v * v), -15.0, 15.0);
  return 0.5 * v * (1.0 + tanh(u));
}

fn geluGrad(v: f32) -> f32 {
  let t = tanh(clamp(GELU_SCALE * (v + GELU_CUBE * v * v * v), -15.0, 15.0));
  let du = GELU_SCALE * (1.0 + 3.0 * GELU_CUBE * v * v);
  return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * du;
}
