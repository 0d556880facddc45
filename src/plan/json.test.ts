import { describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../rollout/generate-random';
import { parseRolloutFile } from '../rollout/parse';
import { workedExample } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import { buildPlan } from './build';
import { planJsonChunks, planToJson } from './json';
import { METHODS } from './types';

describe('planJsonChunks', () => {
  it('streams exactly the text of JSON.stringify(planToJson(plan)), for every method', () => {
    const rollouts = [
      workedExample(),
      ...[1, 2, 3, 4, 5].map((seed) => parseRolloutFile(JSON.stringify(generateRandomRollout({ seed, size: 'medium', id: `m${seed}` })), 'm.json')[0]),
    ];
    for (const rollout of rollouts) {
      const tree = deriveTree(rollout);
      for (const method of METHODS) {
        for (const sdccTeacher of method === 'sdcc' ? (['packed-4d', 'logit-tree'] as const) : ([undefined] as const)) {
          const plan = buildPlan(tree, method, { sdccTeacher });
          expect([...planJsonChunks(plan)].join(''), `${rollout.id} ${method}`).toBe(JSON.stringify(planToJson(plan)));
        }
      }
    }
  });

  it('cuts a long sequence into pieces of at most about a megabyte', () => {
    const n = 600_000;
    const ids = Int32Array.from({ length: n }, (_, i) => i);
    const plan = { method: 'naive-full' as const, sequences: [{ ids, tokens: ids, positions: ids, end: new Uint32Array(n).fill(n), targets: [] }] };
    const pieces = [...planJsonChunks(plan)];
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(1.1 * 2 ** 20);
    expect(JSON.parse(pieces.join('')).sequences[0].end[n - 1]).toBe(n);
  });
});
