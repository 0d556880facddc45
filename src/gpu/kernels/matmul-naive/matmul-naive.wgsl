// y (M, N) = x (M, K) · W (K, N), one invocation per output element reading a row of x and a column of
// W straight from storage: the baseline that bench/matmul.ts measures matmul.wgsl against.

override WG_X: u32 = 16; // invocations per workgroup along N
override WG_Y: u32 = 16; // along M

// Mirror: matmulNaiveParams() in matmul-naive.ts.
struct Params {
  M: u32,
  K: u32,
  N: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>; // (M, K)
@group(0) @binding(1) var<storage, read> w: array<f32>; // (K, N)
@group(0) @binding(2) var<storage, read_write> y: array<f32>; // (M, N)
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let n = gid.x;
  let m = gid.y;
  if (n >= params.N || m >= params.M) {
    return;
  }
  var sum = 0.0;
  for (var k = 0u; k < params.K; k++) {
    sum += x[m * params.K + k] * w[k * params.N + n];
  }
  y[m * params.N + n] = sum;
}
