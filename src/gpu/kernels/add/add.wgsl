// out = a + b, elementwise over n floats (the residual connection of every block).
// A 2D dispatch grid lets n exceed 65535 workgroups: index = (gid.y * num_groups.x * WG) + gid.x.

override WG: u32 = 256;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.y * groups.x * WG + gid.x;
  if (i < params.n) {
    out[i] = a[i] + b[i];
  }
}
