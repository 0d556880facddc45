// GELU in its tanh form (GPT-2's gelu_new), elementwise over n floats, forward and backward. The MLP
// usually gets it fused into matmul.wgsl's epilogue; this kernel is the standalone form.
//   forward   out = gelu(x)
//   backward  dx = dOut · gelu'(x)   (dx += with ACCUMULATE), x the GELU's input
// Grid: groups1d(n, WG) in src/gpu/gelu.ts; index = (gid.y · num_workgroups.x · WG) + gid.x.

override WG: u32 = 256;
override ACCUMULATE: bool = false;

// Mirror: geluParams() in src/gpu/gelu.ts.
struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>; // (n)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (n): forward
@group(0) @binding(3) var<storage, read> dOut: array<f32>; // (n): backward
@group(0) @binding(4) var<storage, read_write> dx: array<f32>; // (n): backward

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

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.y * groups.x * WG + gid.x;
  if (i < params.n) {
    out[i] = gelu(x[i]);
  }
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.y * groups.x * WG + gid.x;
  if (i < params.n) {
    var d = dOut[i] * geluGrad(x[i]);
    if (ACCUMULATE) {
      d += dx[i];
    }
    dx[i] = d;
  }
}
