// How a weight tensor reads as it is stored in a model folder (src/model/family/config.ts: WeightDtype):
// every weight binds as array<u32>; F32 holds one element a word, F16 and BF16 two (element 2p in
// the low half of word p, the little-endian order safetensors writes). The including kernel declares
// its weight bindings and, per binding, a `fn <name>Pair(p) -> vec2f` (elements 2p, 2p + 1) built
// from pairF32 / pair16 below. Accumulation is always f32. The host prepends this file.

override WFMT: u32 = 0u; // WEIGHT_FORMAT in weight-format.ts: 0 F32, 1 F16, 2 BF16

// Two f32 words.
fn pairF32(lo: u32, hi: u32) -> vec2f {
  return vec2f(bitcast<f32>(lo), bitcast<f32>(hi));
}

// One word of two 16-bit elements: F16 through unpack2x16float; BF16 is the high half of an f32,
// so each half shifts (or masks) into the top 16 bits of a word.
fn pair16(word: u32) -> vec2f {
  if (WFMT == 1u) {
    return unpack2x16float(word);
  }
  return vec2f(bitcast<f32>(word << 16u), bitcast<f32>(word & 0xffff0000u));
}

// Element e of a pair read by one of the kernel's <name>Pair functions.
fn pairElement(pair: vec2f, e: u32) -> f32 {
  return select(pair.x, pair.y, (e & 1u) == 1u);
}
