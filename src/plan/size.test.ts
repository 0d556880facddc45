// The sizes src/plan/size.ts computes from the events are those of the tree and plans once built:
// N_packed exactly, each sequence method's rows exactly, sdcc's within its bound.

import { describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../rollout/generate-random';
import { parseRolloutFile } from '../rollout/parse';
import { validateRollout } from '../rollout/validate';
import { evictingRollout } from '../testing/evicting';
import { deriveTree } from '../tree/derive';
import { buildPlan } from './build';
import { DEFAULT_MAX_PACKED, rolloutSize, sizeProblem } from './size';
import { SEQUENCE_METHODS } from './types';

const rows = (seqs: readonly { ids: Int32Array }[]) => seqs.reduce((s, q) => s + q.ids.length, 0);

describe('rollout sizes from the events', () => {
  it('equal the built tree and plans on 60 random rollouts', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rollout = validateRollout(generateRandomRollout({ seed, size: seed % 3 === 0 ? 'medium' : 'small' }), { file: `random-${seed}` });
      const size = rolloutSize(rollout);
      const tree = deriveTree(rollout);
      expect(size.nPacked, `seed ${seed}`).toBe(tree.packedOrder.length);
      for (const method of SEQUENCE_METHODS) expect(size.rows[method], `seed ${seed} ${method}`).toBe(rows(buildPlan(tree, method).sequences));
      for (const sdccTeacher of ['packed-4d', 'logit-tree'] as const) {
        const plan = buildPlan(tree, 'sdcc', { sdccTeacher });
        expect(plan.student.ids.length + rows(plan.teachers) - plan.sharedRows).toBeLessThanOrEqual(size.rows.sdcc);
      }
    }
  });

  it('the 2,000-edit rollout: N_packed 4,000,000 counted in well under 5 s, refused at the default limit with the figure', () => {
    const [rollout] = parseRolloutFile(evictingRollout(2000), 'evict.json');
    const started = performance.now();
    const size = rolloutSize(rollout);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(size).toEqual({
      nPacked: 4_000_000,
      rows: { 'naive-full': 4000, 'naive-compressed': 2000, 'logit-tree': 4_000_000, 'packed-4d': 4_000_000, sdcc: 4_002_000 },
    });
    expect(sizeProblem(rollout, DEFAULT_MAX_PACKED)).toBe(
      'rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows (its tree would hold that many nodes; raise the limit to build it)',
    );
    expect(sizeProblem(rollout, 4_000_000, 'naive-full')).toBeNull();
    expect(sizeProblem(rollout, 4_000_000, 'sdcc')).toMatch(/the sdcc plan has 4,002,000 rows, above the limit of 4,000,000/);
  });
});
