// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { logsoftmaxGatherBackwardRef, logsoftmaxGatherRef } from './logsoftmax.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

describe('logsoftmaxGatherRef', () => {
  it('equals log(softmax) at the gathered tokens and its exp sums to 1 over the vocabulary', () => {
    const rng = createRng(11);
    const [M, V] = [3, 5];
    const logits = randomNormal(rng, M * V, 4);
    const rows = [0, 2, 2, 1];
    const tokens = [4, 0, 3, 1];
    const got = logsoftmaxGatherRef(logits, V, rows, tokens);
    rows.forEach((r, j) => {
      const row = Array.from(logits.subarray(r * V, (r + 1) * V));
      const z = row.reduce((a, b) => a + Math.exp(b), 0);
      expect(Math.abs(got[j] - Math.log(Math.exp(row[tokens[j]]) / z))).toBeLessThan(1e-14);
    });
    const all = logsoftmaxGatherRef(logits, V, [1, 1, 1, 1, 1], [0, 1, 2, 3, 4]);
    expect(Math.abs(all.reduce((a, b) => a + Math.exp(b), 0) - 1)).toBeLessThan(1e-14);
  });

  it('is stable for huge logits', () => {
    const got = logsoftmaxGatherRef([1000, 1000, -1000], 3, [0], [0]);
    // 1000 - (1000 + ln 2): the subtraction costs ~10 bits, so 1e-12 rather than 1e-15.
    expect(Math.abs(got[0] + Math.LN2)).toBeLessThan(1e-12);
  });

  it('backward (rows scored twice) matches finite differences', () => {
    const rng = createRng(12);
    const [M, V] = [3, 5];
    const logits = randomNormal(rng, M * V, 2);
    const rows = [0, 2, 2, 1];
    const tokens = [4, 0, 3, 1];
    const g = randomNormal(rng, rows.length);
    const got = logsoftmaxGatherBackwardRef(logits, V, M, rows, tokens, g);
    const numeric = finiteDifference((v) => dot(logsoftmaxGatherRef(v, V, rows, tokens), g), logits);
    expectClose(got, numeric, { ...FD, label: 'dlogits' });
  });
});
