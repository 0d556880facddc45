// SDCC's KL term (docs/methods.md), fp32: for each pair (student row s, teacher row t) at a diverging leaf,
// kl[pair] = KL(softmax(teacher[t]) ‖ softmax(student[s])) over the full vocabulary, and
// dStudent[s] += coef · (softmax(student[s]) − softmax(teacher[t])) with coef = λ / |D| (the gradient
// of λ · mean KL; the teacher is under stop-gradient). coef = 0 leaves dStudent untouched, bit for bit.
// One workgroup per student row that has pairs; its pairs come from a CSR list, so rows shared by
// several pairs accumulate without races. Oracle: sdccKl in src/objectives/sdcc.ts.

override WG: u32 = 64; // invocations per workgroup, a power of two

struct Params {
  Ns: u32, // student rows
  Nt: u32, // teacher rows
  V: u32, // vocabulary
  R: u32, // student rows with at least one pair: the workgroups
  P: u32, // pairs
  coef: f32, // λ / P
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> student: array<f32>; // (Ns, V)
@group(0) @binding(2) var<storage, read> teacher: array<f32>; // (Nt, V)
// rows (R) | start (R + 1) | teacherRow (P) | pair (P): the pairs of rows[r] are k in start[r] .. start[r + 1]
@group(0) @binding(3) var<storage, read> pairIndex: array<u32>;
@group(0) @binding(4) var<storage, read_write> dStudent: array<f32>; // (Ns, V), accumulated into
@group(0) @binding(5) var<storage, read_write> kl: array<f32>; // (P), written

// reduceMax / reduceSum over the workgroup: ../common/reduce.wgsl, prepended by the host.

const STUDENT: u32 = 0u;
const TEACHER: u32 = 1u;

fn logit(which: u32, i: u32) -> f32 {
  if (which == STUDENT) {
    return student[i];
  }
  return teacher[i];
}

/** log Σ exp of the row starting at `base` of the student's or the teacher's logits. */
fn logSumExp(which: u32, base: u32, lid: u32) -> f32 {
  var localMax = -3.40282346e38;
  for (var v = lid; v < params.V; v += WG) {
    localMax = max(localMax, logit(which, base + v));
  }
  let rowMax = reduceMax(localMax, lid);
  var localSum = 0.0;
  for (var v = lid; v < params.V; v += WG) {
    localSum += exp(logit(which, base + v) - rowMax);
  }
  return rowMax + log(reduceSum(localSum, lid));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.y * groups.x + wid.x;
  if (r >= params.R) {
    return;
  }
  let R = params.R;
  let P = params.P;
  let V = params.V;
  let sBase = pairIndex[r] * V;
  let lseS = logSumExp(STUDENT, sBase, lid);
  for (var k = pairIndex[R + r]; k < pairIndex[R + r + 1u]; k++) {
    let tBase = pairIndex[2u * R + 1u + k] * V;
    let lseT = logSumExp(TEACHER, tBase, lid);
    var part = 0.0;
    for (var v = lid; v < V; v += WG) {
      let logPt = teacher[tBase + v] - lseT;
      let logPs = student[sBase + v] - lseS;
      let pt = exp(logPt);
      if (pt > 0.0) {
        part += pt * (logPt - logPs);
      }
      if (params.coef != 0.0) {
        dStudent[sBase + v] += params.coef * (exp(logPs) - pt);
      }
    }
    let total = reduceSum(part, lid);
    if (lid == 0u) {
      kl[pairIndex[2u * R + 1u + P + k]] = total;
    }
  }
}
