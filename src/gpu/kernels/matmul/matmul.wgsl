// y (M, N) = x (M, K) · W (K, N) [+ bias (N)] [-> GELU], fp32: every linear layer of GPT-2, the tied
// head (TRANS_B: W stored (N, K), logits = x · wteᵀ) and the products of the backward (TRANS_A: x
// stored (K, M), dW = xᵀ · dY). Any M, K, N: edges are clamped on load and masked on store.
//
// Two entry points, the same epilogue (bias, GELU, accumulation, masked store):
//   blocked  an 8 × 8 block of y per invocation, no workgroup memory, no barrier: each invocation
//            streams its rows of x and columns of W from storage. Fastest on SwiftShader, where a
//            barrier switches every invocation's coroutine and storage reads hit the CPU's caches.
//            Grid (ceil(N / (8·WG_X)), ceil(M / (8·WG_Y))).
//   tiled    a 4 × 4 block per invocation; the workgroup stages a (4·WG_Y × TILE_K) tile of x and a
//            (TILE_K × 4·WG_X) tile of W in workgroup memory, then every invocation reads its
//            operands from there. Fastest on GPUs. Grid (ceil(N / (4·WG_X)), ceil(M / (4·WG_Y))).
// The block sizes are fixed by the unrolled accumulators; MATMUL_BLOCK in matmul.ts mirrors them.

override WG_X: u32 = 16; // invocations per workgroup along N
override WG_Y: u32 = 4; // invocations per workgroup along M
override TILE_K: u32 = 16; // tiled: depth of one staged tile
// The product's options, bits of params.flags (a uniform, not overrides: one pipeline serves every
// product of a variant, where six boolean overrides compiled up to five pipelines on SwiftShader, ~0.2 s each).
// Mirror: MATMUL_FLAGS in matmul.ts.
const TRANS_A = 1u; // x is stored (K, M)
const TRANS_B = 2u; // W is stored (N, K)
const HAS_BIAS = 4u;
const GELU = 8u; // tanh-form GELU on x·W + bias
const STORE_PRE = 16u; // also write x·W + bias (the GELU's input, for its backward) to `pre`
const ACCUMULATE = 32u; // y += result, for gradients summed over several products

// Mirror: matmulParams() in matmul.ts.
struct Params {
  M: u32,
  K: u32,
  N: u32,
  ldY: u32, // row stride of y and pre (N, or wider: the tied head writes a column block of the logits)
  flags: u32, // TRANS_A | TRANS_B | HAS_BIAS | GELU | STORE_PRE | ACCUMULATE
}

fn has(flag: u32) -> bool {
  return (params.flags & flag) != 0u;
}

@group(0) @binding(0) var<storage, read> x: array<f32>; // (M, K), or (K, M) with TRANS_A
@group(0) @binding(1) var<storage, read> w: array<f32>; // (K, N), or (N, K) with TRANS_B
@group(0) @binding(2) var<storage, read> bias: array<f32>; // (N), read only with HAS_BIAS
@group(0) @binding(3) var<storage, read_write> y: array<f32>; // (M, N)
@group(0) @binding(4) var<storage, read_write> pre: array<f32>; // (M, N), written only with STORE_PRE
@group(0) @binding(5) var<uniform> params: Params;

// gelu() and geluGrad(): ../common/gelu-math.wgsl, prepended by the host.

// Bias, GELU, accumulation and the store of one row of an invocation's block: y[m, n0 .. n0 + 3].
fn storeRow(m: u32, n0: u32, acc: vec4f) {
  let M = params.M;
  let N = params.N;
  if (m >= M) {
    return;
  }
  for (var j = 0u; j < 4u; j++) {
    let n = n0 + j;
    if (n < N) {
      var v = acc[j];
      if (has(HAS_BIAS)) {
        v += bias[n];
      }
      let i = m * params.ldY + n;
      if (has(STORE_PRE)) {
        pre[i] = v;
      }
      if (has(GELU)) {
        v = gelu(v);
      }
      if (has(ACCUMULATE)) {
        v += y[i];
      }
      y[i] = v;
    }
  }
}

