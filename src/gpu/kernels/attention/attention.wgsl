// Tree-masked flash attention, forward and backward, fp32 (docs/methods.md, docs/model.md). Query i sees key k iff
// k <= i < end[k]. Grouped-query attention (the model families): NH query heads share NKV key/value
// heads, head h reading kv head h / (NH / NKV); GPT-2 has NKV = NH. The backward takes NKV = NH only. Rows are tiled (query tiles of BQ rows, key tiles of BK rows) and every tile visits
// only the tiles the block mask lists for it, so the work follows the visible pairs, not N².
//
// One invocation owns one row of one head (a query in `forward` and `backwardQuery`, a key in
// `backwardKey`) and keeps that row's vectors in registers. With SHARED the workgroup first stages the
// other side's tile in workgroup memory (real GPUs); without it each invocation reads those rows from
// storage (SwiftShader, where a barrier costs more than a cached load). No float atomics: dQ is
// accumulated per query row, dK and dV per key row.
//
// Entry points and dispatch grids (x = tile, y = head):
//   forward        (queryTiles, NH)  qkv, mask -> out, lse
//   backwardQuery  (queryTiles, NH)  qkv, out, dOut, lse -> delta = rowsum(dOut * out), dQ columns of dqkv
//   backwardKey    (keyTiles, NH)    qkv, dOut, lse, delta -> dK, dV columns of dqkv (after backwardQuery)

override NH: u32; // query heads; C = NH * HS
override NKV: u32; // key/value heads, dividing NH (NH for GPT-2)
override HS: u32; // head size: a multiple of 4, at most MAX_HS
override BQ: u32 = 16; // query rows per tile = invocations of forward and backwardQuery
override BK: u32 = 16; // key rows per tile = invocations of backwardKey
override SHARED: bool = false; // stage tiles in workgroup memory
override COUNT_VISITS: bool = false; // count visited tile pairs into `visits` (tests)
// Rows carry a group (SDCC's student-and-teacher batch, whose blocks are not nested): the forward's
// query i also needs group[k] == group[i]. The backward never runs grouped.
override GROUPED: bool = false;

// Rows live in private arrays, whose length must be a constant (see Row below). 64 as written here;
// the host writes 128 in its place for longer heads (attentionCode in src/gpu/attention.ts).
const MAX_HS: u32 = 64u;
// The smallest running max: exp(NEG_BIG - s) is 0 for any finite score, without infinities.
const NEG_BIG: f32 = -3.0e38;
// -inf, the lse of a row that sees no key (a constant expression may not be infinite).
var<private> negInfBits: u32 = 0xff800000u;

// Mirror: attentionParams() in attention.ts.
struct Params {
  N: u32, // rows (queries = keys)
  keyTilesOffsets: u32, // mask index of keyTilesOfQueryTile.offsets, (queryTiles + 1)
  keyTiles: u32, // mask index of keyTilesOfQueryTile.tiles, (pairs)
  queryTilesOffsets: u32, // mask index of queryTilesOfKeyTile.offsets, (keyTiles + 1)
  queryTiles: u32, // mask index of queryTilesOfKeyTile.tiles, (pairs)
  groups: u32, // mask index of group (N), GROUPED only
  lseStride: u32, // row stride of lse and delta (NH, lseStride): the forward's N, which a backward over its first rows keeps
}

// Binding numbers are mirrored by ATTENTION_BINDINGS in attention.ts. Row-major tensors are
// read as vec4s: a row of C floats is C / 4 vec4s.
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> mask: array<u32>; // end (N) | block lists, see Params
@group(0) @binding(2) var<storage, read_write> visits: array<atomic<u32>>; // (3): forward, backwardQuery, backwardKey
@group(0) @binding(3) var<storage, read> qkv: array<vec4f>; // (N, (NH + 2·NKV)·HS): q | k | v
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>; // (N, C), forward's output
@group(0) @binding(5) var<storage, read_write> lse: array<f32>; // (NH, lseStride), forward's output
@group(0) @binding(6) var<storage, read> outIn: array<vec4f>; // (N, C), the forward's out
@group(0) @binding(7) var<storage, read> dOut: array<vec4f>; // (N, C)
@group(0) @binding(8) var<storage, read> lseIn: array<f32>; // (NH, lseStride), the forward's lse
@group(0) @binding(9) var<storage, read_write> delta: array<f32>; // (NH, lseStride): rowsum(dOut * out)
@group(0) @binding(10) var<storage, read_write> dqkv: array<vec4f>; // (N, 3C), NKV = NH

