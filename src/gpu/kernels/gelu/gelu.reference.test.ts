// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { geluBackwardRef, geluRef } from './gelu.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

describe('geluRef', () => {
  it('matches the tanh form at known points', () => {
    // Values from Python: 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))).
    const want = [0.8411919906082768, -0.15880800939172324, 0.34571400982514394, 2.996362607918227, -0.0036373920817729943, 0];
    expectClose(geluRef([1, -1, 0.5, 3, -3, 0]), want, { abs: 1e-15, label: 'gelu' });
  });

  it('backward matches finite differences', () => {
    const rng = createRng(1);
    const x = randomNormal(rng, 13, 2);
    const g = randomNormal(rng, 13);
    const numeric = finiteDifference((xx) => dot(geluRef(xx), g), x);
    expectClose(geluBackwardRef(x, g), numeric, { ...FD, label: 'dgelu' });
  });
});
