import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree';
import { datasetToJsonl, generateDataset, promptSeeds, rolloutSeed, tapeLength } from './dataset';
import { createLookupEnv } from './env/lookup';
import { createExpertPolicy } from './policies/expert';

describe('generateDataset', () => {
  const expert = createExpertPolicy(createLookupEnv());

  it('writes n groups of groupSize rollouts as JSONL the core parser reads back unchanged', async () => {
    const { rollouts, summary } = await generateDataset({ env: 'lookup', editor: 'compact', n: 6, groupSize: 3, seed: 1 }, expert);
    expect(rollouts).toHaveLength(18);
    const groups = new Map<string, number>();
    for (const r of rollouts) groups.set(r.group!, (groups.get(r.group!) ?? 0) + 1);
    expect([...groups.values()]).toEqual([3, 3, 3, 3, 3, 3]);
    expect(new Set(rollouts.map((r) => r.id)).size).toBe(18);
    // One prompt (env seed) per group: the deterministic expert then plays the same episode in a
    // group, and different episodes across groups.
    const episodes = new Map<string, string>();
    for (const r of rollouts) {
      const events = JSON.stringify(r.events);
      if (episodes.has(r.group!)) expect(events).toBe(episodes.get(r.group!));
      episodes.set(r.group!, events);
      expect((r.meta as { seed: number }).seed).toBe(Number(r.group!.slice('lookup-p'.length)));
    }
    expect(new Set(episodes.values()).size).toBe(6);

    const text = datasetToJsonl(rollouts);
    expect(text.split('\n')).toHaveLength(19);
    const parsed = parseRolloutFile(text, 'set.jsonl');
    expect(parsed.map((r) => r.id)).toEqual(rollouts.map((r) => r.id));
    expect(parsed.map((r) => r.K)).toEqual(rollouts.map(() => 2));
    expect(parsed.every((r) => r.reward === 1 && (r.meta as { em: number }).em === 1)).toBe(true);

    expect(summary).toEqual({
      rollouts: 18,
      groups: 6,
      meanReward: 1,
      em: 1,
      K: { mean: 2, min: 2, max: 2 },
      tokens: { mean: 452, max: 452 },
      maxView: 197,
      stops: { done: 18 },
    });
  });

  it('is deterministic per seed, also with several episodes in flight', async () => {
    const noisy = createExpertPolicy(createLookupEnv(), { noise: 0.3 });
    const config = { env: 'lookup', editor: 'stack', n: 5, groupSize: 4, seed: 9 } as const;
    const a = datasetToJsonl((await generateDataset(config, noisy)).rollouts);
    const b = datasetToJsonl((await generateDataset({ ...config, concurrency: 7 }, noisy)).rollouts);
    expect(b).toBe(a);
    const c = datasetToJsonl((await generateDataset({ ...config, seed: 10 }, noisy)).rollouts);
    expect(c).not.toBe(a);
  });

  it('gives a noisy policy groups with unequal rewards (non-zero group-relative advantages)', async () => {
    const noisy = createExpertPolicy(createLookupEnv(), { noise: 0.3 });
    const { rollouts, summary } = await generateDataset({ env: 'lookup', editor: 'window', n: 10, groupSize: 8, seed: 3 }, noisy);
    const byGroup = new Map<string, number[]>();
    for (const r of rollouts) byGroup.set(r.group!, [...(byGroup.get(r.group!) ?? []), r.reward!]);
    const mixed = [...byGroup.values()].filter((rs) => Math.min(...rs) !== Math.max(...rs));
    expect(mixed.length).toBeGreaterThanOrEqual(5);
    expect(summary.meanReward).toBeGreaterThan(0.1);
    expect(summary.meanReward).toBeLessThan(0.7);
    // Rollout-time logprobs are there for the RL ratio: negative where the policy could have slipped.
    const lps = rollouts.flatMap((r) => r.events.flatMap((e) => (e.op === 'append' && e.role === 'act' ? e.logprobs! : [])));
    expect(lps.some((lp) => lp < 0)).toBe(true);
    expect(lps.every((lp) => lp <= 0 && Number.isFinite(lp))).toBe(true);
  });

  it('overrides the editor budget, records it in meta, and refuses a budget for none', async () => {
    const { rollouts, summary } = await generateDataset({ env: { id: 'lookup', hops: 2 }, editor: 'window', budget: 120, n: 3, seed: 0 }, expert);
    for (const r of rollouts) {
      expect(r.meta).toMatchObject({ env: 'lookup', editor: 'window', budget: 120, em: 1, difficulty: { hops: 2 } });
      const tree = deriveTree(validateRollout(r, { file: 'x' }));
      expect(tree.K).toBe(1);
      expect(tapeLength(r)).toBe(tree.figures.physicalLength);
    }
    expect(summary.maxView).toBeLessThanOrEqual(161);
    await expect(generateDataset({ env: 'lookup', editor: 'none', budget: 100, n: 1, seed: 0 }, expert)).rejects.toThrow('none has no budget');
    await expect(generateDataset({ env: 'lookup', editor: 'none', n: 0, seed: 0 }, expert)).rejects.toThrow('n must be an integer >= 1');
  });

  it('draws distinct prompt seeds and distinct sampling seeds within a group', () => {
    const seeds = promptSeeds(4, 1000);
    expect(new Set(seeds).size).toBe(1000);
    expect(promptSeeds(4, 10)).toEqual(seeds.slice(0, 10));
    expect(new Set(Array.from({ length: 64 }, (_, j) => rolloutSeed(seeds[0], j))).size).toBe(64);
  });
});
