import { describe, expect, it } from 'vitest';
import { axisEnd, PREFIX_STATE as S, prefixStateRuns } from './prefixStates';

const live = [0, 1, 9, 10, 7, 8, 11, 12];

describe('prefix states of target 13 (worked example)', () => {
  it('naive-compressed: 7, 8, 11, 12 are missing', () => {
    expect(Array.from(prefixStateRuns(live, [0, 1, 9, 10], 13))).toEqual([0, 2, S.shared, 7, 9, S.missing, 9, 11, S.shared, 11, 13, S.missing]);
  });
  it('naive-full: 2..6 are stale', () => {
    const full = Array.from({ length: 13 }, (_, i) => i);
    expect(Array.from(prefixStateRuns(live, full, 13))).toEqual([0, 2, S.shared, 2, 7, S.stale, 7, 13, S.shared]);
  });
  it('not scored: everything live is missing', () => {
    expect(Array.from(prefixStateRuns([0, 1], null, 2))).toEqual([0, 2, S.missing]);
  });
});

describe('a summary written after the target (time-travel)', () => {
  it('extends the axis and marks the later ids as future', () => {
    const compressed = [0, 1, 20, 21];
    const end = axisEnd(5, [compressed, null]);
    expect(end).toBe(22);
    expect(Array.from(prefixStateRuns([0, 1, 2, 3, 4], compressed, 5, end))).toEqual([0, 2, S.shared, 2, 5, S.missing, 20, 22, S.future]);
  });
});
