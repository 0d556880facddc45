// Rotary position embedding in the `rotate_half` convention (Llama, Qwen), in place on the queries and
// keys of qkv (N, (NH + 2·NKV)·HS) = q (NH heads) | k (NKV heads) | v (NKV heads) per row: for d < HS/2,
//   x'[d] = x[d]·cos(a) − x[d + HS/2]·sin(a),  x'[d + HS/2] = x[d + HS/2]·cos(a) + x[d]·sin(a),
// a = position[i] · invFreq[d], at each row's logical position (in a tree every branch counts from its
// root). The host computes cos(a) and sin(a) in float64 for every position the batch uses
// (ropeRotation in rope.ts, from the inverse frequencies of the rope scaling: none, linear,
// llama3): GPU sin and cos are promised only 2^-11 absolute (SwiftShader measured 1e-4 off), and an
// f32 angle loses 2^-24 of itself.
// With QK_NORM (Qwen3) each head's row is first RMS-normalised with q_norm or k_norm (HS, WFMT).
// The host prepends weight-format.wgsl and kernels/common/reduce.wgsl.
//
// One workgroup per (head j of the NH + NKV query and key heads, row); rows fold over (y, z).

override NH: u32; // query heads
override NKV: u32; // key/value heads
override HS: u32; // head size (even)
override WG: u32 = 64; // invocations per (row, head), a power of two (reduce.wgsl)
override QK_NORM: bool = false;

// Mirror: ropeParams() in rope.ts.
struct Params {
  N: u32, // rows
  eps: f32, // of q_norm / k_norm (QK_NORM)
  first: u32, // qkv row of row 0 (a decoder's new rows sit at row `start` of its cache)
}

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>; // (first + N, (NH + 2·NKV)·HS)
@group(0) @binding(1) var<storage, read> positions: array<u32>; // (N)
@group(0) @binding(2) var<storage, read> rotation: array<vec2f>; // (positions, HS / 2): (cos a, sin a)
@group(0) @binding(3) var<storage, read> qNorm: array<WeightWord>; // (HS) in WFMT, QK_NORM only
@group(0) @binding(4) var<storage, read> kNorm: array<WeightWord>; // (HS) in WFMT, QK_NORM only
@group(0) @binding(5) var<uniform> params: Params;

fn normWeight(isQuery: bool, d: u32) -> f32 {
  if (WFMT == 0u) { return wordF32(select(kNorm[d], qNorm[d], isQuery)); }
  return pairElement(pair16(select(kNorm[d / 2u], qNorm[d / 2u], isQuery)), d);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lid: u32) {
  let j = wid.x; // head among the NH query then NKV key heads
  let i = wid.y + wid.z * groups.y; // row, uniform across the workgroup
  let live = i < params.N;
  let half = HS / 2u;
  let at = (params.first + i) * (NH + 2u * NKV) * HS + j * HS;
  var r = 1.0;
  if (QK_NORM) {
    var s = 0.0;
    if (live) {
      for (var d = lid; d < HS; d += WG) { s += qkv[at + d] * qkv[at + d]; }
    }
    r = inverseSqrt(reduceSum(s, lid) / f32(HS) + params.eps);
  }
  if (!live) { return; }
  let isQuery = j < NH;
  let at0 = positions[i] * half; // the row's position in the rotation table
  for (var d = lid; d < half; d += WG) {
    var x1 = qkv[at + d];
    var x2 = qkv[at + d + half];
    if (QK_NORM) {
      x1 *= r * normWeight(isQuery, d);
      x2 *= r * normWeight(isQuery, d + half);
    }
    let cs = rotation[at0 + d];
    let c = cs.x;
    let s = cs.y;
    qkv[at + d] = x1 * c - x2 * s;
    qkv[at + d + half] = x2 * c + x1 * s;
  }
}
