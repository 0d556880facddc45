// GELU in its tanh form (GPT-2's gelu_new), elementwise over n floats, forward and backward. The MLP
// usually gets it fused into matmul.wgsl's epilogue; this kernel is the standalone form.
//   forward   out = gelu(x)
//   backward  dx = dOut · gelu'(x)   (dx += with ACCUMULATE), x the GELU's input
// Grid: groups1d(n, WG) in gelu.ts; index = (gid.y · num_workgroups.x · WG) + gid.x.

override WG: u32 = 256;
override ACCUMULATE: bool = false;

// Mirror: geluParams() in gelu.ts.
struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>; // (n)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (n): forward
@group(0) @binding(3) var<storage, read> dOut: array<f32>; // (n): backward
@group(0) @binding(4) var<storage, read_write> dx: array<f32>; // (n): backward

// gelu() and geluGrad(): ../common/gelu-math.wgsl, prepended by the host.

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
