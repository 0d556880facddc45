// Causal grouped-query attention for incremental decoding with a KV cache (the model families): the M
// new rows of a live view, at positions start .. start + M − 1, attend to every cached row at or
// before their own. The cache holds whole qkv rows (capacity, (NH + 2·NKV)·HS) = q | k | v, rows below
// start + M filled (the new rows' own q, k, v included); query head h reads kv head h / (NH / NKV).
// Any cache length: keys are taken CHUNK at a time, their scores in workgroup memory, with a running
// max and sum across chunks (online softmax), so nothing grows with the context.
// The host prepends kernels/common/reduce.wgsl (reduceMax, reduceSum over WG invocations).
//
// One workgroup per (new row, query head): WG invocations share a chunk's scores, then each
// accumulates its output channels d = lid, lid + WG, … (HS <= 4·WG). Grid (M, NH).

override NH: u32; // query heads
override NKV: u32; // key/value heads, dividing NH
override HS: u32; // head size, at most 4·WG
override WG: u32 = 64; // a power of two (reduce.wgsl)
override CHUNK: u32 = 256; // keys scored at a time

// Mirror: decodeAttentionParams() in attention-decode-gqa.ts.
struct Params {
  start: u32, // position (cache row) of the first new row
  M: u32, // new rows
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>; // (capacity, (NH + 2·NKV)·HS): the cache
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (M, NH·HS)

var<workgroup> scores: array<f32, CHUNK>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) tid: u32) {
  let r = wid.x; // new row
  let h = wid.y; // query head
  let W = (NH + 2u * NKV) * HS;
  let kv = h / (NH / NKV);
  let i = params.start + r; // its position: it sees keys 0 ..= i
  let q = i * W + h * HS;
  let kOff = (NH + kv) * HS;
  let vOff = (NH + NKV + kv) * HS;
  let scale = inverseSqrt(f32(HS));

  var m = -3.0e38; // running max of the scores
  var l = 0.0; // running Σ exp(s − m)
  var acc = vec4f(); // channels tid, tid + WG, tid + 2·WG, tid + 3·WG
  for (var k0 = 0u; k0 <= i; k0 += CHUNK) { // uniform: i is the workgroup's
    let n = min(CHUNK, i + 1u - k0);
    var localMax = -3.0e38;
    for (var j = tid; j < n; j += WG) {
      let key = (k0 + j) * W + kOff;
      var s = 0.0;
      for (var d = 0u; d < HS; d++) { s += qkv[q + d] * qkv[key + d]; }
      s *= scale;
      scores[j] = s;
      localMax = max(localMax, s);
    }
    let mNew = max(m, reduceMax(localMax, tid));
    var localSum = 0.0;
    for (var j = tid; j < n; j += WG) {
      let p = exp(scores[j] - mNew);
      scores[j] = p;
      localSum += p;
    }
    let rescale = exp(m - mNew);
    l = l * rescale + reduceSum(localSum, tid); // ends on a barrier: every p is visible
    acc *= rescale;
    for (var c = 0u; c < 4u; c++) {
      let d = tid + c * WG;
      if (d < HS) {
        var a = 0.0;
        for (var j = 0u; j < n; j++) { a += scores[j] * qkv[(k0 + j) * W + vOff + d]; }
        acc[c] += a;
      }
    }
    m = mNew;
    workgroupBarrier(); // the chunk's probabilities are consumed before the next chunk's scores
  }
  for (var c = 0u; c < 4u; c++) {
    let d = tid + c * WG;
    if (d < HS) { out[r * NH * HS + h * HS + d] = acc[c] / l; }
  }
}