// The staged tile (SHARED): keys | values of a key tile in forward and backwardQuery, queries |
// output gradients of a query tile in backwardKey.
var<workgroup> tileA: array<vec4f, max(BQ, BK) * HS / 4>; // (BK or BQ, HS)
var<workgroup> tileB: array<vec4f, max(BQ, BK) * HS / 4>; // (BK or BQ, HS)
var<workgroup> lseTile: array<f32, BQ>;
var<workgroup> deltaTile: array<f32, BQ>;

// vec4 index of the first element of query head h in row r of qkv (N, (NH + 2·NKV)·HS), of the
// key and value of the kv head that query head h reads, and of head h in out or dOut (N, C).
fn qAt(r: u32, h: u32) -> u32 { return r * (NH + 2u * NKV) * HS / 4u + h * HS / 4u; }
fn kAt(r: u32, h: u32) -> u32 { return r * (NH + 2u * NKV) * HS / 4u + (NH + h / (NH / NKV)) * HS / 4u; }
fn vAt(r: u32, h: u32) -> u32 { return kAt(r, h) + NKV * HS / 4u; }
fn oAt(r: u32, h: u32) -> u32 { return r * NH * HS / 4u + h * HS / 4u; }

fn scale() -> f32 { return inverseSqrt(f32(HS)); }

// Stores (once per row, so plain loops: the by-value parameter keeps the caller's row in registers).
fn storeOut(at: u32, row: Row) {
  for (var c = 0u; c < HS / 4u; c++) { out[at + c] = row[c]; }
}

fn storeDqkv(at: u32, row: Row) {
  for (var c = 0u; c < HS / 4u; c++) { dqkv[at + c] = row[c]; }
}

fn dotOutIn(at: u32, row: Row) -> f32 {
  var s = 0.0;
  for (var c = 0u; c < HS / 4u; c++) { s += dot(row[c], outIn[at + c]); }
  return s;
}

// Stages rows k0 .. k0+BK of head h's keys and values; `threads` invocations share the copy.
fn stageKeys(k0: u32, h: u32, lid: u32, threads: u32) {
  for (var e = lid; e < BK * HS / 4u; e += threads) {
    let k = k0 + e / (HS / 4u);
    let c = e % (HS / 4u);
    var kc = vec4f();
    var vc = vec4f();
    if (k < params.N) {
      kc = qkv[kAt(k, h) + c];
      vc = qkv[vAt(k, h) + c];
    }
    tileA[e] = kc;
    tileB[e] = vc;
  }
}

fn keyRow(k: u32, j: u32, h: u32) -> Row {
  if (SHARED) { return tileARow(j); }
  return qkvRow(kAt(k, h));
}

fn valueRow(k: u32, j: u32, h: u32) -> Row {
  if (SHARED) { return tileBRow(j); }
  return qkvRow(vAt(k, h));
}

