// Token objectives at scored targets (docs/objectives.md), fp32: per target j the log-probability
// ℓ_j = log softmax(z_row)[token], its loss contribution and dℓ_j, and every row of dLogits (N, V):
// row r = Σ_{targets j at r} dℓ_j · (onehot(token_j) − softmax(z_r)), zeros where no target is scored
// (every row is written, so dLogits needs no clearing). One workgroup per logits row; the targets of
// a row come from a CSR index, so rows scored several times add up without atomics.
// Oracle: tokenObjective in src/objectives/tokens.ts.

override WG: u32 = 64; // invocations per workgroup, a power of two
override OBJECTIVE: u32 = 0; // 0: sft, loss −w·ℓ. 1: ppo, −w·min(r·A, clip(r)·A) + w·β·k3

struct Params {
  N: u32, // logits rows
  V: u32, // vocabulary
  T: u32, // targets
  epsilon: f32, // ppo clip range: r is clipped to [1 − ε, 1 + ε]
  klCoef: f32, // β of the k3 KL to the reference (ppo); 0 turns it off
}

struct Target {
  row: u32,
  token: u32,
  weight: f32,
  rolloutLogprob: f32,
  advantage: f32,
  refLogprob: f32,
}

struct TargetOut {
  logprob: f32,
  loss: f32,
  dLogprob: f32,
  ratio: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>; // (N, V)
@group(0) @binding(2) var<storage, read> targets: array<Target>; // (T)
@group(0) @binding(3) var<storage, read> rowIndex: array<u32>; // start (N + 1) | order (T): targets of row r are order[start[r] .. start[r + 1])
@group(0) @binding(4) var<storage, read_write> dLogits: array<f32>; // (N, V), written
@group(0) @binding(5) var<storage, read_write> outputs: array<TargetOut>; // (T), written

// reduceMax / reduceSum over the workgroup: ../common/reduce.wgsl, prepended by the host.

fn term(t: Target, logprob: f32) -> TargetOut {
  if (OBJECTIVE == 0u) {
    return TargetOut(logprob, -t.weight * logprob, -t.weight, 1.0);
  }
  let ratio = exp(logprob - t.rolloutLogprob);
  let unclippedObj = ratio * t.advantage;
  let clippedObj = clamp(ratio, 1.0 - params.epsilon, 1.0 + params.epsilon) * t.advantage;
  var loss = -t.weight * min(unclippedObj, clippedObj);
  // The gradient flows through the unclipped branch when it is the minimum (ties included).
  var dLogprob = select(0.0, -t.weight * ratio * t.advantage, unclippedObj <= clippedObj);
  if (params.klCoef != 0.0) {
    let d = t.refLogprob - logprob;
    let e = exp(d);
    loss += t.weight * params.klCoef * (e - d - 1.0);
    dLogprob += t.weight * params.klCoef * (1.0 - e);
  }
  return TargetOut(logprob, loss, dLogprob, ratio);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.y * groups.x + wid.x;
  if (r >= params.N) {
    return;
  }
  let V = params.V;
  let base = r * V;
  let first = rowIndex[r];
  let last = rowIndex[r + 1u];
  if (first == last) {
    for (var v = lid; v < V; v += WG) {
      dLogits[base + v] = 0.0;
    }
    return;
  }

  var localMax = -3.40282346e38;
  for (var v = lid; v < V; v += WG) {
    localMax = max(localMax, logits[base + v]);
  }
  let rowMax = reduceMax(localMax, lid);
  var localSum = 0.0;
  for (var v = lid; v < V; v += WG) {
    localSum += exp(logits[base + v] - rowMax);
  }
  let lse = rowMax + log(reduceSum(localSum, lid));

  // Every invocation walks the row's targets (usually one) for Σ dℓ; invocation 0 stores the outputs.
  var dSum = 0.0;
  for (var k = first; k < last; k++) {
    let j = rowIndex[params.N + 1u + k];
    let t = targets[j];
    let out = term(t, logits[base + t.token] - lse);
    dSum += out.dLogprob;
    if (lid == 0u) {
      outputs[j] = out;
    }
  }
  for (var v = lid; v < V; v += WG) {
    var d = -dSum * exp(logits[base + v] - lse);
    for (var k = first; k < last; k++) {
      let j = rowIndex[params.N + 1u + k];
      if (targets[j].token == v) {
        d += term(targets[j], logits[base + v] - lse).dLogprob;
      }
    }
    dLogits[base + v] = d;
  }
}