// blocked: an 8 × 8 block of y per invocation, two k steps per iteration. Every operand is a
// storage read, so the larger the block, the fewer reads per multiply-add (measured on SwiftShader:
// 8 × 8 beats 4 × 4 by ~30%). Hand-unrolled: SwiftShader does not unroll loops, and registers
// indexed by a loop counter would become memory.
@compute @workgroup_size(WG_X, WG_Y)
fn blocked(@builtin(global_invocation_id) gid: vec3u) {
  let M = params.M;
  let K = params.K;
  let N = params.N;
  let n0 = gid.x * 8u;
  let m0 = gid.y * 8u;
  if (n0 >= N || m0 >= M) {
    return;
  }
  // Element (m, k) of x sits at m·rowA + k·stepA; element (k, n) of W at n·colB + k·stepB.
  let rowA = select(K, 1u, has(TRANS_A));
  let stepA = select(1u, M, has(TRANS_A));
  let colB = select(1u, K, has(TRANS_B));
  let stepB = select(N, 1u, has(TRANS_B));
  // The block's rows of x and columns of W at k = 0. Past the edge they re-read the last row or
  // column; those results are never stored.
  let a0 = min(m0 + 0u, M - 1u) * rowA;
  let a1 = min(m0 + 1u, M - 1u) * rowA;
  let a2 = min(m0 + 2u, M - 1u) * rowA;
  let a3 = min(m0 + 3u, M - 1u) * rowA;
  let a4 = min(m0 + 4u, M - 1u) * rowA;
  let a5 = min(m0 + 5u, M - 1u) * rowA;
  let a6 = min(m0 + 6u, M - 1u) * rowA;
  let a7 = min(m0 + 7u, M - 1u) * rowA;
  let b0 = min(n0 + 0u, N - 1u) * colB;
  let b1 = min(n0 + 1u, N - 1u) * colB;
  let b2 = min(n0 + 2u, N - 1u) * colB;
  let b3 = min(n0 + 3u, N - 1u) * colB;
  let b4 = min(n0 + 4u, N - 1u) * colB;
  let b5 = min(n0 + 5u, N - 1u) * colB;
  let b6 = min(n0 + 6u, N - 1u) * colB;
  let b7 = min(n0 + 7u, N - 1u) * colB;
  var acc0l = vec4f(); // y(m0 + 0, n0 .. n0 + 3)
  var acc0h = vec4f(); // y(m0 + 0, n0 + 4 .. n0 + 7)
  var acc1l = vec4f(); // y(m0 + 1, n0 .. n0 + 3)
  var acc1h = vec4f(); // y(m0 + 1, n0 + 4 .. n0 + 7)
  var acc2l = vec4f(); // y(m0 + 2, n0 .. n0 + 3)
  var acc2h = vec4f(); // y(m0 + 2, n0 + 4 .. n0 + 7)
  var acc3l = vec4f(); // y(m0 + 3, n0 .. n0 + 3)
  var acc3h = vec4f(); // y(m0 + 3, n0 + 4 .. n0 + 7)
  var acc4l = vec4f(); // y(m0 + 4, n0 .. n0 + 3)
  var acc4h = vec4f(); // y(m0 + 4, n0 + 4 .. n0 + 7)
  var acc5l = vec4f(); // y(m0 + 5, n0 .. n0 + 3)
  var acc5h = vec4f(); // y(m0 + 5, n0 + 4 .. n0 + 7)
  var acc6l = vec4f(); // y(m0 + 6, n0 .. n0 + 3)
  var acc6h = vec4f(); // y(m0 + 6, n0 + 4 .. n0 + 7)
  var acc7l = vec4f(); // y(m0 + 7, n0 .. n0 + 3)
  var acc7h = vec4f(); // y(m0 + 7, n0 + 4 .. n0 + 7)
  let K2 = K & ~1u;
  var k = 0u;
  for (; k < K2; k += 2u) {
    let ka = k * stepA;
    let ka1 = ka + stepA;
    let kb = k * stepB;
    let kb1 = kb + stepB;
    let w0 = vec4f(w[b0 + kb], w[b1 + kb], w[b2 + kb], w[b3 + kb]); // W(k, n0 .. n0 + 3)
    let w1 = vec4f(w[b4 + kb], w[b5 + kb], w[b6 + kb], w[b7 + kb]); // W(k, n0 + 4 .. n0 + 7)
    let w2 = vec4f(w[b0 + kb1], w[b1 + kb1], w[b2 + kb1], w[b3 + kb1]); // W(k + 1, n0 .. n0 + 3)
    let w3 = vec4f(w[b4 + kb1], w[b5 + kb1], w[b6 + kb1], w[b7 + kb1]); // W(k + 1, n0 + 4 .. n0 + 7)
    let x0 = vec2f(x[a0 + ka], x[a0 + ka1]);
    acc0l += x0.x * w0 + x0.y * w2;
    acc0h += x0.x * w1 + x0.y * w3;
    let x1 = vec2f(x[a1 + ka], x[a1 + ka1]);
    acc1l += x1.x * w0 + x1.y * w2;
    acc1h += x1.x * w1 + x1.y * w3;
    let x2 = vec2f(x[a2 + ka], x[a2 + ka1]);
    acc2l += x2.x * w0 + x2.y * w2;
    acc2h += x2.x * w1 + x2.y * w3;
    let x3 = vec2f(x[a3 + ka], x[a3 + ka1]);
    acc3l += x3.x * w0 + x3.y * w2;
    acc3h += x3.x * w1 + x3.y * w3;
    let x4 = vec2f(x[a4 + ka], x[a4 + ka1]);
    acc4l += x4.x * w0 + x4.y * w2;
    acc4h += x4.x * w1 + x4.y * w3;
    let x5 = vec2f(x[a5 + ka], x[a5 + ka1]);
    acc5l += x5.x * w0 + x5.y * w2;
    acc5h += x5.x * w1 + x5.y * w3;
    let x6 = vec2f(x[a6 + ka], x[a6 + ka1]);
    acc6l += x6.x * w0 + x6.y * w2;
    acc6h += x6.x * w1 + x6.y * w3;
    let x7 = vec2f(x[a7 + ka], x[a7 + ka1]);
    acc7l += x7.x * w0 + x7.y * w2;
    acc7h += x7.x * w1 + x7.y * w3;
  }
  if (k < K) {
    let ka = k * stepA;
    let kb = k * stepB;
    let w0 = vec4f(w[b0 + kb], w[b1 + kb], w[b2 + kb], w[b3 + kb]);
    let w1 = vec4f(w[b4 + kb], w[b5 + kb], w[b6 + kb], w[b7 + kb]);
    acc0l += x[a0 + ka] * w0;
    acc0h += x[a0 + ka] * w1;
    acc1l += x[a1 + ka] * w0;
    acc1h += x[a1 + ka] * w1;
    acc2l += x[a2 + ka] * w0;
    acc2h += x[a2 + ka] * w1;
    acc3l += x[a3 + ka] * w0;
    acc3h += x[a3 + ka] * w1;
    acc4l += x[a4 + ka] * w0;
    acc4h += x[a4 + ka] * w1;
    acc5l += x[a5 + ka] * w0;
    acc5h += x[a5 + ka] * w1;
    acc6l += x[a6 + ka] * w0;
    acc6h += x[a6 + ka] * w1;
    acc7l += x[a7 + ka] * w0;
    acc7h += x[a7 + ka] * w1;
  }
  let n1 = n0 + 4u;
  storeRow(m0, n0, acc0l);
  storeRow(m0, n1, acc0h);
  storeRow(m0 + 1u, n0, acc1l);
  storeRow(m0 + 1u, n1, acc1h);
  storeRow(m0 + 2u, n0, acc2l);
  storeRow(m0 + 2u, n1, acc2h);
  storeRow(m0 + 3u, n0, acc3l);
  storeRow(m0 + 3u, n1, acc3h);
  storeRow(m0 + 4u, n0, acc4l);
  storeRow(m0 + 4u, n1, acc4h);
  storeRow(m0 + 5u, n0, acc5l);
  storeRow(m0 + 5u, n1, acc5h);
  storeRow(m0 + 6u, n0, acc6l);
  storeRow(m0 + 6u, n1, acc6h);
  storeRow(m0 + 7u, n0, acc7l);
  storeRow(m0 + 7u, n1, acc7h);
}

