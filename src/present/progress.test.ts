// The one duration format and progress printer of the app, the CLI and the experiment reports.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress, duration, everyTenth } from './progress';

describe('duration and progress', () => {
  afterEach(() => void vi.useRealTimers());

  it('writes durations as 42s, 3m05s, 1h02m', () => {
    expect([0.4, 42, 59.6, 185, 3599, 3720, 90_000, Number.NaN].map(duration)).toEqual(['0s', '42s', '1m00s', '3m05s', '59m59s', '1h02m', '25h00m', '?']);
  });

  it('on a terminal rewrites one line in place, ending it with the last; off one writes due lines and the last', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const tty: string[] = [];
    const onTty = createProgress((t) => void tty.push(t), { tty: true });
    vi.advanceTimersByTime(2000);
    onTty(1, 4, ({ rate, eta }) => `${rate.toFixed(2)}/s ETA ${eta}`);
    vi.advanceTimersByTime(6000);
    onTty(4, 4, ({ elapsed }) => `done in ${duration(elapsed)}`);
    expect(tty).toEqual(['\r0.50/s ETA 6s\x1b[K', '\rdone in 8s\x1b[K\n']);

    const off: string[] = [];
    const lines = createProgress((t) => void off.push(t), { tty: false, due: everyTenth });
    for (let done = 1; done <= 25; done++) lines(done, 25, ({ done: d }) => `${d}`);
    expect(off).toEqual(['3\n', '6\n', '9\n', '12\n', '15\n', '18\n', '21\n', '24\n', '25\n']);

    const timed: string[] = [];
    const every5s = createProgress((t) => void timed.push(t), { tty: false });
    for (let second = 1; second <= 12; second++) {
      vi.advanceTimersByTime(1000);
      every5s(second, 12, ({ done }) => `${done}`);
    }
    expect(timed).toEqual(['1\n', '6\n', '11\n', '12\n']);
  });
});
