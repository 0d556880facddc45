// Log-softmax of logit rows at requested (row, token) pairs, and its backward. A request j names a
// row rows[j] of logits (M, V) and, for gather, a token tokens[j]; rows may repeat.
//   logsumexp    lse[j] = log Σ_t exp(logits[rows[j], t])             one invocation per request
//   gather       logprobs[j] = logits[rows[j], tokens[j]] - lse[j]   one invocation per request
//   logprobRows  out[j, t] = logits[rows[j], t] - lse[j], (R, V)      one invocation per element:
//                the full log-prob rows of the requested rows, for KL terms
//   backward     dLogits[r, t] = Σ_{j: rows[j] = r} dLogprob[j]·([t = tokens[j]] - exp(logits[r, t] - lse[j]))
//                one invocation per element of dLogits (M, V); the requests of row r are
//                order[start[r] .. start[r + 1]) (inverseIndex in src/gpu/runtime/kernel.ts): no atomics
// gather, logprobRows and backward read lse from a prior logsumexp dispatch. Grids: groups1d(items, WG).

override WG: u32 = 64;
override ACCUMULATE: bool = false; // backward: dLogits +=

// Mirror: logsoftmaxParams() in logsoftmax.ts.
struct Params {
  R: u32, // requests
  V: u32, // vocabulary: columns of logits
  M: u32, // rows of logits
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>; // (M, V)
@group(0) @binding(2) var<storage, read> rows: array<u32>; // (R): logsumexp, gather, logprobRows
@group(0) @binding(3) var<storage, read> tokens: array<u32>; // (R): gather, backward
@group(0) @binding(4) var<storage, read_write> lse: array<f32>; // (R): written by logsumexp
@group(0) @binding(5) var<storage, read_write> logprobs: array<f32>; // (R): gather
@group(0) @binding(6) var<storage, read_write> out: array<f32>; // (R, V): logprobRows
@group(0) @binding(7) var<storage, read> dLogprob: array<f32>; // (R): backward
@group(0) @binding(8) var<storage, read> order: array<u32>; // (R): backward
@group(0) @binding(9) var<storage, read> start: array<u32>; // (M + 1): backward
@group(0) @binding(10) var<storage, read_write> dLogits: array<f32>; // (M, V): backward

fn index(gid: vec3u, groups: vec3u) -> u32 {
  return gid.y * groups.x * WG + gid.x;
}

@compute @workgroup_size(WG)
fn logsumexp(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let j = index(gid, groups);
  let V = params.V;
  if (j >= params.R) {
    return;
  }
  let base = rows[j] * V;
  var m = logits[base];
  for (var t = 1u; t < V; t++) {
    m = max(m, logits[base + t]);
  }
  var sum = 0.0;
  for (var t = 0u; t < V; t++) {
    sum += exp(logits[base + t] - m);
  }
  lse[j] = m + log(sum);
}

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let j = index(gid, groups);
  if (j >= params.R) {
    return;
  }
  logprobs[j] = logits[rows[j] * params.V + tokens[j]] - lse[j];
}

@compute @workgroup_size(WG)
fn logprobRows(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = index(gid, groups);
  let V = params.V;
  if (e >= params.R * V) {
    return;
  }
  let j = e / V;
  let t = e % V;
  out[e] = logits[rows[j] * V + t] - lse[j];
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = index(gid, groups);
  let V = params.V;
  if (e >= params.M * V) {
    return;
  }
  let r = e / V;
  let t = e % V;
  let logit = logits[e];
  var d = 0.0;
  for (var i = start[r]; i < start[r + 1u]; i++) {
    let j = order[i];
    let g = dLogprob[j];
    d -= g * exp(logit - lse[j]);
    if (tokens[j] == t) {
      d += g;
    }
  }
  if (ACCUMULATE) {
    d += dLogits[e];
  }
  dLogits[e] = d;
}
