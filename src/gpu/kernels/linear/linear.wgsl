// y (M, N) = x (M, K) · Wᵀ [+ bias (N)] [+= y]: a linear layer with its weight W (N, K) stored as Hugging
// Face stores `nn.Linear.weight` (out, in) row-major, in the folder's format (F32, F16 or BF16, WFMT:
// weight-format.wgsl, prepended by the host), accumulated in f32. x and y are f32. K is even (pairs).
// y may be a column block of a wider matrix (row stride ldY, first column offsetY): q, k and v write
// their columns of one qkv row, gate and up theirs of one gateUp row, and the head (W = lm_head or the
// tied embed_tokens, a block of vocabulary rows at a time) its block of the logits.
//
// One invocation owns an 8 × 8 block of y (each weight pair decoded once for 8 rows, each pair of x
// read once for 8 columns) and walks K two elements at a time (one 16-bit word, or two f32 words, of
// each of its 8 rows of W). Grid (ceil(N / (8·WG_X)), ceil(M / (8·WG_Y))). LINEAR_BLOCK in linear.ts mirrors the block.

override WG_X: u32 = 8; // invocations per workgroup along N
override WG_Y: u32 = 8; // invocations per workgroup along M
override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false; // y += result: the residual stream adds a projection in place

// Mirror: linearParams() in linear.ts.
struct Params {
  M: u32,
  K: u32,
  N: u32,
  ldY: u32, // row stride of y (N, or wider: y is a column block)
  offsetY: u32, // index in y of element (0, 0)
}

@group(0) @binding(0) var<storage, read> x: array<vec2f>; // (M, K)
@group(0) @binding(1) var<storage, read> w: array<WeightWord>; // (N, K) in WFMT
@group(0) @binding(2) var<storage, read> bias: array<WeightWord>; // (N) in WFMT, read only with HAS_BIAS
@group(0) @binding(3) var<storage, read_write> y: array<f32>; // (M, ldY) from offsetY
@group(0) @binding(4) var<uniform> params: Params;

// Elements 2p, 2p + 1 of W and of bias (flat).
fn wPair(p: u32) -> vec2f {
  if (WFMT == 0u) { return pairF32(w[2u * p], w[2u * p + 1u]); }
  return pair16(w[p]);
}

fn biasAt(n: u32) -> f32 {
  if (WFMT == 0u) { return wordF32(bias[n]); }
  return pairElement(pair16(bias[n / 2u]), n);
}

