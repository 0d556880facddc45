// The playground's rehearsal: every kind of edit is accepted on a rollout like the benchmark's (so
// each one runs its path before a student's first edit), the rollout it rehearses on is left as it
// was, and a rollout too short to edit gives no steps.
import { describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../../rollout/generate-random';
import { emptyRollout } from './playground';
import { rehearsalSteps } from './rehearsal';

describe('rehearsalSteps', () => {
  it('rehearses slide, evict, summary, fold and append on a 500-token rollout, leaving it as it was', () => {
    const rollout = generateRandomRollout({ seed: 500, tokens: 500, edits: 6, textRate: 0, id: 'play' });
    const before = structuredClone(rollout);
    const steps = rehearsalSteps(rollout, 'step');
    expect(steps).toHaveLength(5);
    expect(steps.map((step) => step())).toEqual([true, true, true, true, true]);
    expect(rollout).toEqual(before);
  });

  it('gives no steps for a rollout with fewer than 4 live tokens', () => {
    expect(rehearsalSteps(emptyRollout('byte'), 'step')).toEqual([]);
  });
});
