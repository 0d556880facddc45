import { describe, expect, it } from 'vitest';
import { summarizeProfile, type CpuProfile } from './_cpuProfile';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });

// (root) -> draw -> text; (root) -> (idle); (root) -> fib -> fib (recursion); (root) -> (program)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5, 7] },
    { id: 2, callFrame: frame('draw', 'http://127.0.0.1/assets/index-abc.js', 9), children: [3] },
    { id: 3, callFrame: frame('text', 'http://127.0.0.1/assets/index-abc.js', 19) },
    { id: 4, callFrame: frame('(idle)') },
    { id: 5, callFrame: frame('fib'), children: [6] },
    { id: 6, callFrame: frame('fib') },
    { id: 7, callFrame: frame('(program)') },
  ],
  startTime: 0,
  endTime: 100,
  // Each sample lasts until the next one: the deltas after it.
  samples: [2, 3, 3, 4, 4, 6, 7, 2],
  timeDeltas: [0, 1000, 2000, 3000, 40000, 5000, 6000, 7000],
};

describe('summarizeProfile', () => {
  it('splits busy from idle time and counts self and total time per function, recursion once', () => {
    const summary = summarizeProfile(profile);
    expect(summary.spanMs).toBeCloseTo(64);
    expect(summary.idleMs).toBeCloseTo(45);
    expect(summary.busyMs).toBeCloseTo(19);
    const by = new Map(summary.functions.map((f) => [f.key, f]));
    expect(by.get('text (index-abc.js:20)')).toEqual({ key: 'text (index-abc.js:20)', selfMs: 5, totalMs: 5 });
    // draw: its own sample (1 ms) and its callee's two (2 + 3 ms); its last sample has no delta after it.
    expect(by.get('draw (index-abc.js:10)')).toEqual({ key: 'draw (index-abc.js:10)', selfMs: 1, totalMs: 6 });
    expect(by.get('fib')).toEqual({ key: 'fib', selfMs: 6, totalMs: 6 });
    expect(by.get('(program)')).toEqual({ key: '(program)', selfMs: 7, totalMs: 7 });
    expect(by.has('(idle)')).toBe(false);
    expect(by.has('(root)')).toBe(false);
  });

  it('names positions through the locator when it knows them', () => {
    const summary = summarizeProfile(profile, (_url, line) => (line === 9 ? `src/app/views/draw.ts:${line * 10}` : null));
    expect(summary.functions.map((f) => f.key)).toContain('draw (src/app/views/draw.ts:90)');
    expect(summary.functions.map((f) => f.key)).toContain('text (index-abc.js:20)');
  });
});
