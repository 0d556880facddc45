// Causal attention for incremental decoding with a KV cache: the M new rows of a live view,
// at positions start .. start+M-1, attend to every cached row at or before their own position.
// One workgroup owns one (new row, head): scores go to workgroup memory, a max and a sum are
// reduced across the workgroup, then each invocation accumulates a few output channels.
// (The training path uses attention.wgsl, which handles arbitrary tree masks; a live view is causal.)
//
// Dispatch: (M, NH). qkv: the cache (P, 3C) with rows < start + M filled, q | k | v per row.

override NH: u32; // heads; C = NH * HS
override HS: u32; // head size
override WG: u32 = 64; // invocations per workgroup, a power of two (reduce.wgsl)
override MAX_KEYS: u32 = 1024; // capacity of the cache (model positions)

// Mirror: attentionDecodeParams() in attention-decode.ts.
struct Params {
  start: u32, // position of the first new row
  M: u32, // new rows
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>; // (P, 3C)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (M, C)

var<workgroup> scores: array<f32, MAX_KEYS>;
// reduceMax(x, lid) and reduceSum(x, lid) over the workgroup: ../common/reduce.wgsl, prepended by the host.

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let r = wid.x; // new row
  let h = wid.y; // head
  let tid = lid.x;
  let C = NH * HS;
  let i = params.start + r; // its position: it sees keys 0..i
  let q = i * 3u * C + h * HS;
  let scale = inverseSqrt(f32(HS));

  var localMax = -3.0e38;
  for (var k = tid; k <= i; k += WG) {
    let key = k * 3u * C + C + h * HS;
    var s = 0.0;
    for (var d = 0u; d < HS; d++) { s += qkv[q + d] * qkv[key + d]; }
    s *= scale;
    scores[k] = s;
    localMax = max(localMax, s);
  }
  let rowMax = reduceMax(localMax, tid);
  var localSum = 0.0;
  for (var k = tid; k <= i; k += WG) {
    let p = exp(scores[k] - rowMax);
    scores[k] = p;
    localSum += p;
  }
  let rowSum = reduceSum(localSum, tid);
  // reduceSum ended on a barrier, so every probability is visible here.
  for (var d = tid; d < HS; d += WG) {
    var acc = 0.0;
    for (var k = 0u; k <= i; k++) { acc += scores[k] * qkv[k * 3u * C + 2u * C + h * HS + d]; }
    out[r * C + h * HS + d] = acc / rowSum;
  }
}
