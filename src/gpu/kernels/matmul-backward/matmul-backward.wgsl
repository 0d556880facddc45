// The part of matmul.wgsl's backward that is not itself a product, one invocation per column n:
//   dPre[m, n] = dY[m, n] · gelu'(pre[m, n])   with GELU (the forward fused a GELU; pre is its input)
//   dbias[n] = Σ_m dPre[m, n]                  with HAS_BIAS (dY in place of dPre without GELU)
// The products dX = dPre · Wᵀ and dW = xᵀ · dPre then run on matmul.wgsl (matmul-backward.ts).
// A column per invocation sums without atomics. Grid: groups1d(N, WG).

override WG: u32 = 64;
override GELU: bool = false;
override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false; // dbias += (dPre is always overwritten)

// Mirror: matmulBackwardParams() in matmul-backward.ts.
struct Params {
  M: u32,
  N: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dY: array<f32>; // (M, N)
@group(0) @binding(2) var<storage, read> pre: array<f32>; // (M, N): read with GELU
@group(0) @binding(3) var<storage, read_write> dPre: array<f32>; // (M, N): written with GELU
@group(0) @binding(4) var<storage, read_write> dbias: array<f32>; // (N): written with HAS_BIAS

// gelu() and geluGrad(): ../common/gelu-math.wgsl, prepended by the host.

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let n = gid.y * groups.x * WG + gid.x;
  let N = params.N;
  if (n >= N) {
    return;
  }
  var sum = 0.0;
  for (var m = 0u; m < params.M; m++) {
    let i = m * N + n;
    var d = dY[i];
    if (GELU) {
      d *= geluGrad(pre[i]);
      dPre[i] = d;
    }
    sum += d;
  }
  if (HAS_BIAS) {
    if (ACCUMULATE) {
      sum += dbias[n];
    }
    dbias[n] = sum;
  }
}
