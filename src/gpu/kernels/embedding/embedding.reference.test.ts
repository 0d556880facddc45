// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { embeddingBackwardRef, embeddingRef } from './embedding.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

describe('embeddingRef', () => {
  it('adds the token row and the position row', () => {
    const C = 2;
    const wte = [0, 1, 10, 11, 20, 21]; // V = 3
    const wpe = [100, 200, 300, 400]; // P = 2
    const out = embeddingRef([2, 0, 2], [0, 1, 1], wte, wpe, C);
    expect(Array.from(out)).toEqual([120, 221, 300, 401, 320, 421]);
  });

  it('backward accumulates repeated tokens and positions (matches finite differences)', () => {
    const rng = createRng(6);
    const [V, P, C] = [5, 4, 3];
    const tokens = [1, 4, 1, 0, 1];
    const positions = [0, 1, 2, 1, 3];
    const wte = randomNormal(rng, V * C);
    const wpe = randomNormal(rng, P * C);
    const g = randomNormal(rng, tokens.length * C);
    const { dwte, dwpe } = embeddingBackwardRef(tokens, positions, g, V, P, C);
    expectClose(
      dwte,
      finiteDifference((v) => dot(embeddingRef(tokens, positions, v, wpe, C), g), wte),
      { ...FD, label: 'dwte' },
    );
    expectClose(
      dwpe,
      finiteDifference((v) => dot(embeddingRef(tokens, positions, wte, v, C), g), wpe),
      { ...FD, label: 'dwpe' },
    );
  });
});
