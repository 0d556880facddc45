import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventJson, RolloutJson } from '../../rollout/format';
import type { ShowOptions } from '../store/types';
import type { SourceRef } from '../url/schema';
import { createLiveFollower, LIVE_SOURCE, MIN_INTERVAL_MS, PERSIST_INTERVAL_MS } from './liveView';

const prompt: EventJson = { op: 'append', role: 'prompt', tokens: [1, 2, 3] };
const act = (n: number): EventJson => ({ op: 'append', role: 'act', tokens: Array.from({ length: n }, (_, i) => 10 + i), logprobs: Array(n).fill(-1) });
const obs: EventJson = { op: 'append', role: 'obs', tokens: [4, 5] };

/** The store as the follower sees it: what it shows, and what was kept in IndexedDB. */
function host() {
  const shown: { json: RolloutJson; source: SourceRef; options: ShowOptions }[] = [];
  const saved: RolloutJson[] = [];
  const state = {
    view: null as { rollout: { id: string } } | null,
    selectedTarget: null as number | null,
    source: null as SourceRef | null,
    showRollout(json: RolloutJson, source: SourceRef, options: ShowOptions = {}) {
      shown.push({ json: structuredClone(json), source, options });
      state.view = { rollout: { id: json.id } };
      state.source = source;
      return true;
    },
  };
  const follower = createLiveFollower(
    () => state as never,
    async (json) => {
      saved.push(structuredClone(json));
    },
  );
  return { state, shown, saved, follower };
}

describe('following the live episode in the views', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('updates on structure (actions, observations, a new episode), not on tokens, at most once per interval, the newest state winning', () => {
    const { shown, follower } = host();
    const events: EventJson[] = [prompt];
    follower.follow('e0', events, false);
    vi.advanceTimersByTime(0);
    expect(shown).toHaveLength(0); // no action yet: nothing to inspect
    events.push(act(1));
    follower.follow('e0', [...events], false);
    vi.advanceTimersByTime(0);
    expect(shown).toHaveLength(1);
    expect(shown[0].source).toEqual(LIVE_SOURCE);
    expect(shown[0].options.persist).toBe(false);
    // Tokens of the action being decoded: the event count stays, the views do not update.
    for (let n = 2; n <= 8; n++) {
      events[1] = act(n);
      follower.follow('e0', [...events], false);
    }
    vi.advanceTimersByTime(5 * MIN_INTERVAL_MS);
    expect(shown).toHaveLength(1);
    // Three structural changes within one interval: one update, with the last of them.
    events.push(obs);
    follower.follow('e0', [...events], false);
    events.push(act(3));
    follower.follow('e0', [...events], false);
    follower.follow('e0', [...events], true);
    vi.advanceTimersByTime(0);
    expect(shown).toHaveLength(2);
    follower.follow('e1', [prompt, act(2)], false);
    vi.advanceTimersByTime(MIN_INTERVAL_MS - 1);
    expect(shown).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(shown.map((s) => [s.json.id, s.json.events.length])).toEqual([
      ['e0', 2],
      ['e0', 4],
      ['e1', 2],
    ]);
  });

  it('counts the interval from when an update was shown: a slow derive does not bring the next one closer', () => {
    // The page's clock: the fake timers' time plus what deriving the rollouts cost (400 ms each).
    let derived = 0;
    const now = () => Date.now() + derived;
    const shown: number[] = [];
    const state = {
      view: null,
      selectedTarget: null,
      source: null,
      showRollout() {
        derived += 400;
        shown.push(now());
        return true;
      },
    };
    const follower = createLiveFollower(
      () => state as never,
      async () => {},
      now,
    );
    follower.follow('e0', [prompt, act(1)], false);
    vi.advanceTimersByTime(0);
    follower.follow('e0', [prompt, act(1), obs], false);
    vi.advanceTimersByTime(MIN_INTERVAL_MS - 1);
    expect(shown).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(shown).toHaveLength(2);
    expect(shown[1] - shown[0]).toBeGreaterThanOrEqual(MIN_INTERVAL_MS);
  });

  it('keeps the shown episode in IndexedDB at most once per persist interval, the newest state within that time', () => {
    const { shown, saved, follower } = host();
    // A minute of episodes, a structural change every 250 ms.
    let events: EventJson[] = [];
    for (let t = 0, e = 0; t < 60_000; t += 250) {
      if (t % 3000 === 0) {
        e++;
        events = [prompt];
      }
      events = [...events, events.length % 2 ? act(4) : obs];
      follower.follow(`e${e}`, events, false);
      vi.advanceTimersByTime(250);
    }
    expect(shown.length).toBeGreaterThanOrEqual(55);
    expect(shown.length).toBeLessThanOrEqual(61);
    // The first update at once (a reload right after the start finds it), then one per interval.
    expect(saved.length).toBeGreaterThanOrEqual(6);
    expect(saved.length).toBeLessThanOrEqual(60_000 / PERSIST_INTERVAL_MS + 1);
    expect(saved[0]).toEqual(shown[0].json);
    vi.advanceTimersByTime(PERSIST_INTERVAL_MS);
    expect(saved[saved.length - 1]).toEqual(shown[shown.length - 1].json);
    const writes = saved.length;
    vi.advanceTimersByTime(5 * PERSIST_INTERVAL_MS);
    expect(saved).toHaveLength(writes); // nothing new shown: nothing written
  });

  it('does not overwrite a set the person opened meanwhile', () => {
    const { state, saved, follower } = host();
    follower.follow('e0', [prompt, act(2)], false);
    vi.advanceTimersByTime(1);
    expect(saved).toHaveLength(1);
    follower.follow('e0', [prompt, act(2), obs], false);
    vi.advanceTimersByTime(MIN_INTERVAL_MS);
    state.source = { kind: 'file', name: 'mine.json' }; // opened (and kept) by the person
    vi.advanceTimersByTime(2 * PERSIST_INTERVAL_MS);
    expect(saved).toHaveLength(1);
  });

  it('keeps the selected target while the same episode grows', () => {
    const { state, shown, follower } = host();
    follower.follow('e0', [prompt, act(2)], false);
    vi.advanceTimersByTime(0);
    state.selectedTarget = 4;
    follower.follow('e0', [prompt, act(2), obs], false);
    follower.follow('e1', [prompt, act(2)], false);
    vi.advanceTimersByTime(MIN_INTERVAL_MS);
    expect(shown[1].options.target).toBeNull(); // another episode: its own default target
    follower.follow('e1', [prompt, act(2), obs], false);
    state.selectedTarget = 5;
    vi.advanceTimersByTime(MIN_INTERVAL_MS);
    expect(shown[2].options.target).toBe(5);
  });

  it('cancel drops the update waiting to be shown', () => {
    const { shown, follower } = host();
    follower.follow('e0', [prompt, act(2)], false);
    vi.advanceTimersByTime(0);
    follower.follow('e0', [prompt, act(2), obs], false);
    follower.cancel();
    vi.advanceTimersByTime(5 * MIN_INTERVAL_MS);
    expect(shown).toHaveLength(1);
    // Following again: the next message updates the views even without a structural change.
    follower.follow('e0', [prompt, act(2), obs], false);
    vi.advanceTimersByTime(0);
    expect(shown).toHaveLength(2);
  });
});
