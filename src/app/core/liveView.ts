// The episode being played, shown in the inspection views (staircase, tree, inspector). The partial
// rollout is a valid docs/rollout-format.md rollout at every point, so it is shown as any rollout the page holds
// as JSON (`showRollout`: validated and derived on the main thread, one store update, no worker).
// The views follow the episode's structure: a new action, observation or edit is an update, a
// token of the action being decoded is not (the live panel streams those). Each update re-renders
// the views, so there is at most one per MIN_INTERVAL_MS, the newest state winning.
// Every episode opens under one name, LIVE_SOURCE, and the newest state shown is kept in IndexedDB
// at most once per PERSIST_INTERVAL_MS (and within that time of the last update): the URL names the
// live episode whichever one plays, so a reload reopens it without a write per update.
import { ROLLOUT_FORMAT, type EventJson, type RolloutJson } from '../../rollout/format';
import type { SourceRef } from '../url/schema';
import type { ViewData } from './viewData';

export const LIVE_SOURCE: SourceRef = { kind: 'file', name: 'live-episode.json' };
export const MIN_INTERVAL_MS = 1000;
export const PERSIST_INTERVAL_MS = 10_000;

export function liveRolloutJson(id: string, events: readonly EventJson[]): RolloutJson {
  return { format: ROLLOUT_FORMAT, id, vocab: 272, tokenizer: 'byte', meta: { live: true }, events: events as EventJson[] };
}

export function isLiveSource(source: SourceRef | null): boolean {
  return source?.kind === LIVE_SOURCE.kind && source.name === LIVE_SOURCE.name;
}

export interface LiveFollower {
  /** The episode's events so far (every live message): the views update when its structure changed. */
  follow(id: string, events: readonly EventJson[], done: boolean): void;
  /** Drops the update waiting to be shown; what the views show stays (and is still kept). */
  cancel(): void;
}

/** What the follower reads of the store, and how it shows a rollout there. */
export interface LiveHost {
  view: ViewData | null;
  selectedTarget: number | null;
  source: SourceRef | null;
  showRollout(json: RolloutJson, source: SourceRef, options: { target: number | null; persist: false }): boolean;
}

/** `save` keeps the shown episode as the last opened set (IndexedDB); `now` is the clock (tests set theirs). */
export function createLiveFollower(get: () => LiveHost, save: (json: RolloutJson) => Promise<void>, now: () => number = () => performance.now()): LiveFollower {
  /** What the views were last given: an update is due when the episode or its event count changes. */
  let given = { id: '', events: 0 };
  let pending: RolloutJson | null = null;
  let showTimer: ReturnType<typeof setTimeout> | null = null;
  let lastShown = -Infinity;
  /** The newest state shown and not kept yet. */
  let unsaved: RolloutJson | null = null;
  let saveTimer: ReturnType<typeof setTimeout> | null = null;
  let lastSaved = -Infinity;

  const saveNewest = () => {
    saveTimer = null;
    const json = unsaved;
    unsaved = null;
    // Something else opened since (a file, a batch rollout) is the last opened set now.
    if (!json || !isLiveSource(get().source)) return;
    lastSaved = now();
    void save(json);
  };

  const showPending = () => {
    showTimer = null;
    // The interval counts from when the last update was drawn, which may be later than planned.
    const wait = lastShown + MIN_INTERVAL_MS - now();
    if (wait > 0) {
      showTimer = setTimeout(showPending, wait);
      return;
    }
    const json = pending;
    pending = null;
    if (!json) return;
    const state = get();
    const keep = state.view?.rollout.id === json.id ? state.selectedTarget : null;
    if (!state.showRollout(json, LIVE_SOURCE, { target: keep, persist: false })) return;
    // Deriving the rollout took time, and the views draw after this task (on a loaded machine, a
    // good part of a second): the next update waits a whole interval from the frame that shows this one.
    lastShown = now();
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => (lastShown = now()));
    unsaved = json;
    if (saveTimer === null) saveTimer = setTimeout(saveNewest, Math.max(0, lastSaved + PERSIST_INTERVAL_MS - now()));
  };

  return {
    follow(id, events, done) {
      if (!done && id === given.id && events.length === given.events) return; // a token of the action being decoded
      given = { id, events: events.length };
      if (!events.some((e) => e.op === 'append' && e.role === 'act')) return; // nothing to inspect yet
      pending = liveRolloutJson(id, events);
      showTimer ??= setTimeout(showPending, Math.max(0, lastShown + MIN_INTERVAL_MS - now()));
    },
    cancel() {
      pending = null;
      if (showTimer !== null) clearTimeout(showTimer);
      showTimer = null;
      given = { id: '', events: 0 };
    },
  };
}
