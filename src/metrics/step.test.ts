// A step's figures from what the GPU read back: verl's mismatch figures of the trained targets
// against the rollouts' logprobs (the same pairs as logdiff), per rollout a sequence.
import { describe, expect, it } from 'vitest';
import { workedExample } from '../testing/fixtures';
import { rolloutLogprobs } from './drift';
import { mismatchFigures } from './mismatch';
import { stepFigures, type StepReadings } from './step';

const worked = workedExample();

function readings(rollouts: StepReadings['rollouts'], logprobs: Map<number, number>[]): StepReadings {
  return {
    step: 1,
    method: 'naive-full',
    objective: 'rl',
    lr: 1e-3,
    taskLoss: 0.5,
    divergingLeaves: 2,
    targets: 8,
    tokens: 17,
    nPacked: 21,
    nFinal: 8,
    gradNorm: 1,
    stepMs: 3,
    lambda: 0,
    meanKl: 0,
    pairs: 0,
    rollouts,
    logprobs,
    live: null,
  };
}

describe('stepFigures', () => {
  it("carries verl's rollout_corr figures of the step's targets, one sequence per rollout; slime's abs diff is logdiff", () => {
    const reference = rolloutLogprobs(worked);
    const scores = new Map([...reference].map(([id, l]) => [id, l - 0.1 * (id % 3)]));
    const m = stepFigures(readings([worked, worked], [scores, scores]));
    const pairs = { train: [...scores.values()], rollout: [...scores.keys()].map((id) => reference.get(id)!) };
    expect(m.rollout_corr).toEqual(mismatchFigures([pairs, pairs]));
    expect(m.rollout_corr!.sequences).toBe(2);
    expect(m.rollout_corr!.train_rollout_logprob_abs_diff).toBeCloseTo(m.logdiff!, 12);
    expect(m.rollout_corr!.kl).toBeCloseTo(-m.mu!, 12);
  });

  it('has none when no trained target has a rollout logprob', () => {
    const m = stepFigures(readings([worked], [new Map()]));
    expect(m.rollout_corr).toBeNull();
    expect(m.logdiff).toBeNull();
  });
});
