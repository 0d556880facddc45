// A lane's step, built on the CPU without a GPU: the worked example's rows, targets and SDCC pairs
// under every method, RL's advantages and the advantage gate, what a small model leaves out and
// why, and each tree's plan built once for the fit check and the layout together.
import { describe, expect, it, vi } from 'vitest';
import { buildPlan } from '../plan/build';
import { fitRollouts } from '../plan/needs';
import { validateRollout } from '../rollout/validate';
import { readFixture, WORKED_EXAMPLE_FIGURES, workedExample } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import { planStep } from './step';

vi.mock('../plan/build', async (original) => {
  const actual = await original<typeof import('../plan/build')>();
  return { ...actual, buildPlan: vi.fn(actual.buildPlan) };
});

const worked = workedExample();
const grouped = (id: string, reward: number) =>
  validateRollout({ ...JSON.parse(readFixture('worked-example.json')), id, reward, group: 'g' }, { file: `${id}.json` });

describe('planStep on the worked example (docs/tree.md)', () => {
  it('lays out each method: rows, targets and their 1/T weights', () => {
    const figures = (method: Parameters<typeof planStep>[1]['method']) => {
      const s = planStep([worked], { method, objective: 'sft' });
      return {
        rows: s.layout.batch.tokens.length,
        targets: s.targets.length,
        weight: s.targets[0].weight,
        live: s.layout.live?.tokens.length ?? null,
        exact: s.layout.exact,
      };
    };
    // naive-compressed: the final walk (8 rows), its 4 targets whose prefix survives; the drift batch is the packed tree.
    expect(figures('naive-compressed')).toEqual({ rows: 8, targets: 4, weight: 0.25, live: WORKED_EXAMPLE_FIGURES.packedLength, exact: false });
    expect(figures('naive-full')).toEqual({ rows: WORKED_EXAMPLE_FIGURES.physicalLength, targets: 8, weight: 0.125, live: 21, exact: false });
    expect(figures('logit-tree')).toEqual({ rows: 27, targets: 8, weight: 0.125, live: null, exact: true });
    expect(figures('packed-4d')).toEqual({ rows: WORKED_EXAMPLE_FIGURES.packedLength, targets: 8, weight: 0.125, live: null, exact: true });
  });

  it("SDCC: the student's 8 rows, 6 teacher-only rows after them, and a KL pair per diverging leaf", () => {
    const s = planStep([worked], { method: 'sdcc', objective: 'sft' });
    expect(s.layout.batch.tokens.length).toBe(WORKED_EXAMPLE_FIGURES.finalWalkLength);
    expect(s.layout.sdcc!.tokens.length).toBe(14);
    expect(s.targets.length).toBe(4);
    expect(s.lambda).toBe(0.1);
    expect(s.layout.pairs).toEqual([
      { rollout: 0, studentRow: 3, teacherRow: 11 },
      { rollout: 0, studentRow: 4, teacherRow: 12 },
    ]);
    expect(s.klPairs).toEqual(s.layout.pairs);
    expect(s.layout.divergingLeaves).toBe(WORKED_EXAMPLE_FIGURES.divergingLeaves);
    // Branch teachers: their own batch of 10 rows, the leaves at rows 7 and 8 of it.
    const branches = planStep([worked], { method: 'sdcc', objective: 'sft', sdccTeacher: 'logit-tree' });
    expect(branches.layout.teacher!.tokens.length).toBe(10);
    expect(branches.layout.pairs.map((p) => p.teacherRow)).toEqual([7, 8]);
  });

  it("RL: GRPO's advantages (±1 for rewards 1 and 0 in one group), the rollout's logprobs, and the advantage gate", () => {
    const rl = planStep([grouped('a', 1), grouped('b', 0)], { method: 'sdcc', objective: 'rl', sdccGate: 'advantage' });
    expect(rl.tokenObjective).toEqual({ kind: 'ppo', epsilon: undefined, klCoef: 0 });
    expect(rl.targets.map((t) => [t.row, t.advantage, t.rolloutLogprob])).toEqual([
      [3, 1, -0.75],
      [4, 1, -1],
      [5, 1, -0.5],
      [6, 1, -0.125],
      [11, -1, -0.75],
      [12, -1, -1],
      [13, -1, -0.5],
      [14, -1, -0.125],
    ]);
    expect(rl.klPairs.length).toBe(4);
    // Equal rewards: no advantage, so the gate keeps no pair (the layout still holds the 4).
    const flat = planStep([grouped('a', 1), grouped('b', 1)], { method: 'sdcc', objective: 'rl', sdccGate: 'advantage' });
    expect(flat.klPairs).toEqual([]);
    expect(flat.layout.pairs.length).toBe(4);
  });

  it('refuses an empty batch and a reference KL under SFT', () => {
    expect(() => planStep([], { method: 'packed-4d', objective: 'sft' })).toThrow('trainStep: an empty batch');
    expect(() => planStep([worked], { method: 'packed-4d', objective: 'sft', klCoef: 0.5 })).toThrow('needs objective rl');
  });
});

describe('a lane step from a fitted batch', () => {
  it('leaves out what does not fit, with why, and builds each plan once', () => {
    const trees = [deriveTree(worked)];
    vi.mocked(buildPlan).mockClear();
    const fitted = fitRollouts({ rollouts: [worked], trees }, ['naive-full', 'packed-4d'], 16);
    expect(fitted.trained).toEqual([]);
    expect(fitted.leftOut).toEqual([{ id: 'worked-example', reason: 'naive-full needs 17 positions, the model has 16' }]);

    vi.mocked(buildPlan).mockClear();
    const sdcc = fitRollouts({ rollouts: [worked], trees }, ['sdcc'], 16);
    const step = planStep(sdcc, { method: 'sdcc', objective: 'sft' });
    expect(step.rollouts).toEqual([worked]);
    expect(step.leftOut).toEqual([]);
    expect(step.layout.sdcc!.tokens.length).toBe(14);
    // One SDCC plan for the fit check and the layout (drift off: SDCC measures it from its teacher rows).
    expect(vi.mocked(buildPlan).mock.calls.map((c) => c[1])).toEqual(['sdcc']);
  });
});
