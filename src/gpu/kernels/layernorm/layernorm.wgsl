// LayerNorm over the last axis of x (N, C), eps from Params (GPT-2: 1e-5), forward and backward.
// One invocation per row in `forward` and `backwardRows`, per channel in `backwardChannels`: rows are
// a few hundred floats, so a row fits one invocation's loop and no barrier is needed (SwiftShader).
//   forward           x, weight, bias -> out (N, C), mean (N), rstd (N)     grid groups1d(N, WG)
//   backwardRows      dOut, x, weight, mean, rstd -> dx (N, C)              grid groups1d(N, WG)
//   backwardChannels  dOut, x, mean, rstd -> dweight (C), dbias (C)         grid groups1d(C, WG)
// With xhat = (x - mean)·rstd and g = dOut·weight: dx = rstd·(g - mean(g) - xhat·mean(g·xhat)),
// dweight = Σ_rows dOut·xhat, dbias = Σ_rows dOut. ACCUMULATE adds into the outputs of a backward.

override WG: u32 = 64;
override ACCUMULATE: bool = false;

// Mirror: layernormParams() in layernorm.ts.
struct Params {
  N: u32, // rows
  C: u32, // channels
  eps: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>; // (N, C)
@group(0) @binding(2) var<storage, read> weight: array<f32>; // (C)
@group(0) @binding(3) var<storage, read> bias: array<f32>; // (C): forward
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (N, C): forward
@group(0) @binding(5) var<storage, read_write> mean: array<f32>; // (N): written by forward
@group(0) @binding(6) var<storage, read_write> rstd: array<f32>; // (N): written by forward
@group(0) @binding(7) var<storage, read> dOut: array<f32>; // (N, C): backward
@group(0) @binding(8) var<storage, read_write> dx: array<f32>; // (N, C): backwardRows
@group(0) @binding(9) var<storage, read_write> dweight: array<f32>; // (C): backwardChannels
@group(0) @binding(10) var<storage, read_write> dbias: array<f32>; // (C): backwardChannels

fn index(gid: vec3u, groups: vec3u) -> u32 {
  return gid.y * groups.x * WG + gid.x;
}

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let row = index(gid, groups);
  let C = params.C;
  if (row >= params.N) {
    return;
  }
  let base = row * C;
  // Summed relative to the row's first value: a residual stream's rows carry offsets much larger than
  // their spread, and a plain fp32 sum of them loses the spread's low bits.
  let shift = x[base];
  var sum = 0.0;
  for (var c = 0u; c < C; c++) {
    sum += x[base + c] - shift;
  }
  let m = shift + sum / f32(C);
  // Two passes: the variance of the centred values, not E[x²] - m², which cancels in fp32.
  var sq = 0.0;
  for (var c = 0u; c < C; c++) {
    let d = x[base + c] - m;
    sq += d * d;
  }
  let s = inverseSqrt(sq / f32(C) + params.eps);
  for (var c = 0u; c < C; c++) {
    out[base + c] = (x[base + c] - m) * s * weight[c] + bias[c];
  }
  mean[row] = m;
  rstd[row] = s;
}

@compute @workgroup_size(WG)
fn backwardRows(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let row = index(gid, groups);
  let C = params.C;
  if (row >= params.N) {
    return;
  }
  let base = row * C;
  let m = mean[row];
  let s = rstd[row];
  var gSum = 0.0;
  var gxSum = 0.0;
  for (var c = 0u; c < C; c++) {
    let g = dOut[base + c] * weight[c];
    gSum += g;
    gxSum += g * (x[base + c] - m) * s;
  }
  let gMean = gSum / f32(C);
  let gxMean = gxSum / f32(C);
  for (var c = 0u; c < C; c++) {
    let xhat = (x[base + c] - m) * s;
    var d = s * (dOut[base + c] * weight[c] - gMean - xhat * gxMean);
    if (ACCUMULATE) {
      d += dx[base + c];
    }
    dx[base + c] = d;
  }
}

@compute @workgroup_size(WG)
fn backwardChannels(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let c = index(gid, groups);
  let C = params.C;
  if (c >= C) {
    return;
  }
  var dw = 0.0;
  var db = 0.0;
  for (var row = 0u; row < params.N; row++) {
    let d = dOut[row * C + c];
    dw += d * (x[row * C + c] - mean[row]) * rstd[row];
    db += d;
  }
  if (ACCUMULATE) {
    dw += dweight[c];
    db += dbias[c];
  }
  dweight[c] = dw;
  dbias[c] = db;
}
