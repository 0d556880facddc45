// Float64 reference of attention-decode-gqa.wgsl: the causal grouped-query attention of rows start ..
// start + M − 1 of a qkv cache against its rows 0 ..= their own, out (M, NH·HS).

import { attentionGqaReference, type GqaShape } from '../attention/attention-gqa.reference';

export function decodeAttentionReference(cache: ArrayLike<number>, start: number, M: number, shape: GqaShape): Float64Array {
  const n = start + M;
  const W = (shape.NH + 2 * shape.NKV) * shape.HS;
  const { out } = attentionGqaReference(Array.prototype.slice.call(cache, 0, n * W), new Uint32Array(n).fill(n), shape);
  return out.slice(start * shape.NH * shape.HS);
}