@compute @workgroup_size(BQ)
fn forward(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let N = params.N;
  let qt = wg.x;
  let h = wg.y;
  let i = qt * BQ + lid; // this invocation's query row
  let live = i < N;

  var q: Row; // q_i / sqrt(HS)
  var o: Row; // Σ_k exp(s_k - m) v_k
  var m = NEG_BIG; // running max of the scores
  var l = 0.0; // Σ_k exp(s_k - m)
  var rowGroup = 0u;
  if (live) {
    q = qkvRow(qAt(i, h));
    scaleRow(&q, scale());
    if (GROUPED) { rowGroup = mask[params.groups + i]; }
  }

  // Uniform: a read-only buffer at a uniform index, so barriers may sit in this loop.
  let first = mask[params.keyTilesOffsets + qt];
  let last = mask[params.keyTilesOffsets + qt + 1u];
  for (var t = first; t < last; t++) {
    let k0 = mask[params.keyTiles + t] * BK;
    if (COUNT_VISITS && lid == 0u) { atomicAdd(&visits[0], 1u); }
    if (SHARED) {
      workgroupBarrier(); // the previous tile is consumed
      stageKeys(k0, h, lid, BQ);
      workgroupBarrier();
    }
    if (live) {
      for (var k = k0; k < min(k0 + BK, i + 1u); k++) {
        if (i >= mask[k]) { continue; } // end[k]: key k is not on this query's path
        if (GROUPED && mask[params.groups + k] != rowGroup) { continue; }
        var key = keyRow(k, k - k0, h);
        let s = dotRow(&q, &key);
        if (s > m) { // a new max: rescale what was summed against the old one
          let rescale = exp(m - s);
          l *= rescale;
          scaleRow(&o, rescale);
          m = s;
        }
        let p = exp(s - m);
        l += p;
        var value = valueRow(k, k - k0, h);
        axpyRow(&o, p, &value);
      }
    }
  }

  if (live) {
    let seen = l > 0.0; // false for a row that sees no key: zeros, lse = -inf
    scaleRow(&o, select(0.0, 1.0 / l, seen));
    storeOut(oAt(i, h), o);
    lse[h * params.lseStride + i] = select(bitcast<f32>(negInfBits), m + log(l), seen);
  }
}

// dQ_i = scale · Σ_k dS_ik k_k with P_ik = exp(s_ik - lse_i), dS_ik = P_ik (dOut_i·v_k - delta_i).
@compute @workgroup_size(BQ)
fn backwardQuery(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let N = params.N;
  let qt = wg.x;
  let h = wg.y;
  let i = qt * BQ + lid;
  let live = i < N;

  var q: Row; // q_i / sqrt(HS)
  var dO: Row;
  var dq: Row; // Σ_k dS_ik k_k
  var rowLse = 0.0;
  var rowDelta = 0.0;
  if (live) {
    q = qkvRow(qAt(i, h));
    scaleRow(&q, scale());
    dO = dOutRow(oAt(i, h));
    rowDelta = dotOutIn(oAt(i, h), dO);
    rowLse = lseIn[h * params.lseStride + i];
    delta[h * params.lseStride + i] = rowDelta;
  }

  let first = mask[params.keyTilesOffsets + qt];
  let last = mask[params.keyTilesOffsets + qt + 1u];
  for (var t = first; t < last; t++) {
    let k0 = mask[params.keyTiles + t] * BK;
    if (COUNT_VISITS && lid == 0u) { atomicAdd(&visits[1], 1u); }
    if (SHARED) {
      workgroupBarrier();
      stageKeys(k0, h, lid, BQ);
      workgroupBarrier();
    }
    if (live) {
      for (var k = k0; k < min(k0 + BK, i + 1u); k++) {
        if (i >= mask[k]) { continue; }
        var key = keyRow(k, k - k0, h);
        var value = valueRow(k, k - k0, h);
        let ds = exp(dotRow(&q, &key) - rowLse) * (dotRow(&dO, &value) - rowDelta);
        axpyRow(&dq, ds, &key);
      }
    }
  }

  if (live) {
    scaleRow(&dq, scale());
    storeDqkv(qAt(i, h), dq);
  }
}

