// Float64 reference of the tree-masked attention forward with grouped-query attention (the model
// families): qkv (N, (NH + 2·NKV)·HS) = q | k | v per row, query head h reads kv head h / (NH / NKV),
// query i sees key k iff k <= i < end[k]. out (N, NH·HS), lse (NH, N) (−inf for a row that sees nothing).

export interface GqaShape {
  NH: number;
  NKV: number;
  HS: number;
}

export function attentionGqaReference(qkv: ArrayLike<number>, end: ArrayLike<number>, { NH, NKV, HS }: GqaShape): { out: Float64Array; lse: Float64Array } {
  const N = end.length;
  const W = (NH + 2 * NKV) * HS;
  const out = new Float64Array(N * NH * HS);
  const lse = new Float64Array(NH * N);
  const scale = 1 / Math.sqrt(HS);
  for (let h = 0; h < NH; h++) {
    const kv = Math.floor(h / (NH / NKV));
    for (let i = 0; i < N; i++) {
      const keys: number[] = [];
      const scores: number[] = [];
      for (let k = 0; k <= i; k++) {
        if (i >= end[k]) continue;
        let s = 0;
        for (let d = 0; d < HS; d++) s += qkv[i * W + h * HS + d] * qkv[k * W + (NH + kv) * HS + d];
        keys.push(k);
        scores.push(s * scale);
      }
      if (keys.length === 0) {
        lse[h * N + i] = Number.NEGATIVE_INFINITY;
        continue;
      }
      const m = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - m));
      const sum = weights.reduce((a, b) => a + b, 0);
      lse[h * N + i] = m + Math.log(sum);
      keys.forEach((k, j) => {
        for (let d = 0; d < HS; d++) out[i * NH * HS + h * HS + d] += (weights[j] / sum) * qkv[k * W + (NH + NKV + kv) * HS + d];
      });
    }
  }
  return { out, lse };
}