// tiled: a 4 × 4 block of y per invocation; per TILE_K slice of k, the workgroup stages its rows of
// x and columns of W in workgroup memory, waits, and accumulates from there. Loops over kT are
// uniform (K is a uniform), so the barriers are too.
//
// Staged tiles, depth-major: tileX[kk·WG_Y + r] holds rows 4r .. 4r+3 of the tile at depth kk,
// tileW[kk·WG_X + c] holds columns 4c .. 4c+3, so an invocation reads its operands as two vec4s.
var<workgroup> tileX: array<vec4f, TILE_K * WG_Y>; // (TILE_K, 4·WG_Y)
var<workgroup> tileW: array<vec4f, TILE_K * WG_X>; // (TILE_K, 4·WG_X)

@compute @workgroup_size(WG_X, WG_Y)
fn tiled(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let M = params.M;
  let K = params.K;
  let N = params.N;
  let BM = 4u * WG_Y;
  let BN = 4u * WG_X;
  let threads = WG_X * WG_Y;
  let mT = wid.y * BM;
  let nT = wid.x * BN;
  var acc0 = vec4f();
  var acc1 = vec4f();
  var acc2 = vec4f();
  var acc3 = vec4f();
  for (var kT = 0u; kT < K; kT += TILE_K) {
    // Neighbouring invocations load neighbouring addresses: along k unless the operand is stored
    // with the tile's other axis contiguous. Out-of-range elements are staged as zeros.
    for (var e = li; e < BM * TILE_K; e += threads) {
      let r = select(e / TILE_K, e % BM, has(TRANS_A));
      let kk = select(e % TILE_K, e / BM, has(TRANS_A));
      let m = mT + r;
      let k = kT + kk;
      var v = 0.0;
      if (m < M && k < K) {
        v = x[select(m * K + k, k * M + m, has(TRANS_A))];
      }
      tileX[kk * WG_Y + r / 4u][r % 4u] = v;
    }
    for (var e = li; e < BN * TILE_K; e += threads) {
      let c = select(e % BN, e / TILE_K, has(TRANS_B));
      let kk = select(e / BN, e % TILE_K, has(TRANS_B));
      let n = nT + c;
      let k = kT + kk;
      var v = 0.0;
      if (n < N && k < K) {
        v = w[select(k * N + n, n * K + k, has(TRANS_B))];
      }
      tileW[kk * WG_X + c / 4u][c % 4u] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TILE_K; kk++) {
      let a = tileX[kk * WG_Y + lid.y];
      let b = tileW[kk * WG_X + lid.x];
      acc0 += a.x * b;
      acc1 += a.y * b;
      acc2 += a.z * b;
      acc3 += a.w * b;
    }
    workgroupBarrier();
  }
  let m0 = mT + lid.y * 4u;
  let n0 = nT + lid.x * 4u;
  storeRow(m0, n0, acc0);
  storeRow(m0 + 1u, n0, acc1);
  storeRow(m0 + 2u, n0, acc2);
  storeRow(m0 + 3u, n0, acc3);
}