fn storeRow(m: u32, n0: u32, acc: vec4f) {
  if (m >= params.M) { return; }
  for (var j = 0u; j < 4u; j++) {
    let n = n0 + j;
    if (n < params.N) {
      var v = acc[j];
      if (HAS_BIAS) { v += biasAt(n); }
      let i = params.offsetY + m * params.ldY + n;
      if (ACCUMULATE) { v += y[i]; }
      y[i] = v;
    }
  }
}

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let M = params.M;
  let N = params.N;
  let K2 = params.K / 2u; // pairs per row
  let n0 = gid.x * 8u;
  let m0 = gid.y * 8u;
  if (n0 >= N || m0 >= M) { return; }
  // First pair of each of the block's rows of x and of W; past the edge they re-read the last row
  // (never stored).
  let a0 = min(m0 + 0u, M - 1u) * K2;
  let a1 = min(m0 + 1u, M - 1u) * K2;
  let a2 = min(m0 + 2u, M - 1u) * K2;
  let a3 = min(m0 + 3u, M - 1u) * K2;
  let a4 = min(m0 + 4u, M - 1u) * K2;
  let a5 = min(m0 + 5u, M - 1u) * K2;
  let a6 = min(m0 + 6u, M - 1u) * K2;
  let a7 = min(m0 + 7u, M - 1u) * K2;
  let b0 = min(n0 + 0u, N - 1u) * K2;
  let b1 = min(n0 + 1u, N - 1u) * K2;
  let b2 = min(n0 + 2u, N - 1u) * K2;
  let b3 = min(n0 + 3u, N - 1u) * K2;
  let b4 = min(n0 + 4u, N - 1u) * K2;
  let b5 = min(n0 + 5u, N - 1u) * K2;
  let b6 = min(n0 + 6u, N - 1u) * K2;
  let b7 = min(n0 + 7u, N - 1u) * K2;
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
  for (var p = 0u; p < K2; p++) {
    let w0 = wPair(b0 + p);
    let w1 = wPair(b1 + p);
    let w2 = wPair(b2 + p);
    let w3 = wPair(b3 + p);
    let w4 = wPair(b4 + p);
    let w5 = wPair(b5 + p);
    let w6 = wPair(b6 + p);
    let w7 = wPair(b7 + p);
    let x0 = x[a0 + p];
    acc0l += vec4f(dot(x0, w0), dot(x0, w1), dot(x0, w2), dot(x0, w3));
    acc0h += vec4f(dot(x0, w4), dot(x0, w5), dot(x0, w6), dot(x0, w7));
    let x1 = x[a1 + p];
    acc1l += vec4f(dot(x1, w0), dot(x1, w1), dot(x1, w2), dot(x1, w3));
    acc1h += vec4f(dot(x1, w4), dot(x1, w5), dot(x1, w6), dot(x1, w7));
    let x2 = x[a2 + p];
    acc2l += vec4f(dot(x2, w0), dot(x2, w1), dot(x2, w2), dot(x2, w3));
    acc2h += vec4f(dot(x2, w4), dot(x2, w5), dot(x2, w6), dot(x2, w7));
    let x3 = x[a3 + p];
    acc3l += vec4f(dot(x3, w0), dot(x3, w1), dot(x3, w2), dot(x3, w3));
    acc3h += vec4f(dot(x3, w4), dot(x3, w5), dot(x3, w6), dot(x3, w7));
    let x4 = x[a4 + p];
    acc4l += vec4f(dot(x4, w0), dot(x4, w1), dot(x4, w2), dot(x4, w3));
    acc4h += vec4f(dot(x4, w4), dot(x4, w5), dot(x4, w6), dot(x4, w7));
    let x5 = x[a5 + p];
    acc5l += vec4f(dot(x5, w0), dot(x5, w1), dot(x5, w2), dot(x5, w3));
    acc5h += vec4f(dot(x5, w4), dot(x5, w5), dot(x5, w6), dot(x5, w7));
    let x6 = x[a6 + p];
    acc6l += vec4f(dot(x6, w0), dot(x6, w1), dot(x6, w2), dot(x6, w3));
    acc6h += vec4f(dot(x6, w4), dot(x6, w5), dot(x6, w6), dot(x6, w7));
    let x7 = x[a7 + p];
    acc7l += vec4f(dot(x7, w0), dot(x7, w1), dot(x7, w2), dot(x7, w3));
    acc7h += vec4f(dot(x7, w4), dot(x7, w5), dot(x7, w6), dot(x7, w7));
  }
  storeRow(m0 + 0u, n0, acc0l);
  storeRow(m0 + 0u, n0 + 4u, acc0h);
  storeRow(m0 + 1u, n0, acc1l);
  storeRow(m0 + 1u, n0 + 4u, acc1h);
  storeRow(m0 + 2u, n0, acc2l);
  storeRow(m0 + 2u, n0 + 4u, acc2h);
  storeRow(m0 + 3u, n0, acc3l);
  storeRow(m0 + 3u, n0 + 4u, acc3h);
  storeRow(m0 + 4u, n0, acc4l);
  storeRow(m0 + 4u, n0 + 4u, acc4h);
  storeRow(m0 + 5u, n0, acc5l);
  storeRow(m0 + 5u, n0 + 4u, acc5h);
  storeRow(m0 + 6u, n0, acc6l);
  storeRow(m0 + 6u, n0 + 4u, acc6h);
  storeRow(m0 + 7u, n0, acc7l);
  storeRow(m0 + 7u, n0 + 4u, acc7h);
}
