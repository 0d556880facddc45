// The run controller's parts without a GPU: the rates it reports, the history kept with a checkpoint,
// and the live view's throttle (at most one update per interval, always the newest state).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { postLive, clearLive } from './controller-live';
import { progress, rateWindow } from './controller-loop';
import { atCheckpoint } from './controller-persistence';
import { createControllerState, type LiveEvent, type RunEvent } from './controller-state';
import type { LaneCheckpoint, MetricRecord } from './engine';

describe('run controller parts', () => {
  afterEach(() => void vi.useRealTimers());

  it('rates come from the recent steps: steps/s, tokens/s (the first step only opens the window) and the time left', () => {
    const recent = [
      { at: 0, tokens: 999 },
      { at: 1000, tokens: 100 },
      { at: 2000, tokens: 300 },
    ];
    expect(progress(4, 10, recent)).toEqual({ step: 4, total: 10, stepsPerSec: 1, tokensPerSec: 200, etaSec: 6 });
    expect(progress(4, 0, recent).etaSec).toBeNull();
    expect(progress(1, 10, recent.slice(0, 1))).toEqual({ step: 1, total: 10, stepsPerSec: 0, tokensPerSec: 0, etaSec: null });
  });

  it('the ETA holds steady across evaluations: the rate window always spans two evaluation periods', () => {
    expect(rateWindow(0)).toBe(12);
    expect(rateWindow(5)).toBe(12);
    expect(rateWindow(20)).toBe(41);
    // Steps of 1 s with an evaluation of 10 s every 20 steps: over the window the ETA moves by under 15%
    // from step to step; over the old 12-step window it nearly doubled when the evaluation entered.
    const times: number[] = [0];
    for (let step = 1; step <= 120; step++) times.push(times[step - 1] + 1000 + (step % 20 === 0 ? 10_000 : 0));
    const eta = (step: number, window: number) => {
      const recent = times.slice(Math.max(0, step - window + 1), step + 1).map((at) => ({ at, tokens: 0 }));
      return progress(step, 200, recent).etaSec!;
    };
    const oldJump = eta(60, 12) / eta(59, 12);
    expect(oldJump).toBeGreaterThan(1.8);
    for (let step = 60; step < 120; step++) {
      const ratio = eta(step + 1, rateWindow(20)) / eta(step, rateWindow(20));
      expect(ratio, `step ${step}`).toBeGreaterThan(0.85);
      expect(ratio, `step ${step}`).toBeLessThan(1.15);
    }
  });

  it('a checkpoint is at its slowest lane, and keeps each lane history up to its own step', () => {
    const lanes = [
      { method: 'packed-4d', step: 4 },
      { method: 'naive-compressed', step: 3 },
    ] as LaneCheckpoint[];
    const history = [1, 2, 3, 4, 5].flatMap((step) => ['packed-4d', 'naive-compressed'].map((method) => ({ method, step }))) as MetricRecord[];
    const kept = atCheckpoint(lanes, history);
    expect(kept.step).toBe(3);
    expect(kept.history.map((r) => `${r.method}@${r.step}`)).toEqual([
      'packed-4d@1',
      'naive-compressed@1',
      'packed-4d@2',
      'naive-compressed@2',
      'packed-4d@3',
      'naive-compressed@3',
      'packed-4d@4',
    ]);
    expect(atCheckpoint([], history)).toEqual({ step: 0, history: [] });
  });

  it('live updates: the first at once, then at most one per interval, carrying the newest state', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const sent: RunEvent[] = [];
    const run = createControllerState({
      createGpu: async () => Promise.reject(new Error('no device')),
      store: undefined!,
      emit: (e) => void sent.push(e),
      liveIntervalMs: 100,
    });
    const events: LiveEvent['events'] = [];
    const live = (done: boolean): LiveEvent => ({ type: 'live', player: 'expert', purpose: 'train', step: 1, index: 0, total: 2, id: 'r0', events, done });
    events.push({ type: 'text', text: 'a' } as never);
    postLive(run, live(false));
    expect(sent).toHaveLength(1);
    events.push({ type: 'text', text: 'b' } as never);
    postLive(run, live(false));
    events.push({ type: 'text', text: 'c' } as never);
    postLive(run, live(false));
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(100);
    // One update for the two posts, with the three events then played (a copy: the episode's array keeps growing).
    expect(sent).toHaveLength(2);
    const second = sent[1] as LiveEvent;
    expect(second.events).toHaveLength(3);
    expect(second.events).not.toBe(events);
    postLive(run, live(true));
    clearLive(run);
    vi.advanceTimersByTime(1000);
    expect(sent).toHaveLength(2);
  });
});
