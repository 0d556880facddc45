// The reach tally and its lines in `mw drift`'s table: how many targets each method could not score, and the window.

import { describe, expect, it } from 'vitest';
import { createReachTally, reachLines } from './reach';

describe('reach lines', () => {
  it('count per method the targets beyond the model, and say when the drift is windowed', () => {
    const tally = createReachTally({ positions: 1024 });
    tally.add('naive-full', 3462, { outOfReach: Array.from({ length: 412 }, (_, i) => i), windowed: [] });
    tally.add('logit-tree', 3874, { outOfReach: [], windowed: [] });
    expect(tally.report()).toEqual({
      positions: 1024,
      window: null,
      methods: { 'naive-full': { targets: 3874, outOfReach: 412, windowed: 0 }, 'logit-tree': { targets: 3874, outOfReach: 0, windowed: 0 } },
    });
    expect(reachLines(tally.report())).toEqual(['naive-full: 412 of 3,874 targets need more than 1,024 positions (not scored; --window N scores them)']);

    const windowed = createReachTally({ positions: 1024, window: 512 });
    windowed.add('logit-tree', 2000, { outOfReach: [], windowed: [1, 2, 3] });
    windowed.add('logit-tree', 1000, { outOfReach: [], windowed: [4] });
    expect(reachLines(windowed.report())).toEqual([
      'windowed: the drift is windowed; a target whose context exceeds 511 tokens is scored on its last 511, at positions from 0 (logit-tree 4 of 3,000)',
    ]);
  });
});
