// One AdamW step over the flat parameter buffer (docs/model.md; layout: parameterLayout in
// src/model/params.ts), with global-norm gradient clipping and a non-finite guard. Three entry
// points, dispatched in this order within one pass:
//   normPartials  Σ g² and the count of non-finite g over each chunk of WG·ITEMS floats
//   normFinalize  one workgroup: the totals, the clip scale min(1, clip/‖g‖) and the skip flags, into `status`
//   update        one invocation per float: bias-corrected AdamW with decoupled weight decay on the
//                 floats whose bit is set in decayMask; nothing at all is written when status.skip != 0
// Every sum is taken in a fixed order (per invocation in index order, then a tree), so a step is
// deterministic. Oracle: adamwReferenceStep in src/objectives/adamw.ts.

override WG: u32 = 256; // invocations per workgroup, a power of two
override ITEMS: u32 = 16; // floats per invocation in normPartials

struct Params {
  n: u32, // floats in weights, grads, m, v (padding included)
  partials: u32, // workgroups of normPartials
  lr: f32,
  beta1: f32,
  oneMinusBeta1: f32, // 1 − β1, rounded once from float64 (1.0 - beta1 in fp32 would be off by an ulp of β1)
  beta2: f32,
  oneMinusBeta2: f32,
  biasCorrection1: f32, // 1 − β1^t
  biasCorrection2: f32, // 1 − β2^t
  eps: f32,
  weightDecay: f32,
  clip: f32, // largest global norm; 0: no clipping
}

struct Partial {
  sumSq: f32,
  nonFinite: u32,
}

const SKIP_NON_FINITE: u32 = 1u; // a gradient element is NaN or ±Inf
const SKIP_OVERFLOW: u32 = 2u; // Σ g² overflowed fp32

struct Status {
  normSq: f32, // Σ g² over the finite gradient elements, before clipping
  nonFinite: u32, // gradient elements that are NaN or ±Inf
  scale: f32, // min(1, clip / ‖g‖): the factor update applies to g
  skip: u32, // SKIP_* bits; 0 when the update is applied
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> grads: array<f32>; // (n)
@group(0) @binding(2) var<storage, read_write> partials: array<Partial>; // (partials)
@group(0) @binding(3) var<storage, read_write> status: Status;
@group(0) @binding(4) var<storage, read_write> weights: array<f32>; // (n)
@group(0) @binding(5) var<storage, read_write> m: array<f32>; // (n)
@group(0) @binding(6) var<storage, read_write> v: array<f32>; // (n)
@group(0) @binding(7) var<storage, read> decayMask: array<u32>; // (ceil(n / 32)): bit i & 31 of word i >> 5

var<workgroup> sums: array<f32, WG>;
var<workgroup> counts: array<u32, WG>;

/** From the bits, not x != x: WGSL lets an implementation assume floats are finite. */
fn isFinite(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

/** Tree sum of sums[] and counts[] into element 0, visible to the whole workgroup on return. */
fn reduce(lid: u32) {
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    workgroupBarrier();
    if (lid < s) {
      sums[lid] = sums[lid] + sums[lid + s];
      counts[lid] = counts[lid] + counts[lid + s];
    }
  }
  workgroupBarrier();
}

@compute @workgroup_size(WG)
fn normPartials(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lid: u32) {
  let w = wid.y * groups.x + wid.x;
  if (w >= params.partials) {
    return;
  }
  let base = w * WG * ITEMS;
  var sum = 0.0;
  var count = 0u;
  for (var k = 0u; k < ITEMS; k++) {
    let i = base + k * WG + lid;
    if (i < params.n) {
      let g = grads[i];
      if (isFinite(g)) {
        sum += g * g;
      } else {
        count += 1u;
      }
    }
  }
  sums[lid] = sum;
  counts[lid] = count;
  reduce(lid);
  if (lid == 0u) {
    partials[w] = Partial(sums[0], counts[0]);
  }
}

@compute @workgroup_size(WG)
fn normFinalize(@builtin(local_invocation_index) lid: u32) {
  var sum = 0.0;
  var count = 0u;
  for (var j = lid; j < params.partials; j += WG) {
    sum += partials[j].sumSq;
    count += partials[j].nonFinite;
  }
  sums[lid] = sum;
  counts[lid] = count;
  reduce(lid);
  if (lid == 0u) {
    let normSq = sums[0];
    var skip = 0u;
    if (counts[0] != 0u) {
      skip |= SKIP_NON_FINITE;
    }
    if (!isFinite(normSq)) {
      skip |= SKIP_OVERFLOW;
    }
    let norm = sqrt(normSq);
    let scale = select(1.0, params.clip / norm, params.clip > 0.0 && norm > params.clip);
    status = Status(normSq, counts[0], scale, skip);
  }
}

@compute @workgroup_size(WG)
fn update(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let i = gid.y * groups.x * WG + gid.x;
  if (i >= params.n || status.skip != 0u) {
    return;
  }
  let g = grads[i] * status.scale;
  let mi = params.beta1 * m[i] + params.oneMinusBeta1 * g;
  let vi = params.beta2 * v[i] + params.oneMinusBeta2 * g * g;
  m[i] = mi;
  v[i] = vi;
  let mHat = mi / params.biasCorrection1;
  let vHat = vi / params.biasCorrection2;
  let decay = f32((decayMask[i >> 5u] >> (i & 31u)) & 1u) * params.weightDecay;
  let p = weights[i];
  weights[i] = p - params.lr * (mHat / (sqrt(vHat) + params.eps) + decay * p);
}
