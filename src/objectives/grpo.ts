// Group-relative advantages (GRPO, docs/objectives.md): A_i = (r_i − mean_g) / std_g over the rollouts of i's
// group g (one prompt). std is the population standard deviation (divide by the group size n, not
// n − 1) and no epsilon is added. A group whose rewards are all equal (a group of one included)
// carries no preference: every advantage in it is exactly 0, as is that of a rollout with no group.

/** `groups[i]` is rollout i's `group` field; null or undefined puts it in a group of its own. */
export function grpoAdvantages(rewards: readonly number[], groups: readonly (string | null | undefined)[]): Float64Array {
  if (rewards.length !== groups.length) throw new Error(`grpoAdvantages: ${rewards.length} rewards but ${groups.length} groups`);
  rewards.forEach((r, i) => {
    if (!Number.isFinite(r)) throw new Error(`grpoAdvantages: reward ${r} of rollout ${i} is not finite`);
  });
  const members = new Map<string, number[]>();
  groups.forEach((g, i) => {
    if (g === null || g === undefined) return;
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  const advantages = new Float64Array(rewards.length); // 0 unless a group below says otherwise
  for (const list of members.values()) {
    const values = list.map((i) => rewards[i]);
    // Equal rewards, tested exactly: their computed mean may differ from them in the last bit,
    // and a tiny std would then blow that round-off up into ±1 advantages.
    if (values.every((r) => r === values[0])) continue;
    // Advantages do not change when every reward is scaled; scaling by the power of two nearest the
    // largest |reward| is exact, so ordinary rewards give the same bits, and rewards near ±1.7e308
    // no longer overflow the sum (mean) or the squares (std) to infinity.
    const exponent = -Math.round(Math.log2(values.reduce((a, r) => Math.max(a, Math.abs(r)), 0)));
    const scale = 2 ** Math.min(1023, exponent); // 2^1024 itself would be infinite
    const scaled = values.map((r) => r * scale);
    const n = scaled.length;
    const mean = scaled.reduce((a, b) => a + b, 0) / n;
    const std = Math.sqrt(scaled.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
    list.forEach((i, j) => (advantages[i] = (scaled[j] - mean) / std));
  }
  return advantages;
}
