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
    const n = values.length;
    const mean = values.reduce((a, b) => a + b, 0) / n;
    const std = Math.sqrt(values.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
    for (const i of list) advantages[i] = (rewards[i] - mean) / std;
  }
  return advantages;
}
