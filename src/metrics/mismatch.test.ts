// verl's and slime's mismatch figures against values worked out by hand, and their fixed points.
import { describe, expect, it } from 'vitest';
import { createMismatchAccumulator, mismatchFigures, tokenPairs } from './mismatch';

describe('mismatchFigures', () => {
  it('equal log-probabilities: no mismatch (kl 0, k3 0, χ² 0, ratio 1, every weight counts)', () => {
    const f = mismatchFigures([
      { train: [-1, -2], rollout: [-1, -2] },
      { train: [-0.5], rollout: [-0.5] },
    ])!;
    expect(f).toMatchObject({ sequences: 2, tokens: 3, kl: 0, k3_kl: 0, chi2_token: 0, chi2_seq: 0, ppl_ratio: 1, log_ppl_diff: 0 });
    expect(f.rollout_is_eff_sample_size).toBeCloseTo(1, 12);
    expect(f.training_ppl).toBeCloseTo((Math.exp(1.5) + Math.exp(0.5)) / 2, 12);
    expect(f.training_log_ppl).toBeCloseTo(1, 12);
  });

  it('a worked case: two sequences, log-ratios +ln 2, 0 | −ln 2', () => {
    const ln2 = Math.log(2);
    const f = mismatchFigures([
      { train: [-1 + ln2, -1], rollout: [-1, -1] },
      { train: [-2 - ln2], rollout: [-2] },
    ])!;
    // Token log-ratios r = ℓ_train − ℓ_rollout: ln 2, 0, −ln 2; weights ρ: 2, 1, 1/2.
    expect(f.kl).toBeCloseTo(0, 12); // mean(−r)
    expect(f.k3_kl).toBeCloseTo((2 - ln2 - 1 + 0 + 0.5 + ln2 - 1) / 3, 12);
    expect(f.chi2_token).toBeCloseTo((4 + 1 + 0.25) / 3 - 1, 12);
    // Sequences: Π ρ = 2 and 1/2.
    expect(f.chi2_seq).toBeCloseTo((4 + 0.25) / 2 - 1, 12);
    // Per sequence mean ℓ_rollout − mean ℓ_train: −ln2/2 and +ln 2.
    expect(f.log_ppl_diff).toBeCloseTo((-ln2 / 2 + ln2) / 2, 12);
    expect(f.log_ppl_abs_diff).toBeCloseTo((ln2 / 2 + ln2) / 2, 12);
    expect(f.log_ppl_diff_max).toBeCloseTo(ln2, 12);
    expect(f.log_ppl_diff_min).toBeCloseTo(-ln2 / 2, 12);
    expect(f.ppl_ratio).toBeCloseTo((Math.exp(-ln2 / 2) + 2) / 2, 12);
    const mean = (2 + 1 + 0.5) / 3;
    expect(f.rollout_is_eff_sample_size).toBeCloseTo((mean * mean) / ((4 + 1 + 0.25) / 3), 12);
    expect(f.train_rollout_logprob_abs_diff).toBeCloseTo((2 * ln2) / 3, 12);
    expect(f.rollout_log_ppl).toBeCloseTo((1 + 2) / 2, 12);
  });

  it('k3 is never negative and χ² stays finite for a catastrophic token (weights clamped at e^±20)', () => {
    const f = mismatchFigures([{ train: [-0.01, -300], rollout: [-200, -0.01] }])!;
    expect(f.k3_kl).toBeGreaterThan(0);
    expect(Number.isFinite(f.chi2_token)).toBe(true);
    expect(f.chi2_token).toBeCloseTo((Math.exp(40) + Math.exp(-40)) / 2 - 1, -10);
    expect(f.chi2_seq).toBeCloseTo(Math.exp(-40) - 1, 12); // Σ r = 200 − 300 clamps to −20
  });

  it('skips rollouts without pairs and says null when nothing is left', () => {
    expect(mismatchFigures([])).toBeNull();
    expect(mismatchFigures([{ train: [], rollout: [] }])).toBeNull();
    expect(
      mismatchFigures([
        { train: [], rollout: [] },
        { train: [-1], rollout: [-1] },
      ])!.sequences,
    ).toBe(1);
    expect(() => mismatchFigures([{ train: [-1], rollout: [] }])).toThrow(/lengths differ/);
  });

  it('built one sequence at a time, equals the figures of the whole set (what mw drift and the training steps stream)', () => {
    const sequences = [
      { train: [-0.2, -1.3, -0.05], rollout: [-0.25, -1.1, -0.05] },
      { train: [], rollout: [] },
      { train: [-2.5], rollout: [-0.7] },
      { train: [-0.01, -0.4], rollout: [-0.02, -0.9] },
    ];
    const acc = createMismatchAccumulator();
    for (const s of sequences) acc.add(s.train, s.rollout);
    expect(acc.figures()).toEqual(mismatchFigures(sequences));
    expect(acc.figures()!.sequences).toBe(3);
    expect(createMismatchAccumulator().figures()).toBeNull();
  });
});

describe('tokenPairs', () => {
  it("pairs the targets both score, in the method's order, and skips targets without a rollout logprob", () => {
    const method = new Map([
      [7, -0.5],
      [3, -1],
      [9, -2],
    ]);
    const rollout = new Map([
      [3, -0.75],
      [7, -0.25],
    ]);
    expect(tokenPairs(method, rollout)).toEqual({ train: [-0.5, -1], rollout: [-0.25, -0.75] });
  });
});
