// Token + position embedding, forward and backward, fp32.
//   forward   out (N, C) = wte[tokens[i]] + wpe[positions[i]], explicit position ids (tree rows share
//             positions); one invocation per element, grid groups1d(N·C, WG)
//   backward  dTable (R, C) = Σ over the rows i that used table row r of dOut[i]; one invocation per
//             element of dTable, grid groups1d(R·C, WG). Dispatched once for wte (R = V, indices =
//             tokens) and once for wpe (R = P, indices = positions). No float atomics: the rows that
//             used table row r are order[start[r] .. start[r + 1]) (inverseIndex in src/gpu/runtime/kernel.ts).
// A table larger than one binding (GPT-2's 154 MB wte) is bound as row blocks, one launch per block
// (src/gpu/runtime/limits.ts): the block holds table rows v0 .. v1 - 1; the forward writes the rows whose
// token lies in it, the backward the block's own rows.

override WG: u32 = 256;
override ACCUMULATE: bool = false; // dTable += (wte also receives the tied head's gradient)

// Mirror: embeddingParams() in embedding.ts.
struct Params {
  rows: u32, // forward: N; backward: the rows of the bound block of dTable
  C: u32,
  v0: u32, // the bound block of wte (forward) or dTable (backward) is table rows v0 .. v1 - 1
  v1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>; // (N): forward
@group(0) @binding(2) var<storage, read> positions: array<u32>; // (N): forward
@group(0) @binding(3) var<storage, read> wte: array<f32>; // (V, C): forward
@group(0) @binding(4) var<storage, read> wpe: array<f32>; // (P, C): forward
@group(0) @binding(5) var<storage, read_write> out: array<f32>; // (N, C): forward
@group(0) @binding(6) var<storage, read> dOut: array<f32>; // (N, C): backward
@group(0) @binding(7) var<storage, read> order: array<u32>; // (N): backward
@group(0) @binding(8) var<storage, read> start: array<u32>; // (R + 1): backward
@group(0) @binding(9) var<storage, read_write> dTable: array<f32>; // (R, C): backward

fn index(gid: vec3u, groups: vec3u) -> u32 {
  return gid.y * groups.x * WG + gid.x;
}

@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = index(gid, groups);
  let C = params.C;
  if (e >= params.rows * C) {
    return;
  }
  let i = e / C;
  let c = e % C;
  let t = tokens[i];
  if (t < params.v0 || t >= params.v1) {
    return; // another block's launch writes this row
  }
  out[e] = wte[(t - params.v0) * C + c] + wpe[positions[i] * C + c];
}

@compute @workgroup_size(WG)
fn backward(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let e = index(gid, groups);
  let C = params.C;
  if (e >= params.rows * C) {
    return;
  }
  let r = params.v0 + e / C; // the table row
  let c = e % C;
  var sum = 0.0;
  for (var j = start[r]; j < start[r + 1u]; j++) {
    sum += dOut[order[j] * C + c];
  }
  if (ACCUMULATE) {
    sum += dTable[e];
  }
  dTable[e] = sum;
}
