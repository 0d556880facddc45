// SwiGLU of the model families' MLP: out (R, FF) = silu(gate) · up, where gateUp (R, 2·FF) holds
// gate_proj | up_proj of each row (the two projections run as one linear layer over their stacked
// weights) and silu(g) = g / (1 + exp(−g)). f32.
//
// One invocation per output element. Grid groups1d(R · FF, WG).

override WG: u32 = 256;

// Mirror: swigluParams() in swiglu.ts.
struct Params {
  R: u32, // rows
  FF: u32, // intermediate width
}

@group(0) @binding(0) var<storage, read> gateUp: array<f32>; // (R, 2·FF)
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (R, FF)
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = gid.x + gid.y * groups.x * WG;
  if (e >= params.R * params.FF) { return; }
  let r = e / params.FF;
  let c = e % params.FF;
  let g = gateUp[r * 2u * params.FF + c];
  let u = gateUp[r * 2u * params.FF + params.FF + c];
  // exp(−g) overflows to +inf for g < −88: g / inf = −0, silu's limit.
  out[e] = g / (1.0 + exp(-g)) * u;
}
