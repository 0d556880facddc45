// out (R, C) = x[rows[j]] for j < R: the rows of x (N, C) that requests name, copied (rows may
// repeat). Scoring runs the final LayerNorm and the tied head over the targets' predictor rows
// only, a block of them at a time. One invocation per element; a 2D grid lets R·C exceed 65535
// workgroups: index = (gid.y * num_groups.x * WG) + gid.x.

override WG: u32 = 256;

// Mirror: gatherRowsParams() in gather-rows.ts.
struct Params {
  R: u32, // requests: rows of out
  C: u32, // width of a row
}

@group(0) @binding(0) var<storage, read> x: array<f32>; // (N, C)
@group(0) @binding(1) var<storage, read> rows: array<u32>; // (R)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (R, C)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = gid.y * groups.x * WG + gid.x;
  let C = params.C;
  if (e >= params.R * C) {
    return;
  }
  let j = e / C;
  out[e] = x[rows[j] * C + e % C];
}
