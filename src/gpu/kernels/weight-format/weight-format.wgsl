// How a weight tensor reads as it is stored in a model folder (src/model/family/config.ts: WeightDtype):
// every weight binds as array<WeightWord>, one 32-bit word an element: F32 holds one element a word,
// F16 and BF16 two (element 2p in the low half of word p, the little-endian order safetensors writes).
// The including kernel declares its weight bindings and, per binding, a `fn <name>Pair(p) -> vec2f`
// (elements 2p, 2p + 1) built from pairF32 / pair16. Accumulation is always f32. The host prepends
// one of the two headers of weight-format.ts (WeightWord, wordBits, pair16: the unpack path, words
// of u32, or the shader-f16 path, words of vec2<f16>) and then this file.

override WFMT: u32 = 0u; // WEIGHT_FORMAT in weight-format.ts: 0 F32, 1 F16, 2 BF16

// Two f32 words.
fn pairF32(lo: WeightWord, hi: WeightWord) -> vec2f {
  return vec2f(bitcast<f32>(wordBits(lo)), bitcast<f32>(wordBits(hi)));
}

// One f32 word.
fn wordF32(word: WeightWord) -> f32 {
  return bitcast<f32>(wordBits(word));
}

// Element e of a pair read by one of the kernel's <name>Pair functions.
fn pairElement(pair: vec2f, e: u32) -> f32 {
  return select(pair.x, pair.y, (e & 1u) == 1u);
}
