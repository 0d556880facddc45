// The token embedding of the model families: out (N, C) f32 = row tokens[i] of embed_tokens (V, C),
// kept in the folder's format (F32, F16, BF16; WFMT: weight-format.wgsl, prepended by the host).
// The table binds a block of vocabulary rows [first, end) at a time (a block each fits one storage
// binding, src/gpu/limits.ts); a launch writes only the rows whose token lies in its block. C is even.
//
// One invocation per pair of output columns of one row. Grid groups1d(N · C / 2, WG).

override WG: u32 = 256;

// Mirror: embedParams() in embed.ts.
struct Params {
  N: u32, // rows
  C: u32, // width (even)
  first: u32, // first vocabulary row of the bound block
  end: u32, // one past its last
}

@group(0) @binding(0) var<storage, read> tokens: array<u32>; // (N)
@group(0) @binding(1) var<storage, read> w: array<WeightWord>; // (end - first, C) in WFMT
@group(0) @binding(2) var<storage, read_write> out: array<vec2f>; // (N, C)
@group(0) @binding(3) var<uniform> params: Params;

fn wPair(p: u32) -> vec2f {
  if (WFMT == 0u) { return pairF32(w[2u * p], w[2u * p + 1u]); }
  return pair16(w[p]);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let C2 = params.C / 2u;
  let e = gid.x + gid.y * groups.x * WG; // pair index in out
  if (e >= params.N * C2) { return; }
  let i = e / C2;
  let token = tokens[i];
  if (token < params.first || token >= params.end) { return; }
  out[e] = wPair((token - params.first) * C2 + e % C2);
}
