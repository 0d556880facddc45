import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { generateRandomRollout } from '../rollout/generate-random';
import { workedExample } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import { buildPlan } from './build';
import { branchLengths, positionsNeeded } from './positions';
import { METHODS, type SequenceMethod } from './types';

const SEQUENCE_METHODS = METHODS.filter((m): m is SequenceMethod => m !== 'sdcc');

/** Largest position id + 1 over the plan buildPlan makes. */
function planPositions(rollout: ReturnType<typeof workedExample>, method: SequenceMethod): number {
  let most = 0;
  for (const s of buildPlan(deriveTree(rollout), method).sequences) for (const p of s.positions) most = Math.max(most, p + 1);
  return most;
}

describe('positionsNeeded', () => {
  it('gives the worked example: L 17, final walk 8, longest branch 10', () => {
    const rollout = workedExample();
    expect(Array.from(branchLengths(rollout))).toEqual([9, 10, 8]);
    expect(SEQUENCE_METHODS.map((m) => positionsNeeded(rollout, m))).toEqual([8, 17, 10, 10]);
  });

  it('equals the positions of the plan buildPlan builds, on 300 random rollouts', () => {
    for (let seed = 0; seed < 300; seed++) {
      const json = generateRandomRollout({ seed, size: 'small', id: `r${seed}` });
      const [rollout] = parseRolloutFile(JSON.stringify(json), 'r.json');
      for (const method of SEQUENCE_METHODS) expect(positionsNeeded(rollout, method), `seed ${seed} ${method}`).toBe(planPositions(rollout, method));
    }
  });
});
