// The block mask lists exactly the tile pairs holding a visible pair (checked by brute force over
// arbitrary end[] arrays), in ascending order, with the two lists each other's transpose.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { attentionTiles } from './attention-tiles';
import { maskLayout, maskWords } from './attention';
import { causalEnd, maskDensity, packEnds, randomTreeEnd } from './attention-test-masks';
import { visible } from './attention.reference';
import { createRng } from '../../../util/prng';

function bruteForce(end: ArrayLike<number>, BQ: number, BK: number) {
  const N = end.length;
  const byQuery: number[][] = Array.from({ length: Math.ceil(N / BQ) }, () => []);
  let visiblePairs = 0;
  for (let qt = 0; qt < byQuery.length; qt++) {
    for (let kt = 0; kt < Math.ceil(N / BK); kt++) {
      let any = false;
      for (let i = qt * BQ; i < Math.min(N, (qt + 1) * BQ); i++) {
        for (let k = kt * BK; k < Math.min(N, (kt + 1) * BK); k++) {
          if (visible(end, i, k)) {
            any = true;
            visiblePairs++;
          }
        }
      }
      if (any) byQuery[qt].push(kt);
    }
  }
  return { byQuery, visiblePairs };
}

function rows(lists: { offsets: Uint32Array; tiles: Uint32Array }): number[][] {
  return Array.from({ length: lists.offsets.length - 1 }, (_, r) => Array.from(lists.tiles.subarray(lists.offsets[r], lists.offsets[r + 1])));
}

const endArray = fc.integer({ min: 1, max: 70 }).chain((N) => fc.array(fc.integer({ min: 0, max: N }), { minLength: N, maxLength: N }));

describe('attentionTiles', () => {
  it('lists exactly the tile pairs with a visible pair, for any end[] and tile sizes', () => {
    fc.assert(
      fc.property(endArray, fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), (end, BQ, BK) => {
        const tiles = attentionTiles(end, BQ, BK);
        const want = bruteForce(end, BQ, BK);
        expect(rows(tiles.keyTilesOfQueryTile)).toEqual(want.byQuery);
        const byKey: number[][] = Array.from({ length: tiles.keyTiles }, () => []);
        want.byQuery.forEach((kts, qt) => kts.forEach((kt) => byKey[kt].push(qt)));
        expect(rows(tiles.queryTilesOfKeyTile)).toEqual(byKey);
        expect(tiles.pairs).toBe(want.byQuery.flat().length);
        expect(tiles.visiblePairs).toBe(want.visiblePairs);
      }),
      { numRuns: 300 },
    );
  });

  it('causal tiles form the lower triangle; a sparse tree skips most of it', () => {
    const causal = attentionTiles(causalEnd(100), 16, 16); // 7 tiles
    expect(causal.pairs).toBe((7 * 8) / 2);
    expect(causal.visiblePairs).toBe((100 * 101) / 2);
    const tree = attentionTiles(randomTreeEnd(createRng(1), 2048, 0.02), 16, 16);
    const causalPairs = (128 * 129) / 2;
    expect(tree.pairs).toBeLessThan(causalPairs / 3);
  });

  it('rejects end values outside [0, N] and non-positive tiles', () => {
    expect(() => attentionTiles([1, 3], 4, 4)).toThrow('end[1] = 3');
    expect(() => attentionTiles([1], 0, 4)).toThrow('BQ');
  });

  it('packs end[] and both lists into one mask buffer at the layout offsets', () => {
    const end = packEnds([causalEnd(5), randomTreeEnd(createRng(2), 9, 0.3)]);
    const tiles = attentionTiles(end, 4, 3);
    const layout = maskLayout(tiles);
    const words = maskWords(end, tiles);
    expect(words.length).toBe(layout.length);
    expect(Array.from(words.subarray(0, end.length))).toEqual(Array.from(end));
    expect(Array.from(words.subarray(layout.keyTilesOffsets, layout.keyTiles))).toEqual(Array.from(tiles.keyTilesOfQueryTile.offsets));
    expect(Array.from(words.subarray(layout.queryTiles))).toEqual(Array.from(tiles.queryTilesOfKeyTile.tiles));
  });
});

describe('attention test masks', () => {
  it('a random tree lets each query see exactly its root-to-node path', () => {
    const rng = createRng(7);
    for (const fork of [0.05, 0.3, 0.9]) {
      const end = randomTreeEnd(rng, 200, fork);
      // Subtrees nest: for k < j < end[k], end[j] <= end[k]; so the visible keys of i are a chain.
      for (let k = 0; k < end.length; k++) {
        expect(end[k]).toBeGreaterThan(k);
        for (let j = k + 1; j < end[k]; j++) expect(end[j]).toBeLessThanOrEqual(end[k]);
      }
      expect(end[0]).toBe(200); // one root
    }
    expect(maskDensity(randomTreeEnd(createRng(8), 500, 0.9))).toBeLessThan(0.2 * maskDensity(causalEnd(500)));
  });

  it('block-diagonal packing hides every block from the others', () => {
    const end = packEnds([causalEnd(3), causalEnd(2)]);
    expect(Array.from(end)).toEqual([3, 3, 3, 5, 5]);
    expect(visible(end, 3, 2)).toBe(false);
    expect(visible(end, 4, 3)).toBe(true);
  });
});
