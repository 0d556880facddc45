import { describe, expect, it } from 'vitest';
import { steppedTarget } from './viewSlice';

const targets = Int32Array.from([2, 3, 7, 8, 13, 14, 15, 16]);

describe('stepping through targets', () => {
  it('moves by delta and clamps at both ends', () => {
    expect(steppedTarget(targets, 13, 1)).toBe(14);
    expect(steppedTarget(targets, 13, -3)).toBe(3);
    expect(steppedTarget(targets, 16, 1)).toBe(16);
    expect(steppedTarget(targets, 2, -1)).toBe(2);
  });
  it('starts at the first or last target when nothing is selected', () => {
    expect(steppedTarget(targets, null, 1)).toBe(2);
    expect(steppedTarget(targets, null, -1)).toBe(16);
    expect(steppedTarget(new Int32Array(0), null, 1)).toBeNull();
  });
  it('steps from the nearest target when the selection is not one', () => {
    expect(steppedTarget(targets, 10, 1)).toBe(13);
    expect(steppedTarget(targets, 10, -1)).toBe(8);
  });
});
