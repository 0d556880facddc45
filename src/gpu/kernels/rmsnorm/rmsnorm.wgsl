// RMSNorm of the model families: out (N, C) = x / sqrt(mean(x²) + eps) · weight, f32 activations,
// weight (C) in the folder's format (WFMT: weight-format.wgsl) — Llama's and Qwen's
// `input_layernorm`, `post_attention_layernorm` and the final `norm`. C is even.
// The host prepends weight-format.wgsl and kernels/common/reduce.wgsl (reduceSum over the workgroup).
//
// One workgroup of WG invocations per row; rows fold over (x, y) when N exceeds one dimension.

override WG: u32 = 64; // a power of two (reduce.wgsl)

// Mirror: rmsnormParams() in rmsnorm.ts.
struct Params {
  N: u32, // rows
  C: u32, // width (even)
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec2f>; // (N, C)
@group(0) @binding(1) var<storage, read> w: array<WeightWord>; // (C) in WFMT
@group(0) @binding(2) var<storage, read_write> out: array<vec2f>; // (N, C)
@group(0) @binding(3) var<uniform> params: Params;

fn wPair(p: u32) -> vec2f {
  if (WFMT == 0u) { return pairF32(w[2u * p], w[2u * p + 1u]); }
  return pair16(w[p]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * groups.x; // uniform across the workgroup
  let C2 = params.C / 2u;
  let live = row < params.N;
  let at = row * C2;
  var s = 0.0;
  if (live) {
    for (var p = lid; p < C2; p += WG) {
      let v = x[at + p];
      s += dot(v, v);
    }
  }
  let total = reduceSum(s, lid); // every invocation calls it: uniform control flow
  if (!live) { return; }
  let r = inverseSqrt(total / f32(params.C) + params.eps);
  for (var p = lid; p < C2; p += WG) {
    out[at + p] = x[at + p] * r * wPair(p);
  }
}