// Stages rows q0 .. q0+BQ of head h's queries, output gradients, lse and delta.
fn stageQueries(q0: u32, h: u32, lid: u32, threads: u32) {
  for (var e = lid; e < BQ * HS / 4u; e += threads) {
    let i = q0 + e / (HS / 4u);
    let c = e % (HS / 4u);
    var qc = vec4f();
    var dOc = vec4f();
    if (i < params.N) {
      qc = qkv[qAt(i, h) + c];
      dOc = dOut[oAt(i, h) + c];
    }
    tileA[e] = qc;
    tileB[e] = dOc;
  }
  for (var r = lid; r < BQ; r += threads) {
    let i = q0 + r;
    var rowLse = 0.0;
    var rowDelta = 0.0;
    if (i < params.N) {
      rowLse = lseIn[h * params.lseStride + i];
      rowDelta = delta[h * params.lseStride + i];
    }
    lseTile[r] = rowLse;
    deltaTile[r] = rowDelta;
  }
}

// Query i (at r = i - q0 in its tile) of head h, its output gradient, lse and delta.
fn queryRow(i: u32, r: u32, h: u32) -> Row {
  if (SHARED) { return tileARow(r); }
  return qkvRow(qAt(i, h));
}

fn dOutRowAt(i: u32, r: u32, h: u32) -> Row {
  if (SHARED) { return tileBRow(r); }
  return dOutRow(oAt(i, h));
}

fn lseAt(i: u32, r: u32, h: u32) -> f32 {
  if (SHARED) { return lseTile[r]; }
  return lseIn[h * params.lseStride + i];
}

fn deltaAt(i: u32, r: u32, h: u32) -> f32 {
  if (SHARED) { return deltaTile[r]; }
  return delta[h * params.lseStride + i];
}

// dV_k = Σ_i P_ik dOut_i, dK_k = scale · Σ_i dS_ik q_i over the queries i in [k, end[k]).
@compute @workgroup_size(BK)
fn backwardKey(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let N = params.N;
  let kt = wg.x;
  let h = wg.y;
  let k = kt * BK + lid; // this invocation's key row
  let live = k < N;

  var key: Row; // k_k / sqrt(HS)
  var value: Row;
  var dk: Row; // Σ_i dS_ik q_i
  var dv: Row;
  var keyEnd = 0u; // queries [k, keyEnd) see this key
  if (live) {
    key = qkvRow(kAt(k, h));
    scaleRow(&key, scale());
    value = qkvRow(vAt(k, h));
    keyEnd = mask[k];
  }

  let first = mask[params.queryTilesOffsets + kt];
  let last = mask[params.queryTilesOffsets + kt + 1u];
  for (var t = first; t < last; t++) {
    let q0 = mask[params.queryTiles + t] * BQ;
    if (COUNT_VISITS && lid == 0u) { atomicAdd(&visits[2], 1u); }
    if (SHARED) {
      workgroupBarrier();
      stageQueries(q0, h, lid, BK);
      workgroupBarrier();
    }
    // The queries that see key k form one range: no per-pair mask test.
    for (var i = max(k, q0); i < min(keyEnd, q0 + BQ); i++) {
      var query = queryRow(i, i - q0, h);
      var dOi = dOutRowAt(i, i - q0, h);
      let p = exp(dotRow(&query, &key) - lseAt(i, i - q0, h));
      let ds = p * (dotRow(&dOi, &value) - deltaAt(i, i - q0, h));
      axpyRow(&dv, p, &dOi);
      axpyRow(&dk, ds, &query);
    }
  }

  if (live) {
    scaleRow(&dk, scale());
    storeDqkv(kAt(k, h), dk);
    storeDqkv(vAt(k, h), dv);
  }
}

// ---- Rows. One head's HS floats, as HS / 4 vec4s, held in registers: `alias Row = array<vec4f,
// MAX_HS / 4>` and its helpers (qkvRow, dOutRow, tileARow, tileBRow: loads; dotRow, axpyRow,
// scaleRow: arithmetic) are appended by the host, unrolled over MAX_HS / 4 lines each
// (attentionRowHelpers in attention.ts): SwiftShader neither unrolls loops nor keeps a
// loop-indexed private array in registers, and unrolling measured 1.5x on the whole kernel there.
// Lines past HS / 4 fold away, HS being an override.
